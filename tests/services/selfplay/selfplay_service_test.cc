// az-selfplay as a real child process with a real az-evaluator in a temporary run directory: the
// games' samples are read back from the run's sample ring and checked one by one, and game by game
// (plies in order, each position one move after the previous, outcomes alternating with the side
// to move).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <vector>

#include "core/encoding/position_record.h"
#include "core/games/connect4/connect_four.h"
#include "core/sample/chess_sample.h"
#include "core/games/connect4/connect_four_sample.h"
#include "ipc/discovery.h"
#include "services/replay/sample_ring.h"
#include "tests/services/evaluator/service_test_util.h"
#include "tests/services/http_get.h"

namespace az::service::testing {
namespace {

using ipc::testing::Scrape;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::vector<std::string> Args(const RunDir& run, const std::string& game,
                              std::vector<std::string> extra) {
  std::vector<std::string> args = {"--run-dir",      run.path(), "--game",         game,
                                   "--metrics-port", "0",        "--log-interval", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

template <typename Sample>
shm::Ring SampleRing(const RunDir& run, std::uint64_t capacity = 4096) {
  Result<shm::Ring> ring = replayd::OpenSampleRing(
      {.run_dir = run.path(), .record_bytes = sizeof(Sample), .capacity = capacity});
  AZ_CHECK(ring.ok(), ring.status().ToString());
  return std::move(ring).value();
}

// Takes every record now in the ring.
template <typename Sample>
void Drain(shm::Ring& ring, std::vector<Sample>& out) {
  std::vector<Sample> buffer(64);
  for (;;) {
    const std::size_t n = ring.TryPop(std::as_writable_bytes(std::span<Sample>(buffer)));
    if (n == 0) return;
    out.insert(out.end(), buffer.begin(), buffer.begin() + n);
  }
}

template <typename Sample>
std::map<std::uint64_t, std::vector<Sample>> ByGame(std::vector<Sample> samples) {
  std::map<std::uint64_t, std::vector<Sample>> games;
  for (const Sample& s : samples) games[s.game_id].push_back(s);
  for (auto& [id, game] : games) {
    std::sort(game.begin(), game.end(),
              [](const Sample& a, const Sample& b) { return a.ply < b.ply; });
  }
  return games;
}

// z alternates with the side to move: z_p = z_last * (-1)^(L-1-p).
template <typename Sample>
void ExpectOutcomesAlternate(const std::vector<Sample>& game) {
  const float last = game.back().z;
  for (const Sample& s : game) {
    const bool same_side = (game.back().ply - s.ply) % 2 == 0;
    EXPECT_EQ(s.z, same_side ? last : -last) << "ply " << s.ply;
  }
}

void CheckConnectFourGames(const std::vector<sample::ConnectFourSample>& samples,
                           std::size_t expected_games, std::uint32_t model_version) {
  for (const auto& s : samples) {
    const Status status = sample::ValidateConnectFourSample(s);
    ASSERT_TRUE(status.ok()) << status.ToString();
    EXPECT_EQ(s.model_version, model_version);
  }
  const auto games = ByGame(samples);
  EXPECT_EQ(games.size(), expected_games);
  for (const auto& [id, game] : games) {
    for (std::size_t p = 0; p < game.size(); ++p) {
      ASSERT_EQ(game[p].ply, p) << "game " << id << " has a hole or a repeat";
    }
    // Each position is the previous one after a move the search visited.
    for (std::size_t p = 0; p + 1 < game.size(); ++p) {
      const games::ConnectFourPosition before =
          *games::ConnectFourPosition::FromRecord(game[p].position);
      bool found = false;
      for (int column = 0; column < games::kConnectFourWidth; ++column) {
        if (game[p].policy[column] == 0) continue;
        games::ConnectFourPosition after = before;
        after.Play(column);
        found |= after.ToRecord() == game[p + 1].position;
      }
      EXPECT_TRUE(found) << "game " << id << " ply " << p + 1
                         << " does not follow from a visited move";
    }
    // A game shorter than the board was won by its last move: +1 for the side that made it.
    const float last = game.back().z;
    if (game.size() < static_cast<std::size_t>(games::kConnectFourCells)) {
      EXPECT_EQ(last, 1.0f) << "game " << id;
    } else {
      EXPECT_TRUE(last == 1.0f || last == 0.0f) << "game " << id;
    }
    ExpectOutcomesAlternate(game);
  }
}

// Polls the worker's status until `condition` holds.
bool WaitForWorker(const RunDir& run, const std::function<bool(const nlohmann::json&)>& condition,
                   std::chrono::milliseconds limit = seconds(60)) {
  return WaitFor(
      [&] {
        ipc::Client client = ControlClient(run, "selfplay-0");
        Result<ipc::Reply> reply = client.Call(
            "status", {}, {}, {.attempt_timeout = milliseconds(500), .max_attempts = 1});
        return reply.ok() && condition(reply->body);
      },
      limit);
}

TEST(SelfPlayServiceTest, ConnectFourGamesFinishAndPushValidSamplesToTheRing) {
  RunDir run;
  WriteNetwork(run.File("c4.azw"), TinyNet(nn::NetConfig::ConnectFour()), 3, 7);
  // The worker starts first and waits for the evaluator's channel.
  Service worker(
      run, "az-selfplay", "selfplay",
      Args(run, "connect4", {"--games", "6", "--simulations", "16", "--max-games", "10"}));
  ASSERT_TRUE(WaitForWorker(run, [](const nlohmann::json& s) {
    return s["phase"] == "connecting";
  })) << worker.Log();
  Service evaluator(run, "az-evaluator", "evaluator",
                    {"--run-dir", run.path(), "--game", "connect4", "--model", run.File("c4.azw"),
                     "--metrics-port", "-1"});
  ASSERT_EQ(worker.WaitExit(), 0) << worker.Log();
  EXPECT_NE(worker.Log().find("waiting for the eval channel"), std::string::npos);
  EXPECT_NE(worker.Log().find("stopping: 10 games"), std::string::npos) << worker.Log();
  shm::Ring ring = SampleRing<sample::ConnectFourSample>(run);
  std::vector<sample::ConnectFourSample> samples;
  Drain(ring, samples);
  CheckConnectFourGames(samples, 10, 7);
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

TEST(SelfPlayServiceTest, ChessGamesPushValidSamplesOfLegalMoves) {
  RunDir run;
  WriteNetwork(run.File("chess.azw"), TinyNet(nn::NetConfig::ChessSmall()), 3, 2);
  Service evaluator(run, "az-evaluator", "evaluator",
                    {"--run-dir", run.path(), "--game", "chess", "--model", run.File("chess.azw"),
                     "--metrics-port", "-1"});
  Service worker(
      run, "az-selfplay", "selfplay",
      Args(run, "chess",
           {"--games", "3", "--simulations", "8", "--max-plies", "10", "--max-games", "3"}));
  ASSERT_EQ(worker.WaitExit(), 0) << worker.Log();
  shm::Ring ring = SampleRing<sample::ChessSample>(run);
  std::vector<sample::ChessSample> samples;
  Drain(ring, samples);
  for (const sample::ChessSample& s : samples) {
    ASSERT_TRUE(sample::ValidateSample(s).ok()) << sample::ValidateSample(s).ToString();
    ASSERT_TRUE(sample::CheckPolicyIsLegal(s).ok()) << sample::CheckPolicyIsLegal(s).ToString();
    EXPECT_EQ(s.model_version, 2u);
  }
  const auto games = ByGame(samples);
  EXPECT_EQ(games.size(), 3u);
  for (const auto& [id, game] : games) {
    // Chess's default opening: 4-8 random plies, not recorded; then every ply to the end.
    EXPECT_GE(game.front().ply, 4u);
    EXPECT_LE(game.front().ply, 8u);
    EXPECT_LE(game.back().ply, 9u);
    for (std::size_t p = 0; p < game.size(); ++p) ASSERT_EQ(game[p].ply, game.front().ply + p);
    // The record of ply p + 1 carries ply p's board as its most recent history.
    for (std::size_t p = 0; p + 1 < game.size(); ++p) {
      EXPECT_EQ(std::memcmp(&game[p + 1].position.boards[1], &game[p].position.boards[0],
                            sizeof(encoding::PackedBoard)),
                0)
          << "game " << id << " ply " << p + 1;
    }
    // Cut off at 10 plies: a draw, unless a mate came first.
    if (game.back().ply == 9) {
      EXPECT_EQ(game.back().z, 0.0f);
    }
    ExpectOutcomesAlternate(game);
  }
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

// The number N of "stopping: N games" in a worker's log; -1 when absent.
int GamesAtStop(const std::string& log) {
  const std::size_t at = log.find("stopping: ");
  return at == std::string::npos ? -1 : std::atoi(log.c_str() + at + 10);
}

TEST(SelfPlayServiceTest, RecoversWhenTheEvaluatorIsKilledAndRestarted) {
  RunDir run;
  WriteNetwork(run.File("c4.azw"), TinyNet(nn::NetConfig::ConnectFour()), 3, 5);
  const std::vector<std::string> evaluator_args = {"--run-dir",      run.path(), "--game",
                                                   "connect4",       "--model",  run.File("c4.azw"),
                                                   "--metrics-port", "-1"};
  auto evaluator = std::make_unique<Service>(run, "az-evaluator", "evaluator", evaluator_args);
  // Plays until stopped; the test takes the samples out of the ring as the daemon would.
  Service worker(
      run, "az-selfplay", "selfplay",
      Args(run, "connect4", {"--games", "8", "--simulations", "24", "--eval-timeout", "60"}));
  shm::Ring ring = SampleRing<sample::ConnectFourSample>(run);
  std::vector<sample::ConnectFourSample> samples;
  int finished = 0;
  const auto games_reach = [&](int games) {
    return WaitForWorker(run, [&](const nlohmann::json& s) {
      Drain(ring, samples);
      finished = s["games_finished"].get<int>();
      return finished >= games;
    });
  };
  ASSERT_TRUE(games_reach(2)) << worker.Log();
  EXPECT_EQ(ControlClient(run, "selfplay-0").Call("status")->body["phase"], "playing");

  // SIGKILL: the requests it held are lost. The worker sees that the evaluator is gone (its
  // identity in the channel's header is dead) and resubmits, long before its 60 s eval timeout:
  // the counters below say which path it took (no wall-clock bound: the box may be loaded).
  evaluator->process().Kill();
  ASSERT_TRUE(
      WaitFor([&] { return worker.Log().find("resubmitted") != std::string::npos; }, seconds(30)))
      << worker.Log();
  EXPECT_NE(worker.Log().find("an evaluator stopped serving"), std::string::npos) << worker.Log();
  ASSERT_TRUE(games_reach(0));
  const int before_restart = finished;
  evaluator = std::make_unique<Service>(run, "az-evaluator", "evaluator2", evaluator_args);
  ASSERT_TRUE(games_reach(before_restart + 4)) << worker.Log();
  const nlohmann::json status = ControlClient(run, "selfplay-0").Call("status")->body;
  EXPECT_GE(status["evaluator_losses"].get<int>(), 1);
  EXPECT_EQ(status["eval_timeouts"].get<int>(), 0);
  ASSERT_EQ(worker.Terminate(), 0) << worker.Log();
  Drain(ring, samples);
  // Every game the worker finished, before and after the restart, is in the ring, whole.
  const int games = GamesAtStop(worker.Log());
  ASSERT_GE(games, before_restart + 4) << worker.Log();
  CheckConnectFourGames(samples, static_cast<std::size_t>(games), 5);
  EXPECT_EQ(evaluator->Terminate(), 0) << evaluator->Log();
}

TEST(SelfPlayServiceTest, WaitsWhileTheSampleRingIsFullThenCarriesOn) {
  RunDir run;
  // The ring exists before the worker (as when the replay daemon made it) and holds 8 samples.
  shm::Ring ring = SampleRing<sample::ConnectFourSample>(run, 8);
  Service evaluator(run, "az-evaluator", "evaluator",
                    {"--run-dir", run.path(), "--game", "connect4", "--metrics-port", "-1"});
  Service worker(
      run, "az-selfplay", "selfplay",
      Args(run, "connect4",
           {"--games", "2", "--simulations", "8", "--max-games", "4", "--push-timeout", "0.2"}));
  ASSERT_TRUE(
      WaitFor([&] { return worker.Log().find("sample ring has been full") != std::string::npos; },
              seconds(60)))
      << worker.Log();
  ASSERT_FALSE(worker.process().Exited()) << "the worker waits rather than drops";
  // The "daemon" comes back: the worker finishes.
  std::vector<sample::ConnectFourSample> samples;
  ASSERT_TRUE(WaitFor(
      [&] {
        Drain(ring, samples);
        return worker.process().Exited();
      },
      seconds(60)))
      << worker.Log();
  EXPECT_EQ(worker.process().Wait(), 0) << worker.Log();
  Drain(ring, samples);
  CheckConnectFourGames(samples, 4, 0);
  EXPECT_NE(worker.Log().find("has room again"), std::string::npos) << worker.Log();
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

TEST(SelfPlayServiceTest, AnswersControlRequestsWhileWaitingAndShutsDownOnRequest) {
  RunDir run;
  // No evaluator: the worker waits for its channel and serves its control socket meanwhile.
  Service worker(run, "az-selfplay", "selfplay", Args(run, "connect4", {"--worker-id", "0"}));
  ASSERT_TRUE(WaitForWorker(run, [](const nlohmann::json& s) {
    return s["phase"] == "connecting";
  })) << worker.Log();
  ipc::Client control = ControlClient(run, "selfplay-0");
  const auto code_of = [&](nlohmann::json request) {
    Result<ipc::Reply> reply = control.Exchange(std::move(request));
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    return reply.ok() ? ipc::ReplyStatus(reply->body).code() : StatusCode::kInternal;
  };
  EXPECT_EQ(code_of({{"cmd", "no-such-command"}}), StatusCode::kNotFound);
  const nlohmann::json error = RawRequest(run, "selfplay-0", "{\"cmd\": 5}");
  EXPECT_EQ(error["error"]["code"], "INVALID_ARGUMENT") << error.dump();
  EXPECT_EQ(RawRequest(run, "selfplay-0", "not json")["ok"], false);
  EXPECT_EQ(code_of({{"cmd", "status"}}), StatusCode::kOk);
  // Its metrics endpoint serves the self-play families.
  const nlohmann::json status = control.Call("status")->body;
  EXPECT_EQ(status["worker_id"], 0);
  Result<std::vector<ipc::ServiceInfo>> services = ipc::ListServices(run.path());
  ASSERT_TRUE(services.ok());
  int port = 0;
  for (const ipc::ServiceInfo& info : *services) {
    if (info.service == "selfplay-0") port = info.metrics_port;
  }
  ASSERT_GT(port, 0);
  const std::string metrics = Scrape(port);
  EXPECT_NE(metrics.find("200 OK"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("az_selfplay_games_total"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("az_selfplay_eval_round_trip_seconds_bucket"), std::string::npos);
  EXPECT_NE(metrics.find("result=\"first_player_win\""), std::string::npos);
  ASSERT_TRUE(control.Call("shutdown").ok());
  EXPECT_EQ(worker.WaitExit(seconds(20)), 0) << worker.Log();
}

TEST(SelfPlayServiceTest, BadConfigurationsExitWithCode2AndSayWhy) {
  RunDir run;
  // A sample ring of Connect Four samples: a chess worker must not write into it.
  shm::Ring ring = SampleRing<sample::ConnectFourSample>(run, 8);
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {Args(run, "go", {}), "--game"},
      {Args(run, "connect4", {"--games", "2", "--groups", "4"}), "--groups"},
      {Args(run, "connect4", {"--sample-ring-capacity", "100"}), "power of two"},
      {Args(run, "chess", {}), "record"},
  };
  for (const Case& c : cases) {
    Service worker(run, "az-selfplay", "bad", c.args);
    EXPECT_EQ(worker.WaitExit(), 2) << worker.Log();
    EXPECT_NE(worker.Log().find(c.expected), std::string::npos) << worker.Log();
  }
}

}  // namespace
}  // namespace az::service::testing
