#pragma once

// A file mapped read-write into this process (Boost.Interprocess), and locked with flock() against
// a second opener for as long as the object lives. The kernel drops the lock when the process dies,
// even by SIGKILL, so a restarted process can open the file at once. Writes through the mapping
// reach the page cache immediately and survive the death of the process; Flush() makes them survive
// a power loss too. All Boost exceptions are caught here and returned as Status.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "core/base/status.h"

namespace az::replay {

class MappedFile {
 public:
  // Creates `path` as `size` zero bytes, maps it, lets `init` fill it (e.g. write a header),
  // flushes it and only then publishes it under `path` (it is built under a temporary name and
  // hard-linked), so a crash never leaves a half-initialised file under the real name. Returns the
  // published file, open and locked. AlreadyExists when `path` exists; Unavailable (with errno's
  // text) for I/O errors.
  static Result<MappedFile> Create(const std::string& path, std::uint64_t size,
                                   const std::function<void(std::span<std::byte>)>& init);
  // Opens and maps an existing file. NotFound when it does not exist; Aborted when another open
  // MappedFile (in any process) holds it; Unavailable for other I/O errors. Never blocks.
  static Result<MappedFile> Open(const std::string& path);

  MappedFile(MappedFile&&) noexcept;
  MappedFile& operator=(MappedFile&&) noexcept;
  ~MappedFile();

  std::span<std::byte> bytes() const;
  const std::string& path() const;
  // Writes dirty pages to the disk (msync) and waits for it. Unavailable on an I/O error.
  Status Flush();

 private:
  struct Impl;
  explicit MappedFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace az::replay
