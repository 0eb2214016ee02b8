#include "services/common/eval_protocol.h"

namespace az::service {

std::string EvalChannelName(GameKind game) { return "eval-" + std::string(GameKindName(game)); }

Status ValidateGameRecord(const encoding::PositionRecord& record) {
  return encoding::ValidateRecord(record);
}

Status ValidateGameRecord(const games::ConnectFourRecord& record) {
  return games::ConnectFourPosition::FromRecord(record).status();
}

}  // namespace az::service
