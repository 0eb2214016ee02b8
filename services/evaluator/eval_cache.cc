#include "services/evaluator/eval_cache.h"

#include <sys/mman.h>

#include <bit>
#include <cerrno>
#include <string>

namespace az::evaluator {

Status ValidateCacheSize(std::uint64_t entries, std::string_view what) {
  if (entries == 0 || (entries >= 2 && entries <= kMaxCacheSize && std::has_single_bit(entries))) {
    return Status::Ok();
  }
  return InvalidArgument(std::string(what) + " must be 0 (off) or a power of two from 2 to " +
                         std::to_string(kMaxCacheSize) + ", got " + std::to_string(entries));
}

Result<CacheMemory> CacheMemory::Map(std::size_t bytes) {
  CacheMemory memory;
  if (bytes == 0) return memory;
  // Anonymous pages read as zero and are committed when first written: a cache that stays half
  // empty costs half its size. MAP_NORESERVE: the bound is the configured size, not swap space.
  void* data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (data == MAP_FAILED) {
    return ResourceExhausted("mapping " + std::to_string(bytes) +
                             " bytes for the evaluation cache: errno " + std::to_string(errno));
  }
  memory.data_ = data;
  memory.bytes_ = bytes;
  return memory;
}

CacheMemory::~CacheMemory() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
}

}  // namespace az::evaluator
