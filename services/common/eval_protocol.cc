#include "services/common/eval_protocol.h"

namespace az::service {

std::string EvalChannelName(GameKind game) { return "eval-" + std::string(GameKindName(game)); }

}  // namespace az::service
