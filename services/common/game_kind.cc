#include "services/common/game_kind.h"

#include <string>

namespace az::service {

Result<GameKind> ParseGameKind(std::string_view name) {
  if (name == "chess") return GameKind::kChess;
  if (name == "connect4") return GameKind::kConnectFour;
  return InvalidArgument("unknown game \"" + std::string(name) + "\" (chess or connect4)");
}

std::string_view GameKindName(GameKind kind) {
  switch (kind) {
    case GameKind::kChess: return "chess";
    case GameKind::kConnectFour: return "connect4";
  }
  return "unknown";
}

}  // namespace az::service
