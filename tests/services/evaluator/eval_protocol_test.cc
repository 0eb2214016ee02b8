// The eval wire protocol: record layouts pinned to their version, requests and responses written
// and read back for both games, and every malformed request refused with its reason.

#include "services/common/eval_protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/movegen.h"
#include "core/encoding/move_index.h"
#include "core/encoding/position_record.h"
#include "core/games/connect4/connect_four.h"

namespace az::service {
namespace {

using Chess = games::Chess;
using ConnectFour = games::ConnectFour;

TEST(EvalProtocolTest, LayoutsArePinnedToTheirVersion) {
  EXPECT_EQ(kEvalProtocolVersion, 1);
  EXPECT_EQ(sizeof(EvalRequestHeader), 24u);
  EXPECT_EQ(offsetof(EvalRequestHeader, version), 4u);
  EXPECT_EQ(offsetof(EvalRequestHeader, game), 6u);
  EXPECT_EQ(offsetof(EvalRequestHeader, game_id), 8u);
  EXPECT_EQ(offsetof(EvalRequestHeader, num_moves), 16u);
  EXPECT_EQ(sizeof(EvalResponseHeader), 32u);
  EXPECT_EQ(offsetof(EvalResponseHeader, status), 6u);
  EXPECT_EQ(offsetof(EvalResponseHeader, game), 7u);
  EXPECT_EQ(offsetof(EvalResponseHeader, model_version), 8u);
  EXPECT_EQ(offsetof(EvalResponseHeader, wdl), 16u);
  EXPECT_EQ(offsetof(EvalResponseHeader, num_moves), 28u);
  // Chess: the 240-byte record and 218 u16 indices; Connect Four: 16 bytes and 7.
  EXPECT_EQ(sizeof(EvalRequest<Chess>), 704u);
  EXPECT_EQ(offsetof(EvalRequest<Chess>, record), 24u);
  EXPECT_EQ(offsetof(EvalRequest<Chess>, policy_indices), 264u);
  EXPECT_EQ(sizeof(EvalResponse<Chess>), 904u);
  EXPECT_EQ(offsetof(EvalResponse<Chess>, priors), 32u);
  EXPECT_EQ(sizeof(EvalRequest<ConnectFour>), 56u);
  EXPECT_EQ(offsetof(EvalRequest<ConnectFour>, policy_indices), 40u);
  EXPECT_EQ(sizeof(EvalResponse<ConnectFour>), 64u);
  const EvalRequestHeader request;
  const EvalResponseHeader response;
  EXPECT_EQ(std::memcmp(&request, "AZEQ", 4), 0);
  EXPECT_EQ(std::memcmp(&response, "AZEA", 4), 0);
  EXPECT_EQ(EvalChannelName(games::Chess::kId), "eval-chess");
  EXPECT_EQ(EvalChannelName(games::ConnectFour::kId), "eval-connect4");
}

// A chess leaf of the position after 1.e4 e5, with every legal move.
struct ChessLeaf {
  chess::Game game;
  encoding::PositionRecord record;
  std::vector<chess::Move> moves;
  std::vector<std::uint16_t> indices;
  mcts::Leaf<Chess> leaf;

  ChessLeaf() {
    EXPECT_TRUE(game.PlayUci("e2e4").ok());
    EXPECT_TRUE(game.PlayUci("e7e5").ok());
    record = encoding::MakeRecord(game);
    for (chess::Move m : chess::LegalMoves(game.position())) {
      moves.push_back(m);
      indices.push_back(static_cast<std::uint16_t>(encoding::MoveToIndex(game.position(), m)));
    }
    leaf = {&record, moves, indices};
  }
};

TEST(EvalProtocolTest, ChessRequestsAndResponsesRoundTrip) {
  const ChessLeaf leaf;
  std::vector<std::byte> slot(sizeof(EvalRequest<Chess>), std::byte{0xAB});
  WriteEvalRequest<Chess>(leaf.leaf, 42, slot);
  EvalRequest<Chess> request;
  ASSERT_TRUE(ReadEvalRequest<Chess>(slot, request).ok());
  EXPECT_EQ(request.header.game_id, 42u);
  EXPECT_EQ(request.header.num_moves, leaf.moves.size());
  EXPECT_EQ(std::memcmp(&request.record, &leaf.record, sizeof leaf.record), 0);
  for (std::size_t i = 0; i < leaf.indices.size(); ++i) {
    EXPECT_EQ(request.policy_indices[i], leaf.indices[i]);
  }
  for (std::size_t i = leaf.indices.size(); i < request.policy_indices.size(); ++i) {
    EXPECT_EQ(request.policy_indices[i], 0) << "unused entries are zeroed, not left over";
  }

  std::vector<float> priors(leaf.moves.size());
  for (std::size_t i = 0; i < priors.size(); ++i) priors[i] = static_cast<float>(i + 1);
  const float wdl[3] = {0.5f, 0.25f, 0.25f};
  std::vector<std::byte> answer(sizeof(EvalResponse<Chess>));
  WriteEvalResponse<Chess>(EvalStatus::kOk, 9, wdl, priors, answer);
  EvalResponseHeader header;
  ASSERT_TRUE(ReadEvalResponseHeader<Chess>(answer, static_cast<int>(priors.size()), header).ok());
  EXPECT_EQ(header.model_version, 9u);
  EXPECT_EQ(header.wdl, (std::array<float, 3>{0.5f, 0.25f, 0.25f}));
  std::vector<float> back(priors.size());
  CopyPriors<Chess>(answer, back);
  EXPECT_EQ(back, priors);
  // A response for another number of moves is refused.
  EXPECT_FALSE(
      ReadEvalResponseHeader<Chess>(answer, static_cast<int>(priors.size()) + 1, header).ok());
}

TEST(EvalProtocolTest, ConnectFourRequestsRoundTrip) {
  const games::ConnectFourPosition position = *games::ConnectFourPosition::FromMoves("4453");
  const games::ConnectFourRecord record = position.ToRecord();
  const games::ConnectFourMove moves[] = {{0}, {3}, {6}};
  const std::uint16_t indices[] = {0, 3, 6};
  const mcts::Leaf<ConnectFour> leaf{&record, moves, indices};
  std::vector<std::byte> slot(sizeof(EvalRequest<ConnectFour>));
  WriteEvalRequest<ConnectFour>(leaf, 7, slot);
  EvalRequest<ConnectFour> request;
  ASSERT_TRUE(ReadEvalRequest<ConnectFour>(slot, request).ok());
  EXPECT_EQ(request.record, record);
  EXPECT_EQ(request.header.num_moves, 3);
  EXPECT_EQ(request.policy_indices[2], 6);
  // A Connect Four answer that reports a failure carries no priors, whatever the move count.
  std::vector<std::byte> answer(sizeof(EvalResponse<ConnectFour>));
  WriteEvalResponse<ConnectFour>(EvalStatus::kEvaluationFailed, 1, {}, {}, answer);
  EvalResponseHeader header;
  ASSERT_TRUE(ReadEvalResponseHeader<ConnectFour>(answer, 3, header).ok());
  EXPECT_EQ(header.status, static_cast<std::uint8_t>(EvalStatus::kEvaluationFailed));
  // A chess answer is not a Connect Four answer.
  WriteEvalResponse<ConnectFour>(EvalStatus::kOk, 1, std::array<float, 3>{1, 0, 0},
                                 std::array<float, 3>{0.2f, 0.3f, 0.5f}, answer);
  answer[7] = std::byte{static_cast<unsigned char>(games::Chess::kId)};
  EXPECT_FALSE(ReadEvalResponseHeader<ConnectFour>(answer, 3, header).ok());
  // More priors than a response holds is refused even when the caller expects that many (the
  // fuzzer's find: CopyPriors would have read past the record).
  WriteEvalResponse<ConnectFour>(EvalStatus::kOk, 1, std::array<float, 3>{1, 0, 0},
                                 std::array<float, 3>{0.2f, 0.3f, 0.5f}, answer);
  const std::uint16_t too_many = 9;
  std::memcpy(answer.data() + offsetof(EvalResponseHeader, num_moves), &too_many, 2);
  const Status refused = ReadEvalResponseHeader<ConnectFour>(answer, 9, header);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("at most 7 fit"));
}

TEST(EvalProtocolTest, MalformedRequestsAreRefusedWithTheirReason) {
  const ChessLeaf leaf;
  std::vector<std::byte> slot(sizeof(EvalRequest<Chess>));
  WriteEvalRequest<Chess>(leaf.leaf, 1, slot);
  EvalRequest<Chess> good;
  ASSERT_TRUE(ReadEvalRequest<Chess>(slot, good).ok());
  struct Case {
    const char* name;
    void (*mutate)(EvalRequest<Chess>&);
    const char* expected;
    StatusCode code;
  };
  const Case cases[] = {
      {"magic", [](EvalRequest<Chess>& r) { r.header.magic = 0; }, "magic", StatusCode::kDataLoss},
      {"version", [](EvalRequest<Chess>& r) { r.header.version = 2; }, "version",
       StatusCode::kInvalidArgument},
      {"game",
       [](EvalRequest<Chess>& r) {
         r.header.game = static_cast<std::uint8_t>(games::ConnectFour::kId);
       },
       "game", StatusCode::kInvalidArgument},
      {"no moves", [](EvalRequest<Chess>& r) { r.header.num_moves = 0; }, "num_moves",
       StatusCode::kInvalidArgument},
      {"too many moves", [](EvalRequest<Chess>& r) { r.header.num_moves = 219; }, "num_moves",
       StatusCode::kInvalidArgument},
      {"index", [](EvalRequest<Chess>& r) { r.policy_indices[3] = 4672; }, "policy index",
       StatusCode::kInvalidArgument},
      {"record", [](EvalRequest<Chess>& r) { r.record.side_to_move = 7; }, "eval request",
       StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    EvalRequest<Chess> bad = good;
    c.mutate(bad);
    const Status status = ValidateEvalRequest(bad);
    EXPECT_EQ(status.code(), c.code) << c.name << ": " << status.ToString();
    EXPECT_NE(status.message().find(c.expected), std::string::npos)
        << c.name << ": " << status.ToString();
  }
  // A Connect Four record with a floating stone.
  EvalRequest<ConnectFour> c4{};
  c4.header.game = static_cast<std::uint8_t>(games::ConnectFour::kId);
  c4.header.num_moves = 1;
  c4.record.own = 1ull << 3;  // column 1, row 3, nothing below
  EXPECT_FALSE(ValidateEvalRequest(c4).ok());
  c4.record.own = 0;
  c4.record.opponent = 1;  // the first player's stone in column 1; the second player to move
  EXPECT_TRUE(ValidateEvalRequest(c4).ok()) << ValidateEvalRequest(c4).ToString();
}

}  // namespace
}  // namespace az::service
