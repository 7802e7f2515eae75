#include "inject/thread_choice.h"

#include <sys/syscall.h>

namespace cilkprof::cli::inject {
namespace {

bool IsRuntimeLibrary(const std::string& name) {
  static const char* const kPrefixes[] = {"ld-linux", "ld-musl", "ld-2.", "libstdc++", "libgcc_s",
                                          "libpthread", "libdl.", "libdl-", "libcilk", "libc++"};
  if (IsLibcName(name)) return true;
  for (const char* prefix : kPrefixes) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

ThreadSafety ClassifySyscall(long number) {
  switch (number) {
    case SYS_read: case SYS_readv: case SYS_pread64: case SYS_preadv:
    case SYS_write: case SYS_writev: case SYS_pwrite64: case SYS_pwritev:
    case SYS_recvfrom: case SYS_recvmsg: case SYS_recvmmsg:
    case SYS_sendto: case SYS_sendmsg: case SYS_sendmmsg:
    case SYS_accept: case SYS_accept4: case SYS_connect:
    case SYS_poll: case SYS_ppoll: case SYS_select: case SYS_pselect6:
    case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_epoll_pwait2:
    case SYS_pause: case SYS_rt_sigsuspend: case SYS_rt_sigtimedwait:
    case SYS_wait4: case SYS_waitid: case SYS_msgrcv: case SYS_msgsnd:
    case SYS_semop: case SYS_semtimedop: case SYS_io_getevents: case SYS_io_uring_enter:
      return ThreadSafety::kBlockedWaiting;
    case SYS_nanosleep: case SYS_clock_nanosleep: case SYS_futex:
      return ThreadSafety::kBlockedTimed;
    default:
      // mmap, munmap, brk, mprotect, madvise (malloc calls them with its arena lock
      // held), openat, close (the loader does, with its lock held), and the rest.
      return ThreadSafety::kUnsafe;
  }
}

bool InRanges(const std::vector<UnsafeCode::Range>& ranges, std::uint64_t address) {
  for (const UnsafeCode::Range& range : ranges) {
    if (address >= range.start && address < range.end) return true;
  }
  return false;
}

}  // namespace

bool UnsafeCode::Contains(std::uint64_t address) const { return InRanges(ranges, address); }
bool UnsafeCode::InLoader(std::uint64_t address) const { return InRanges(loader, address); }

UnsafeCode FindUnsafeCode(const std::vector<Mapping>& mappings) {
  UnsafeCode code;
  for (const Mapping& mapping : mappings) {
    if (!mapping.executable) continue;
    const std::string name = MappingBasename(mapping);
    if (IsRuntimeLibrary(name)) code.ranges.push_back({mapping.start, mapping.end});
    if (name.rfind("ld-", 0) == 0) code.loader.push_back({mapping.start, mapping.end});
  }
  return code;
}

ThreadSafety ClassifyThread(const user_regs_struct& regs, const UnsafeCode& unsafe_code) {
  const bool in_runtime = unsafe_code.Contains(regs.rip);
  const long syscall = static_cast<long>(regs.orig_rax);
  if (syscall >= 0) {
    if (unsafe_code.InLoader(regs.rip)) return ThreadSafety::kUnsafe;
    ThreadSafety safety = ClassifySyscall(syscall);
    // The program's own raw system call holds no library lock either.
    if (safety == ThreadSafety::kUnsafe && !in_runtime) return ThreadSafety::kUserCode;
    return safety;
  }
  return in_runtime ? ThreadSafety::kUnsafe : ThreadSafety::kUserCode;
}

const char* DescribeSafety(ThreadSafety safety) {
  switch (safety) {
    case ThreadSafety::kBlockedWaiting: return "blocked waiting";
    case ThreadSafety::kBlockedTimed: return "blocked in a sleep or lock wait";
    case ThreadSafety::kUserCode: return "in the program's code";
    case ThreadSafety::kUnsafe: return "inside the runtime libraries";
  }
  return "?";
}

}  // namespace cilkprof::cli::inject
