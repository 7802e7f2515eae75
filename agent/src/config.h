// The agent's configuration, read once from the environment at start-up.
//
// `cilkprof run` sets these variables; docs/AGENT.md lists them. Parsing never fails:
// a bad value produces one message in `errors` (the caller prints it, prefixed
// "cilkprof: ") and the default is used instead, so a typo never stops the program.
// Not signal-safe (allocates); called from the library constructor only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cilkprof::agent {

enum class ClockKind : uint8_t { kCpu, kWall };
enum class UnwindKind : uint8_t { kDwarf, kFramePointer };
// Which CPU-clock sample source to use. kAuto tries perf_event and falls back to
// timer_create; kPerfEvent and kTimer force one (kTimer makes the fallback testable).
// kNone arms no source at all: the agent is active (threads, work/span, flushes,
// cilkprof_probe) but takes no timed samples and the program gets no profiling signal,
// for a run that measures work and span unsampled (docs/AGENT.md).
enum class SampleSourceChoice : uint8_t { kAuto, kPerfEvent, kTimer, kNone };

struct Config {
  std::string socket;  // empty: the agent is inactive
  ClockKind clock = ClockKind::kCpu;
  uint64_t period_ns = 1000000;
  UnwindKind unwind = UnwindKind::kDwarf;
  int signal = 0;  // 0: SIGPROF
  bool follow_fork = true;
  uint32_t flush_ms = 1000;
  uint32_t max_nodes = 1u << 20;  // per thread
  std::string spill_dir;           // never empty after parsing
  bool quiet = false;
  bool locks = true;  // CILKPROF_LOCKS: lock blame (issue 14); 0 makes every lock call the real one
  SampleSourceChoice sample_source = SampleSourceChoice::kAuto;
  // CILKPROF_STANDBY=1: arm nothing and send nothing until `cilkprof attach` connects
  // to the control socket (docs/AGENT.md, "Standby and attach"). CILKPROF_SOCKET is not
  // needed then: each attach hands the agent its connection.
  bool standby = false;
  // CILKPROF_TIMELINE=1: record each thread's samples and the runtime's steals and sync
  // waits with their times (issue 16; docs/AGENT.md "Timeline") in two bounded rings
  // per thread of CILKPROF_TIMELINE_EVENTS events each.
  bool timeline = false;
  uint32_t timeline_events = 32768;
  // TCP (a `tcp:HOST:PORT` socket only): CILKPROF_TCP_SECRET_FILE, the token read from
  // it at start-up (kept in memory; never printed), or why there is none. Exactly one
  // of tcp_token and tcp_auth_problem is set for a tcp: socket; neither otherwise.
  std::string tcp_secret_file;
  std::string tcp_token;
  std::string tcp_auth_problem;
};

// Whether `socket` is a TCP address (`tcp:HOST:PORT`).
bool IsTcpAddress(const std::string& socket);

// Returns the value of an environment variable or nullptr (getenv in production).
using EnvLookup = std::function<const char*(const char* name)>;

Config ParseConfig(const EnvLookup& env, std::vector<std::string>* errors);

const char* ClockName(ClockKind clock);    // "cpu" / "wall"
const char* UnwindName(UnwindKind unwind);  // "dwarf" / "fp"

}  // namespace cilkprof::agent
