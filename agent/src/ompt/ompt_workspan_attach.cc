// The agent side of the OpenMP work/span engine (ompt_workspan.h): configuration from
// the environment at OMPT tool initialization, and sending, as the Cilk tool does
// (agent/src/workspan/attach.cc): WorkSpanDelta frames through the flusher's lock and
// transport, when an outermost parallel region ends (at most once per
// CILKPROF_FLUSH_MS, only if the lock is free) and at exit (an atexit handler
// registered at the tool's initialization, so before the agent's Goodbye). The
// figures are the Cilk tool's types, encoded by its Reporter, with the model
// "openmp tasks" and the runtime that produced them.
//
// Both tools never measure in one process at once: the Cilk tool's hooks come with the
// Cilk runtime's attach, these with libomp's ompt_start_tool; AppendFrames of the one
// that is not set up returns nothing.
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "agent_state.h"
#include "instrumentation.h"
#include "log.h"
#include "ompt/ompt_workspan.h"
#include "workspan/report.h"

namespace cilkprof::agent::ompt::workspan {
namespace {

using cilkprof::agent::workspan::Reporter;
using cilkprof::agent::workspan::ReportUnits;

Reporter* g_reporter = nullptr;
uint64_t g_send_interval_ns = 1000000000ull;
uint64_t g_last_send_ns = 0;

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

const char* Env(const char* name) {
  const char* v = getenv(name);
  return v != nullptr && v[0] != '\0' ? v : nullptr;
}

// ns per TSC tick over ~5 ms against CLOCK_MONOTONIC; 0 when the TSC is not invariant.
double CalibrateTsc() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
  if (a < 0x80000007u) return 0;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
  if ((d & (1u << 8)) == 0) return 0;
  const uint64_t t0 = MonotonicNs();
  const uint64_t c0 = __rdtsc();
  uint64_t t1 = t0;
  while (t1 - t0 < 5000000ull) t1 = MonotonicNs();
  const uint64_t c1 = __rdtsc();
  return c1 > c0 ? static_cast<double>(t1 - t0) / static_cast<double>(c1 - c0) : 0;
}

cilkprof::agent::workspan::Snapshot Snapshot() {
  Extra extra;
  cilkprof::agent::workspan::Snapshot s = TakeSnapshot(&extra);
  s.program.tasks_with_dependences = extra.tasks_with_dependences;
  return s;
}

void SendLocked() {
  if (g_reporter == nullptr || g_state == nullptr || !AgentActive()) return;
  if (!g_state->hello_sent) FlushLocked();  // the Hello must precede every Delta
  std::string frame = g_reporter->NextFrame(Snapshot(), EngineFailed());
  if (!frame.empty()) g_state->transport.Enqueue(std::move(frame));
  g_last_send_ns = MonotonicNs();
}

void SendAtExit() {
  if (g_state == nullptr || !AgentActive()) return;
  pthread_mutex_lock(&g_state->flush_mu);
  SendLocked();
  pthread_mutex_unlock(&g_state->flush_mu);
}

// An outermost parallel region ended (on its encountering thread).
void OnTopLevelEnd() {
  if (g_reporter == nullptr || g_state == nullptr) return;
  if (MonotonicNs() - g_last_send_ns < g_send_interval_ns) return;
  if (pthread_mutex_trylock(&g_state->flush_mu) != 0) return;
  SendLocked();
  pthread_mutex_unlock(&g_state->flush_mu);
}

}  // namespace

bool SetUp(const char* runtime_version) {
  if (const char* on = Env("CILKPROF_WORKSPAN")) {
    if (std::strcmp(on, "0") == 0) return false;
    if (std::strcmp(on, "1") != 0) {
      LogLine(std::string("CILKPROF_WORKSPAN='") + on + "' is invalid: expected 1 or 0; using 1");
    }
  }
  InstrumentationScope in_tool;  // the TSC calibration spins ~5 ms: not the program's work
  Config config;
  ReportUnits units;
  const char* clock = Env("CILKPROF_WS_CLOCK");
  const char* sampler_clock = Env("CILKPROF_CLOCK");
  if (clock == nullptr && sampler_clock != nullptr && std::strcmp(sampler_clock, "counter") == 0) clock = "counter";
  if (clock == nullptr) clock = "tsc";
  if (std::strcmp(clock, "counter") == 0) {
    config.clock = ClockKind::kCounter;
  } else if (std::strcmp(clock, "monotonic") == 0) {
    config.clock = ClockKind::kMonotonic;
  } else {
    if (std::strcmp(clock, "tsc") != 0) {
      LogLine(std::string("CILKPROF_WS_CLOCK='") + clock + "' is invalid: expected tsc, monotonic or counter; using tsc");
    }
    config.clock = ClockKind::kTsc;
  }
  double ns_per_tick = 1;
  if (config.clock == ClockKind::kTsc) {
    ns_per_tick = CalibrateTsc();
    if (ns_per_tick <= 0) {
      LogLine("the TSC is not invariant on this machine; work and span use CLOCK_MONOTONIC instead");
      config.clock = ClockKind::kMonotonic;
      ns_per_tick = 1;
    }
  }
  uint64_t burden = 15000;
  if (const char* b = Env("CILKPROF_BURDEN")) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = strtoull(b, &end, 10);
    if (errno != 0 || end == b || *end != '\0' || v > (1ull << 40)) {
      LogLine(std::string("CILKPROF_BURDEN='") + b + "' is invalid: expected a number of cycles (0 .. 2^40); using 15000");
    } else {
      burden = v;
    }
  }
  config.burden_ticks = burden;
  units.clock = config.clock == ClockKind::kTsc ? "tsc" : config.clock == ClockKind::kCounter ? "counter" : "monotonic";
  units.unit = config.clock == ClockKind::kCounter ? "units" : "ns";
  units.unit_per_tick = ns_per_tick;
  units.burden_ticks = burden;
  units.model = std::string("openmp tasks (") + (runtime_version != nullptr ? runtime_version : "OMPT") + ")";
  if (g_state != nullptr) g_send_interval_ns = uint64_t{g_state->config.flush_ms} * 1000000ull;
  if (!Configure(config)) {
    LogLine("cannot map memory for the OpenMP work/span tables; work and span are not measured");
    return false;
  }
  static Reporter reporter(units);  // static storage: used until exit
  g_reporter = &reporter;
  SetTopLevelEndCallback(&OnTopLevelEnd);
  atexit(&SendAtExit);
  return true;
}

size_t AppendSnapshotFrames(std::vector<std::string>* frames) {
  if (g_reporter != nullptr) g_reporter->ForgetReceiver();
  return AppendFrames(frames);
}

size_t AppendFrames(std::vector<std::string>* frames) {
  if (g_reporter == nullptr || frames == nullptr) return 0;
  std::string frame = g_reporter->NextFrame(Snapshot(), EngineFailed());
  if (frame.empty()) return 0;
  frames->push_back(std::move(frame));
  return 1;
}

}  // namespace cilkprof::agent::ompt::workspan
