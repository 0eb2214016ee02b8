#pragma once

// The self-play driver's AsyncEvaluator over the shared-memory eval channel (shm/request_channel.h)
// with the eval wire protocol (services/common/eval_protocol.h): a leaf becomes one request record,
// an answer record becomes an EvalAnswer. Answers to an earlier generation are dropped by the
// channel (and counted in Stats()); an answer record that fails its checks (magic, version, game,
// prior count) is handed on as kMalformed.

#include <memory>

#include "core/base/status.h"
#include "services/common/game_kind.h"
#include "services/selfplay/driver/async_evaluator.h"
#include "shm/request_channel.h"

namespace az::selfplay {

class EvalChannelEvaluator : public AsyncEvaluator {
 public:
  // Takes over `client` (attached to `game`'s eval channel). FAILED_PRECONDITION when the channel's
  // request records are not `game`'s.
  static Result<std::unique_ptr<EvalChannelEvaluator>> Create(service::GameKind game,
                                                              shm::RequestClient client);

  // The channel's counters (rings, generation, stale answers dropped). Call from the thread that
  // uses the evaluator.
  virtual shm::ChannelClientStats Stats() const = 0;
};

}  // namespace az::selfplay
