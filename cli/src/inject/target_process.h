// What /proc says about a process we may inject into: its threads, its memory map,
// its owner and tracer. Reading only: nothing here stops or changes the target.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"

namespace cilkprof::cli::inject {

// One line of /proc/PID/maps.
struct Mapping {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint64_t offset = 0;  // file offset of `start`
  bool executable = false;
  std::uint64_t inode = 0;
  std::string path;  // empty for anonymous memory; "[stack]", "[vdso]"... for special ones
};

// The fields of /proc/PID/status the injector decides on.
struct ProcessStatus {
  std::string name;   // Name: (the comm)
  char state = '?';   // first letter of State:
  pid_t ppid = 0;
  pid_t tracer_pid = 0;
  uid_t uids[4] = {0, 0, 0, 0};  // real, effective, saved, filesystem
  gid_t gids[4] = {0, 0, 0, 0};
  std::uint64_t ignored_signals = 0;  // SigIgn: bit n-1 for signal n
};

// "no process with PID N" when /proc/PID is gone.
Result<ProcessStatus> ReadProcessStatus(pid_t pid);
Result<std::vector<Mapping>> ReadMappings(pid_t pid);
// The thread ids in /proc/PID/task, in directory order; empty when the process is gone.
std::vector<pid_t> ListThreads(pid_t pid);

// The basename of a mapping's path ("libc.so.6"), without a " (deleted)" suffix.
std::string MappingBasename(const Mapping& mapping);
// True for the C library proper (libc.so.6, libc-2.31.so, musl's libc.so).
bool IsLibcName(const std::string& basename);

// Whether this process holds CAP_SYS_PTRACE in its effective set.
bool HaveCapSysPtrace();
// The name of a user id for messages ("alice (uid 1001)").
std::string DescribeUser(uid_t uid);
// "12 (gdb)" for messages about another process; just "12" when it is gone.
std::string DescribeProcess(pid_t pid);
// /proc/sys/kernel/yama/ptrace_scope, or nullopt without Yama.
std::optional<int> YamaPtraceScope();
// Whether `ancestor` is `pid` or one of its ancestors (Yama scope 1 allows those).
bool IsAncestorOf(pid_t ancestor, pid_t pid);

}  // namespace cilkprof::cli::inject
