#pragma once

// The replay daemon's commands on the control socket, as constants shared by the daemon and its
// clients (docs/replay.md, "Commands", has the full reference). Binary frames use the pinned
// layouts of core/replay/sampling.h:
//
//   sample             {"batch", "beta", ["timeout_ms"], ["records"], ["model_version"]}
//                      -> {"batch", "beta", "record_bytes", "size", "prefetched",
//                          "prioritized", ...}
//                         frames: [SampledSlot x batch] [records: batch x record_bytes]
//   update-priorities  frames: [PriorityUpdate x n]   (or JSON "slots", "generations", "losses")
//                      -> {"applied", "stale", "rejected"}
//   withdraw           frames: [RecordKey x n]        (or JSON "slots", "generations")
//                      -> {"withdrawn", "stale", "rejected"}
//   insert             frames: [n x record_bytes]     -> {"inserted", ...} frames: [uint64 x n]
//   read               {"slots": [...]}               -> {"generations", "priorities"}
//                                                        frames: [records: n x record_bytes]
//   snapshot           {}                             -> {"path", "records", "bytes", "seconds"}
//   set                {"key", "value"}               -> {"key", "value", "previous"}
//
// On the remote endpoint (self-play hosts' az-relay, docs/scaling.md):
//   push               {"host", "first_seq", "count"}  frames: [count x record_bytes]
//                      -> {"host", "committed_through", "stored", "duplicates", "rejected",
//                          ["first_rejection"]}
//   model              {"have"}                       -> {"version", "unchanged"} or
//                      {"version", "checksum", "bytes"} frames: [the weights file]

#include <string_view>

namespace az::replayd {

inline constexpr std::string_view kReplayService = "replay";

inline constexpr std::string_view kSampleCommand = "sample";
inline constexpr std::string_view kUpdatePrioritiesCommand = "update-priorities";
inline constexpr std::string_view kWithdrawCommand = "withdraw";
inline constexpr std::string_view kInsertCommand = "insert";
inline constexpr std::string_view kReadCommand = "read";
inline constexpr std::string_view kSnapshotCommand = "snapshot";
inline constexpr std::string_view kSetCommand = "set";
inline constexpr std::string_view kPushCommand = "push";
inline constexpr std::string_view kModelCommand = "model";

// The largest number of slots one `read` may name.
inline constexpr int kMaxReadSlots = 65536;

}  // namespace az::replayd
