// dashboards/ checked against the real things: promtool validates the scrape config and runs the
// alert rules' unit tests; then scripts/run starts the four services and a real Prometheus (its
// --prometheus option, the way a user watches a run), and every query of every Grafana panel, and
// every metric an alert rule reads, must return data from what that Prometheus scraped. The
// pipeline's main rates (games, positions, inserts, samples trained) must be moving.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "tests/ipc/test_util.h"
#include "tests/services/http_get.h"
#include "tests/services/scripted_run.h"

namespace az::dashboards {
namespace {

namespace fs = std::filesystem;
using ipc::testing::ChildProcess;
using ipc::testing::HttpBody;
using ipc::testing::HttpGet;
using ipc::testing::ScriptedRun;
using ipc::testing::TempDir;
using ipc::testing::WaitFor;
using ::testing::HasSubstr;

const std::string kDashboards = std::string(AZ_SOURCE_DIR) + "/dashboards";

std::string ReadFile(const std::string& path) { return ipc::testing::ReadWholeFile(path); }

// Runs a program to completion; its exit code, with stdout and stderr in *output.
int RunToEnd(const std::vector<std::string>& argv, const std::string& scratch,
             std::string* output) {
  const std::string path = scratch + "/command.out";
  ChildProcess child(argv, path, path);
  const int code = child.Wait();
  *output = ReadFile(path);
  return code;
}

std::string Which(const std::string& program) {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
    const std::string path = std::string(dir) + "/" + program;
    if (fs::exists(path)) return path;
  }
  return "";
}

std::vector<nlohmann::json> Dashboards() {
  std::vector<nlohmann::json> dashboards;
  for (const fs::directory_entry& entry : fs::directory_iterator(kDashboards + "/grafana")) {
    if (entry.path().extension() == ".json") {
      dashboards.push_back(nlohmann::json::parse(ReadFile(entry.path().string())));
    }
  }
  return dashboards;
}

// Every query of a dashboard's panels, with Grafana's variables as Grafana expands them when the
// user picks "All" runs and Prometheus scrapes every 5 s ($__rate_interval = 4 scrape intervals).
struct PanelQuery {
  std::string panel;
  std::string expr;
};
std::vector<PanelQuery> PanelQueries(const nlohmann::json& dashboard) {
  std::vector<PanelQuery> queries;
  for (const nlohmann::json& panel : dashboard["panels"]) {
    if (panel["type"] == "row") continue;
    for (const nlohmann::json& target : panel["targets"]) {
      std::string expr = target["expr"];
      expr = std::regex_replace(expr, std::regex(R"(\$__rate_interval)"), "20s");
      expr = std::regex_replace(expr, std::regex(R"(\$run)"), ".*");
      queries.push_back({panel["title"], expr});
    }
  }
  return queries;
}

std::string UrlEncode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

TEST(DashboardsTest, PromtoolAcceptsTheScrapeConfigAndTheAlertRulesPassTheirUnitTests) {
  const std::string promtool = Which("promtool");
  ASSERT_FALSE(promtool.empty()) << "promtool is missing: scripts/bootstrap installs prometheus";
  TempDir dir;
  std::string output;
  EXPECT_EQ(RunToEnd({promtool, "check", "config", kDashboards + "/prometheus/prometheus.yml"},
                     dir.path(), &output),
            0)
      << output;
  EXPECT_EQ(RunToEnd({promtool, "check", "rules", kDashboards + "/prometheus/alerts.yml"},
                     dir.path(), &output),
            0)
      << output;
  // The rules fire on the series they should, after the time they should, and not otherwise.
  EXPECT_EQ(RunToEnd({promtool, "test", "rules", kDashboards + "/prometheus/alerts_test.yml"},
                     dir.path(), &output),
            0)
      << output;
  EXPECT_THAT(output, HasSubstr("SUCCESS"));
}

TEST(DashboardsTest, GrafanaDashboardsAreWellFormed) {
  const std::vector<nlohmann::json> dashboards = Dashboards();
  ASSERT_FALSE(dashboards.empty());
  std::set<std::string> uids;
  for (const nlohmann::json& dashboard : dashboards) {
    EXPECT_TRUE(uids.insert(dashboard["uid"].get<std::string>()).second) << dashboard["uid"];
    std::set<int> ids;
    int queries = 0;
    for (const nlohmann::json& panel : dashboard["panels"]) {
      const std::string title = panel["title"];
      EXPECT_TRUE(ids.insert(panel["id"].get<int>()).second) << title;
      const nlohmann::json& grid = panel["gridPos"];
      EXPECT_LE(grid["x"].get<int>() + grid["w"].get<int>(), 24) << title;
      if (panel["type"] == "row") continue;
      // The data source is the dashboard's variable, so it works whatever the user named theirs.
      EXPECT_EQ(panel["datasource"]["uid"], "${datasource}") << title;
      ASSERT_FALSE(panel["targets"].empty()) << title;
      for (const nlohmann::json& target : panel["targets"]) {
        EXPECT_FALSE(target["expr"].get<std::string>().empty()) << title;
        ++queries;
      }
    }
    EXPECT_GT(queries, 40);
  }
}

class DashboardsOnARunningPipelineTest : public ::testing::Test {
 protected:
  // A free TCP port on localhost (bound, read, released).
  static int FreePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    AZ_CHECK(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    AZ_CHECK(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    ::close(fd);
    return ntohs(address.sin_port);
  }

  // GET on the Prometheus API; the "data" member of a successful answer, else null.
  nlohmann::json Api(const std::string& target) const {
    const std::string body = HttpBody(HttpGet(prometheus_port_, target));
    const nlohmann::json answer = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (!answer.is_object() || answer.value("status", "") != "success") return nullptr;
    return answer["data"];
  }

  // An instant query's result vector; null when Prometheus refused the query.
  nlohmann::json Query(const std::string& expr) const {
    const nlohmann::json data = Api("/api/v1/query?query=" + UrlEncode(expr));
    return data.is_null() ? data : data["result"];
  }

  TempDir dir_;
  std::string run_dir_ = dir_.path() + "/run";
  int prometheus_port_ = FreePort();
};

TEST_F(DashboardsOnARunningPipelineTest, EveryPanelAndAlertQueryHasDataFromTheRealServices) {
  ASSERT_FALSE(Which("prometheus").empty()) << "scripts/bootstrap installs prometheus";
  ScriptedRun run(run_dir_,
                  {"--preset", "tiny", "--forever", "--metrics-ports", "auto", "--no-arena",
                   "--progress-every", "5", "--prometheus", std::to_string(prometheus_port_)});
  ASSERT_TRUE(run.started());
  const auto limit = std::chrono::seconds(150);

  // Prometheus finds the four services through the targets file scripts/run writes from their
  // discovery records, and scrapes them all.
  ASSERT_TRUE(WaitFor(
      [&] {
        const nlohmann::json up = Query("up{job=\"alphazero\"} == 1");
        return up.is_array() && up.size() == 4;
      },
      limit))
      << run.Output() << run.RunFile("logs/prometheus.log")
      << run.RunFile("prometheus/targets/pipeline.json");
  const nlohmann::json services = Query("up{job=\"alphazero\"}");
  std::set<std::string> names;
  for (const nlohmann::json& series : services) names.insert(series["metric"]["service"]);
  EXPECT_EQ(names, (std::set<std::string>{"evaluator", "learner", "replay", "selfplay-0"}));

  // Enough scrapes for the panels' 20 s rates, and a learner that has trained.
  ASSERT_TRUE(WaitFor(
      [&] {
        const nlohmann::json ready = Query(
            "min(count_over_time(up{job=\"alphazero\"}[1m])) >= 6 and on() "
            "sum(increase(az_learner_steps_total[1m])) > 0");
        return ready.is_array() && !ready.empty();
      },
      limit))
      << run.Output();

  // The targets' labels (service, role, run) clash with no label of the services' own metrics:
  // Prometheus would rename the metric's label to exported_<name>, and a query by it (the loss
  // panel's `by (component)`) would silently merge its series.
  const nlohmann::json labels = Api("/api/v1/labels");
  ASSERT_TRUE(labels.is_array());
  for (const nlohmann::json& label : labels) {
    EXPECT_FALSE(label.get<std::string>().starts_with("exported_")) << label;
  }
  EXPECT_EQ(Query("az_learner_loss").size(), 3u);  // policy, value, total

  // Every panel query is valid PromQL and finds the series it draws.
  const std::vector<nlohmann::json> dashboards = Dashboards();
  ASSERT_FALSE(dashboards.empty());
  for (const nlohmann::json& dashboard : dashboards) {
    for (const PanelQuery& query : PanelQueries(dashboard)) {
      const nlohmann::json result = Query(query.expr);
      if (!result.is_array()) {
        ADD_FAILURE() << query.panel << ": Prometheus refused " << query.expr;
        continue;
      }
      EXPECT_FALSE(result.empty()) << query.panel << ": no data for " << query.expr;
    }
  }

  // Every metric an alert rule reads is one the services export.
  const std::string rules = ReadFile(kDashboards + "/prometheus/alerts.yml");
  const std::regex metric(R"(\b(az_[a-z0-9_]+|up)\b(?=[\[{ ]))");
  int alert_metrics = 0;
  for (std::sregex_iterator it(rules.begin(), rules.end(), metric), end; it != end; ++it) {
    const std::string name = (*it)[1];
    const nlohmann::json result = Query("count({__name__=\"" + name + "\"})");
    EXPECT_TRUE(result.is_array() && !result.empty()) << "alerts.yml reads " << name;
    ++alert_metrics;
  }
  EXPECT_GE(alert_metrics, 9);

  // The pipeline's metrics are moving.
  for (const char* moving : {"sum(rate(az_selfplay_games_total[30s])) > 0",
                             "sum(rate(az_evaluator_positions_evaluated_total[30s])) > 0",
                             "sum(rate(az_replay_sampled_records_total[30s])) > 0",
                             "sum(rate(az_learner_samples_trained_total[30s])) > 0",
                             "max(az_learner_model_version) >= 1"}) {
    const nlohmann::json result = Query(moving);
    EXPECT_TRUE(result.is_array() && !result.empty()) << moving;
  }

  // Stopping the run stops its Prometheus too.
  EXPECT_EQ(run.Stop(std::chrono::seconds(180)), 0) << run.Output();
  EXPECT_THAT(run.Output(), HasSubstr("Prometheus on http://localhost:"));
  EXPECT_EQ(HttpGet(prometheus_port_, "/-/healthy"), "");
}

}  // namespace
}  // namespace az::dashboards
