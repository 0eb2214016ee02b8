// azctl learner ...: the learner's own subcommands (docs/learner.md, "Control").
//
//   azctl learner status [--json]          step, losses, beta, lr, samples/s, model, checkpoint,
//                                          solver benchmark, collapse warning
//   azctl learner checkpoint [--wait S]    write a checkpoint now and print where

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string>

#include "services/azctl/azctl.h"

namespace az::azctl {
namespace {

std::string Number(const nlohmann::json& body, const char* key, int digits = 4) {
  if (!body.contains(key) || !body[key].is_number()) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, body[key].get<double>());
  return text;
}

std::string Text(const nlohmann::json& body, const char* key) {
  if (!body.contains(key)) return "-";
  return body[key].is_string() ? body[key].get<std::string>() : body[key].dump();
}

void PrintStatus(const ipc::Reply& reply) {
  const nlohmann::json& b = reply.body;
  std::cout << "learner: " << Text(b, "state") << " (" << Text(b, "activity") << "), pid "
            << Text(b, "pid") << ", up " << FormatDuration(b.value("uptime_seconds", 0.0))
            << ", metrics port " << Text(b, "metrics_port") << "\n";
  std::cout << "network:    " << Text(b, "game") << " " << Text(b, "net") << " on "
            << Text(b, "device") << "\n";
  std::cout << "step:       " << Text(b, "step") << " (batch " << Text(b, "batch") << ", "
            << Number(b, "samples_per_second") << " samples/s, " << Text(b, "samples_trained")
            << " trained)\n";
  std::cout << "loss:       " << Number(b, "loss") << " (policy " << Number(b, "policy_loss")
            << ", value " << Number(b, "value_loss") << "); average " << Number(b, "loss_avg")
            << " (policy " << Number(b, "policy_loss_avg") << ", value "
            << Number(b, "value_loss_avg") << "); first steps " << Number(b, "initial_loss")
            << "\n";
  std::cout << "optimizer:  lr " << Number(b, "lr") << ", grad norm " << Number(b, "grad_norm")
            << ", beta " << Number(b, "beta") << "\n";
  std::cout << "samples:    " << Text(b, "malformed_samples") << " malformed, "
            << Text(b, "skipped_nonfinite") << " non-finite batches skipped, "
            << Text(b, "rollbacks") << " rollbacks\n";
  std::cout << "model:      " << Text(b, "model_version") << " at " << Text(b, "model_path")
            << "\n";
  std::cout << "checkpoint: " << Text(b, "checkpoint_path") << " (step "
            << Text(b, "checkpoint_step") << ")\n";
  // Games with a solver: the newest model's score against it, and the run's best.
  if (b.contains("benchmark") && b["benchmark"].is_object()) {
    const nlohmann::json& m = b["benchmark"];
    char line[160];
    std::snprintf(line, sizeof line,
                  "benchmark:  model %s keeps the solver's value in %.1f%% (non-trivial %.1f%%), "
                  "best %.1f%% (model %s)\n",
                  Text(m, "model_version").c_str(), 100 * m.value("share", 0.0),
                  100 * m.value("nontrivial_share", 0.0), 100 * m.value("best_share", 0.0),
                  Text(m, "best_model_version").c_str());
    std::cout << line;
    // By the positions' solver value: "            win 92.1% of 1254, draw 71.5% of 246".
    if (m.contains("values") && m["values"].is_array() && !m["values"].empty()) {
      std::cout << "           ";
      const char* separator = " ";
      for (const nlohmann::json& v : m["values"]) {
        std::snprintf(line, sizeof line, "%s%s %.1f%% of %s", separator,
                      Text(v, "value").c_str(), 100 * v.value("share", 0.0),
                      Text(v, "positions").c_str());
        std::cout << line;
        separator = ", ";
      }
      std::cout << "\n";
    }
  }
  if (b.value("collapse_suspected", false)) {
    std::cout << "WARNING:    " << Text(b, "collapse_warning") << "\n";
  }
}

void AddLearnerCommands(CLI::App& app, Context& context) {
  // Replaces the generic `status` with one that lays the learner's fields out.
  try {
    app.remove_subcommand(app.get_subcommand("status"));
  } catch (const CLI::OptionNotFound&) {
  }
  CLI::App* status = app.add_subcommand("status", "step, losses, beta, lr, samples/s, model");
  AddGlobalOptions(*status, context.options);
  status->callback([&context] {
    context.SetAction([&context] { return context.Run({{"cmd", "status"}}, {}, PrintStatus); });
  });

  CLI::App* checkpoint =
      app.add_subcommand("checkpoint", "write a checkpoint (model + optimizer + step) now");
  AddGlobalOptions(*checkpoint, context.options);
  double& wait = context.Keep<double>(120);
  checkpoint->add_option("--wait", wait, "seconds to wait for it")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  checkpoint->callback([&context, &wait] {
    context.SetAction([&context, &wait] {
      // Written between two steps: the answer comes after the step in hand.
      context.options.timeout_seconds = std::max(context.options.timeout_seconds, wait);
      context.options.attempts = 1;
      return context.Run({{"cmd", "checkpoint"}}, {}, [](const ipc::Reply& reply) {
        std::cout << "checkpoint " << Text(reply.body, "path") << " at step "
                  << Text(reply.body, "step") << " (model " << Text(reply.body, "model_version")
                  << ") in " << Number(reply.body, "seconds") << " s\n";
      });
    });
  });
}

}  // namespace

AZCTL_SERVICE_COMMANDS("learner", AddLearnerCommands);

}  // namespace az::azctl
