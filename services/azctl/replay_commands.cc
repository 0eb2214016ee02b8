// azctl replay ...: the replay daemon's own subcommands (docs/replay.md, "azctl replay").
//
//   azctl replay status [--json]                       buffer, priorities, counters, limiter, ring
//   azctl replay sample --batch B --beta X [--json]     one draw per line: slot generation P weight
//   azctl replay update --slot S --generation G --priority P
//   azctl replay update --stdin                        "slot generation priority" per line
//   azctl replay insert-random N [--seed S]            N well-formed random records
//   azctl replay read SLOT...                          generation and priority of stored records
//   azctl replay snapshot [--wait S]                   write a snapshot now
//   azctl replay set KEY VALUE                         change a run-time setting

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/replay/sampling.h"
#include "ipc/args.h"
#include "services/azctl/azctl.h"
#include "services/replay/random_samples.h"
#include "services/replay/replay_protocol.h"

namespace az::azctl {
namespace {

using replayd::kInsertCommand;
using replayd::kReadCommand;
using replayd::kSampleCommand;
using replayd::kSetCommand;
using replayd::kSnapshotCommand;
using replayd::kUpdatePrioritiesCommand;

std::string Fixed(double value, int digits = 4) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

std::string Json(const nlohmann::json& body, const char* key) {
  if (!body.contains(key)) return "-";
  const nlohmann::json& value = body[key];
  if (value.is_number_float()) return Fixed(value.get<double>(), 6);
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

void PrintStatus(const ipc::Reply& reply) {
  const nlohmann::json& b = reply.body;
  std::cout << "replay: " << Json(b, "state") << ", pid " << Json(b, "pid") << ", up "
            << FormatDuration(b.value("uptime_seconds", 0.0)) << ", metrics port "
            << Json(b, "metrics_port") << "\n";
  std::cout << "store:        " << Json(b, "store") << "\n";
  std::cout << "buffer:       " << Json(b, "size") << " / " << Json(b, "capacity") << " records of "
            << Json(b, "record_bytes") << " bytes (" << Json(b, "record_layout") << "), alpha "
            << Json(b, "alpha") << ", epsilon " << Json(b, "epsilon") << "\n";
  std::cout << "priorities:   sum " << Json(b, "priority_sum") << ", min "
            << Json(b, "priority_min") << ", max " << Json(b, "priority_max")
            << "; new records enter at " << Json(b, "new_record_priority") << "\n";
  std::cout << "samples:      " << Json(b, "sampled_records") << " records in "
            << Json(b, "sample_requests") << " requests (" << Json(b, "prefetch_hits")
            << " prefetched), " << Json(b, "sample_waiting") << " waiting, "
            << Json(b, "sample_timeouts") << " timed out; last beta " << Json(b, "last_beta")
            << "\n";
  std::cout << "updates:      " << Json(b, "updates_applied") << " applied, "
            << Json(b, "updates_stale") << " stale, " << Json(b, "updates_rejected")
            << " rejected, " << Json(b, "priorities_clamped") << " clamped\n";
  std::cout << "inserts:      " << Json(b, "generations_issued") << " ever; control socket "
            << Json(b, "inserted_control") << " (" << Json(b, "rejected_control")
            << " malformed)\n";
  if (b.contains("ring") && b["ring"].is_object()) {
    const nlohmann::json& r = b["ring"];
    std::cout << "sample ring:  " << Json(r, "occupancy") << " / " << Json(r, "capacity")
              << " waiting; " << Json(r, "ingested") << " ingested, " << Json(r, "rejected")
              << " malformed, " << Json(r, "duplicates_dropped") << " duplicates dropped; "
              << Json(r, "segment") << "\n";
  } else {
    std::cout << "sample ring:  not ingesting\n";
  }
  const nlohmann::json& limiter = b.value("rate_limiter", nlohmann::json::object());
  std::cout << "rate limiter: ";
  if (limiter.value("samples_per_insert", 0.0) > 0) {
    std::cout << Json(limiter, "samples_per_insert") << " samples per insert, error buffer "
              << Json(limiter, "error_buffer") << ", " << Json(limiter, "draws_available")
              << " draws available";
  } else {
    std::cout << "no ratio";
  }
  std::cout << "; min size to sample " << Json(limiter, "min_size_to_sample")
            << (limiter.value("block_inserts", false) ? "; blocks inserts" : "") << "\n";
  const nlohmann::json& snaps = b.value("snapshots", nlohmann::json::object());
  std::cout << "snapshots:    " << Json(snaps, "written") << " written, " << Json(snaps, "failed")
            << " failed, every " << Json(snaps, "interval_seconds") << " s, keep "
            << Json(snaps, "keep");
  if (snaps.contains("last_path")) {
    std::cout << "; last " << FormatDuration(snaps.value("age_seconds", 0.0))
              << " ago: " << Json(snaps, "last_path") << " (" << Json(snaps, "last_records")
              << " records)";
  }
  std::cout << "\n";
  std::cout << "model:        " << Json(b, "model_version") << "\n";
}

void AddStatus(CLI::App& app, Context& context) {
  // Replaces the generic `status` with one that lays the daemon's fields out.
  try {
    app.remove_subcommand(app.get_subcommand("status"));
  } catch (const CLI::OptionNotFound&) {
  }
  CLI::App* status = app.add_subcommand("status", "buffer, priorities, counters, limiter, ring");
  AddGlobalOptions(*status, context.options);
  status->callback([&context] {
    context.SetAction([&context] { return context.Run({{"cmd", "status"}}, {}, PrintStatus); });
  });
}

void AddSample(CLI::App& app, Context& context) {
  CLI::App* sample = app.add_subcommand("sample", "draw a prioritized batch and print its draws");
  AddGlobalOptions(*sample, context.options);
  int& batch = context.Keep<int>(8);
  double& beta = context.Keep<double>(0.4);
  double& wait = context.Keep<double>(0);
  sample->add_option("--batch", batch, "draws")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  sample->add_option("--beta", beta, "importance-sampling exponent")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  sample->add_option("--wait", wait, "seconds the daemon may hold the request for its rate limiter")
      ->check(CLI::Range(0.0, 3600.0));
  sample->callback([&context, &batch, &beta, &wait] {
    context.SetAction([&context, &batch, &beta, &wait] {
      const auto wait_ms = static_cast<std::int64_t>(std::llround(wait * 1000));
      context.options.timeout_seconds += wait;
      int exit_code = kExitOk;
      std::optional<ipc::Reply> reply = context.Exchange({{"cmd", kSampleCommand},
                                                          {"batch", batch},
                                                          {"beta", beta},
                                                          {"timeout_ms", wait_ms},
                                                          {"records", false}},
                                                         {}, &exit_code);
      if (!reply) return exit_code;
      const Status status = ipc::ReplyStatus(reply->body);
      if (!status.ok()) {
        if (context.options.json) PrintJson(reply->body);
        std::cerr << "azctl: " << context.service << ": " << status.ToString() << "\n";
        return static_cast<int>(kExitServiceError);
      }
      if (reply->frames.empty()) {
        return context.Fail(DataLoss("sample reply without its draws frame"), kExitUnreachable);
      }
      // Copied out: a received frame may sit misaligned in ZeroMQ's receive buffer.
      if (reply->frames[0].size() % sizeof(replay::SampledSlot) != 0) {
        return context.Fail(DataLoss("sample reply's draws frame has a bad size"),
                            kExitUnreachable);
      }
      std::vector<replay::SampledSlot> draws(reply->frames[0].size() / sizeof(replay::SampledSlot));
      std::memcpy(draws.data(), reply->frames[0].data(), reply->frames[0].size());
      if (context.options.json) {
        nlohmann::json out = reply->body;
        nlohmann::json list = nlohmann::json::array();
        for (const replay::SampledSlot& d : draws) {
          list.push_back({{"slot", d.slot},
                          {"generation", d.generation},
                          {"probability", d.probability},
                          {"weight", d.weight}});
        }
        out["draws"] = std::move(list);
        PrintJson(out);
      } else {
        std::cout << "slot\tgeneration\tprobability\tweight\n";
        for (const replay::SampledSlot& d : draws) {
          std::cout << d.slot << "\t" << d.generation << "\t" << Fixed(d.probability, 6) << "\t"
                    << Fixed(d.weight, 6) << "\n";
        }
      }
      return static_cast<int>(kExitOk);
    });
  });
}

// Reads "slot generation priority" triples, one per line ('#' starts a comment).
Result<std::vector<replay::PriorityUpdate>> ReadTriples(std::istream& in) {
  std::vector<replay::PriorityUpdate> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string slot_text;
    if (!(fields >> slot_text)) continue;  // blank
    std::string generation_text;
    std::string priority_text;
    std::string extra;
    if (!(fields >> generation_text >> priority_text) || (fields >> extra)) {
      return InvalidArgument("stdin line " + std::to_string(number) +
                             ": expected 'slot generation priority', got '" + line + "'");
    }
    try {
      size_t used = 0;
      replay::PriorityUpdate update{};
      update.slot = std::stoull(slot_text, &used);
      if (used != slot_text.size()) throw std::invalid_argument("slot");
      update.generation = std::stoull(generation_text, &used);
      if (used != generation_text.size()) throw std::invalid_argument("generation");
      update.loss = std::stod(priority_text, &used);  // "nan" and "inf" parse, and are rejected
      if (used != priority_text.size()) throw std::invalid_argument("priority");
      out.push_back(update);
    } catch (const std::exception&) {
      return InvalidArgument("stdin line " + std::to_string(number) + ": not numbers: '" + line +
                             "'");
    }
  }
  return out;
}

void AddUpdate(CLI::App& app, Context& context) {
  CLI::App* update = app.add_subcommand(
      "update",
      "set priorities from losses: p = (loss + epsilon)^alpha, for the slot's generation");
  AddGlobalOptions(*update, context.options);
  auto& slot = context.Keep<std::uint64_t>(0);
  auto& generation = context.Keep<std::uint64_t>(0);
  double& priority = context.Keep<double>(0);
  bool& from_stdin = context.Keep<bool>(false);
  CLI::Option* slot_option = update->add_option("--slot", slot, "the slot");
  CLI::Option* generation_option =
      update->add_option("--generation", generation, "the generation it was sampled with");
  CLI::Option* priority_option =
      update->add_option("--priority,--loss", priority, "the loss the priority is computed from");
  CLI::Option* stdin_option =
      update->add_flag("--stdin", from_stdin, "read 'slot generation priority' lines from stdin");
  stdin_option->excludes(slot_option)->excludes(generation_option)->excludes(priority_option);
  update->callback([&context, &slot, &generation, &priority, &from_stdin, slot_option,
                    generation_option, priority_option] {
    context.SetAction([&context, &slot, &generation, &priority, &from_stdin, slot_option,
                       generation_option, priority_option] {
      std::vector<replay::PriorityUpdate> updates;
      if (from_stdin) {
        Result<std::vector<replay::PriorityUpdate>> read = ReadTriples(std::cin);
        if (!read.ok()) return context.Fail(read.status(), kExitUsage);
        updates = std::move(read).value();
        if (updates.empty())
          return context.Fail(InvalidArgument("no updates on stdin"), kExitUsage);
      } else {
        if (slot_option->count() == 0 || generation_option->count() == 0 ||
            priority_option->count() == 0) {
          return context.Fail(
              InvalidArgument("update needs --slot, --generation and --priority, or --stdin"),
              kExitUsage);
        }
        updates.push_back({slot, generation, priority});
      }
      std::vector<zmq::message_t> frames;
      frames.push_back(ipc::MakeFrame(updates.data(), updates.size() * sizeof(updates[0])));
      return context.Run(
          {{"cmd", kUpdatePrioritiesCommand}}, std::move(frames),
          [](const ipc::Reply& reply) {
            std::cout << "applied " << Json(reply.body, "applied") << ", stale "
                      << Json(reply.body, "stale") << ", rejected " << Json(reply.body, "rejected")
                      << "\n";
          },
          // Nothing applied (every update stale or rejected) is a failure for a script.
          [&context](const ipc::Reply& reply) {
            if (reply.body.value("applied", std::uint64_t{0}) > 0) return int{kExitOk};
            std::cerr << "azctl: " << context.service << ": no update was applied ("
                      << Json(reply.body, "stale") << " stale, " << Json(reply.body, "rejected")
                      << " rejected)\n";
            return int{kExitServiceError};
          });
    });
  });
}

void AddInsertRandom(CLI::App& app, Context& context) {
  CLI::App* insert = app.add_subcommand(
      "insert-random", "insert N well-formed random records (chess samples of random legal games)");
  AddGlobalOptions(*insert, context.options);
  auto& count = context.Keep<std::uint64_t>(0);
  auto& seed = context.Keep<std::uint64_t>(0);
  auto& chunk = context.Keep<std::uint64_t>(1024);
  auto& model_version = context.Keep<std::uint32_t>(0);
  insert->add_option("N", count, "records")->required()->check(CLI::Range(1, 100'000'000));
  insert->add_option("--seed", seed, "random seed (default: from the clock)");
  insert->add_option("--chunk", chunk, "records per insert request")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  insert->add_option("--model-version", model_version, "provenance of the chess samples")
      ->capture_default_str();
  insert->callback([&context, &count, &seed, &chunk, &model_version] {
    context.SetAction([&context, &count, &seed, &chunk, &model_version] {
      // The record layout decides what "well-formed" means: ask the daemon.
      int exit_code = kExitOk;
      std::optional<ipc::Reply> status = context.Exchange({{"cmd", "status"}}, {}, &exit_code);
      if (!status) return exit_code;
      if (Status s = ipc::ReplyStatus(status->body); !s.ok())
        return context.Fail(s, kExitServiceError);
      const std::string layout = status->body.value("record_layout", "bytes");
      const std::size_t record_bytes = status->body.value("record_bytes", std::size_t{0});
      if (record_bytes == 0) {
        return context.Fail(DataLoss("the daemon's status has no record_bytes"), kExitUnreachable);
      }
      std::uint64_t base_seed = seed;
      if (base_seed == 0) {
        base_seed =
            static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
      }
      std::uint64_t inserted = 0;
      std::uint64_t first = 0;
      std::uint64_t last = 0;
      for (std::uint64_t part = 0; inserted < count; ++part) {
        const std::uint64_t n = std::min(chunk, count - inserted);
        std::vector<std::byte> bytes;
        if (layout == "chess") {
          std::vector<sample::ChessSample> samples = replayd::RandomChessSamples(
              n, {.seed = base_seed + part, .model_version = model_version});
          const auto* raw = reinterpret_cast<const std::byte*>(samples.data());
          bytes.assign(raw, raw + samples.size() * sizeof(sample::ChessSample));
        } else {
          bytes = replayd::RandomRecords(n, record_bytes, base_seed + part);
        }
        std::vector<zmq::message_t> frames;
        frames.push_back(ipc::MakeFrame(bytes.data(), bytes.size()));
        // Inserting is not idempotent: one attempt, so a lost reply never inserts twice.
        context.options.attempts = 1;
        std::optional<ipc::Reply> reply = context.Exchange({{"cmd", kInsertCommand}, {"count", n}},
                                                           std::move(frames), &exit_code);
        if (!reply) return exit_code;
        if (Status s = ipc::ReplyStatus(reply->body); !s.ok()) {
          if (context.options.json) PrintJson(reply->body);
          std::cerr << "azctl: " << context.service << ": " << s.ToString() << " (after "
                    << inserted << " records were inserted)\n";
          return static_cast<int>(kExitServiceError);
        }
        if (inserted == 0) first = reply->body.value("first_generation", std::uint64_t{0});
        last = reply->body.value("last_generation", std::uint64_t{0});
        inserted += n;
      }
      if (context.options.json) {
        PrintJson({{"ok", true},
                   {"inserted", inserted},
                   {"first_generation", first},
                   {"last_generation", last},
                   {"layout", layout}});
      } else {
        std::cout << "inserted " << inserted << " " << layout << " records, generations " << first
                  << ".." << last << "\n";
      }
      return static_cast<int>(kExitOk);
    });
  });
}

void AddRead(CLI::App& app, Context& context) {
  CLI::App* read = app.add_subcommand("read", "generation and priority of the records in slots");
  AddGlobalOptions(*read, context.options);
  auto& slots = context.Keep<std::vector<std::uint64_t>>({});
  read->add_option("SLOT", slots, "slots")->required();
  read->callback([&context, &slots] {
    context.SetAction([&context, &slots] {
      return context.Run(
          {{"cmd", kReadCommand}, {"slots", slots}}, {}, [&slots](const ipc::Reply& reply) {
            const nlohmann::json& generations = reply.body["generations"];
            const nlohmann::json& priorities = reply.body["priorities"];
            std::cout << "slot\tgeneration\tpriority\n";
            for (size_t i = 0; i < slots.size() && i < generations.size(); ++i) {
              std::cout << slots[i] << "\t"
                        << (generations[i].is_null() ? "empty" : generations[i].dump()) << "\t"
                        << (priorities[i].is_null() ? "-" : Fixed(priorities[i].get<double>(), 6))
                        << "\n";
            }
          });
    });
  });
}

void AddSnapshot(CLI::App& app, Context& context) {
  CLI::App* snapshot = app.add_subcommand("snapshot", "write a snapshot now and print where");
  AddGlobalOptions(*snapshot, context.options);
  double& wait = context.Keep<double>(600);
  snapshot->add_option("--wait", wait, "seconds to wait for it")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  snapshot->callback([&context, &wait] {
    context.SetAction([&context, &wait] {
      context.options.timeout_seconds = std::max(context.options.timeout_seconds, wait);
      context.options.attempts = 1;
      return context.Run({{"cmd", kSnapshotCommand}}, {}, [](const ipc::Reply& reply) {
        std::cout << "snapshot " << Json(reply.body, "path") << ": " << Json(reply.body, "records")
                  << " records, " << Json(reply.body, "bytes") << " bytes in "
                  << Json(reply.body, "seconds") << " s\n";
      });
    });
  });
}

void AddSet(CLI::App& app, Context& context) {
  CLI::App* set = app.add_subcommand(
      "set",
      "change a run-time setting: samples_per_insert, min_size_to_sample, error_buffer, "
      "block_inserts, snapshot_interval, snapshot_keep, prefetch, prefetch_max_age, "
      "sample_timeout, log_level");
  AddGlobalOptions(*set, context.options);
  std::string& key = context.Keep<std::string>({});
  std::string& value = context.Keep<std::string>({});
  set->add_option("KEY", key, "the setting")->required();
  set->add_option("VALUE", value, "its new value")->required();
  set->callback([&context, &key, &value] {
    context.SetAction([&context, &key, &value] {
      return context.Run(
          {{"cmd", kSetCommand}, {"key", key}, {"value", value}}, {}, [](const ipc::Reply& reply) {
            std::cout << Json(reply.body, "key") << ": " << Json(reply.body, "previous") << " -> "
                      << Json(reply.body, "value") << "\n";
          });
    });
  });
}

void AddReplayCommands(CLI::App& app, Context& context) {
  AddStatus(app, context);
  AddSample(app, context);
  AddUpdate(app, context);
  AddInsertRandom(app, context);
  AddRead(app, context);
  AddSnapshot(app, context);
  AddSet(app, context);
}

}  // namespace

AZCTL_SERVICE_COMMANDS("replay", AddReplayCommands);

}  // namespace az::azctl
