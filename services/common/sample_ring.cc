#include "services/common/sample_ring.h"

namespace az::service {

Result<shm::Ring> OpenSampleRing(const shm::Scope& scope, const SampleRingOptions& options) {
  if (options.record_bytes == 0) return InvalidArgument("the sample ring's record size is 0");
  for (int attempt = 0; attempt < 3; ++attempt) {
    Result<shm::Ring> opened =
        shm::Ring::Open(scope, options.name, options.record_bytes, options.ring);
    if (opened.ok()) return opened;
    const StatusCode code = opened.status().code();
    if (code != StatusCode::kNotFound && code != StatusCode::kDeadlineExceeded) return opened;
    // Not there, or left half-created by a creator that died (it holds no records): create it.
    // reclaim_stale only ever replaces a segment that no live process has attached.
    Result<shm::Ring> created =
        shm::Ring::Create(scope, options.name, {options.record_bytes, options.capacity},
                          options.ring, {.reclaim_stale = code == StatusCode::kDeadlineExceeded});
    if (created.ok() || created.status().code() != StatusCode::kAlreadyExists) return created;
    // Another process created it meanwhile: open theirs.
  }
  return Unavailable("the sample ring " + scope.ToString() + "/" + options.name +
                     " keeps appearing and disappearing");
}

}  // namespace az::service
