// Which stopped thread may run dlopen for us. dlopen takes the loader's lock and calls
// malloc; a thread stopped while holding either (or stdio's, or the unwinder's) would
// deadlock on itself. Safe are threads blocked in a system call that waits for the
// outside world (no library lock is held across such a wait by glibc), and threads
// running the program's own code.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <string>
#include <vector>

#include "inject/target_process.h"

namespace cilkprof::cli::inject {

// Lower is better; kUnsafe threads are never hijacked.
enum class ThreadSafety {
  kBlockedWaiting = 0,  // read, poll, epoll_wait, accept, wait4, ...: waits of unbounded length
  kBlockedTimed = 1,    // nanosleep, clock_nanosleep, futex: periodic or lock waits
  kUserCode = 2,        // the program's own code, outside the C and C++ runtime libraries
  kUnsafe = 3,          // in the runtime libraries, or in a system call malloc or the loader makes
};

// The executable ranges of the libraries whose internal locks dlopen may need.
struct UnsafeCode {
  struct Range {
    std::uint64_t start, end;
  };
  std::vector<Range> ranges;  // all of them
  std::vector<Range> loader;  // ld.so alone: it reads files with its lock held
  bool Contains(std::uint64_t address) const;
  bool InLoader(std::uint64_t address) const;
};
UnsafeCode FindUnsafeCode(const std::vector<Mapping>& mappings);

// Classifies a thread from the registers of its stop. A thread stopped in or right
// after a system call has orig_rax >= 0 (the call's number) and rip just past the
// syscall instruction.
ThreadSafety ClassifyThread(const user_regs_struct& regs, const UnsafeCode& unsafe_code);
const char* DescribeSafety(ThreadSafety safety);

}  // namespace cilkprof::cli::inject
