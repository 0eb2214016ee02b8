#pragma once

// Futex waits on a 32-bit word in shared memory. The futexes are process-shared (no
// FUTEX_PRIVATE_FLAG), so a process blocked on a word in a mapped segment is woken by a FutexWake
// from any other process that maps the same segment.

#include <chrono>
#include <cstdint>

namespace az::shm {

enum class FutexWaitResult {
  kWoken,         // a FutexWake on the word (or a spurious wakeup: re-check the condition)
  kValueChanged,  // *word != expected when the call started: nothing to wait for
  kTimedOut,      // timeout elapsed
  kInterrupted,   // a signal arrived
};

// Blocks while *word == expected, for at most `timeout` (which must be >= 0).
FutexWaitResult FutexWait(std::uint32_t* word, std::uint32_t expected,
                          std::chrono::nanoseconds timeout);

// Wakes up to `count` processes blocked in FutexWait on `word`. A system call: call only when a
// waiter is known to exist. Returns how many were woken.
int FutexWake(std::uint32_t* word, int count);

// One iteration of a spin-wait: tells the CPU this is a busy loop (x86 PAUSE, ARM YIELD).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace az::shm
