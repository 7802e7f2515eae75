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
#include "monotonic_clock.h"
#include "ompt/ompt_workspan.h"
#include "workspan/report.h"
#include "workspan/settings.h"

namespace cilkprof::agent::ompt::workspan {
namespace {

using cilkprof::agent::workspan::Reporter;
using cilkprof::agent::workspan::ReportUnits;

Reporter* g_reporter = nullptr;
uint64_t g_send_interval_ns = 1000000000ull;
uint64_t g_last_send_ns = 0;

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
  if (!cilkprof::agent::workspan::WorkSpanEnabled()) return false;
  InstrumentationScope in_tool;  // the TSC calibration spins ~5 ms: not the program's work
  const cilkprof::agent::workspan::ClockSettings settings = cilkprof::agent::workspan::ReadClockSettings();
  Config config;
  config.clock = settings.clock;
  config.burden_ticks = settings.burden_ticks;
  ReportUnits units = cilkprof::agent::workspan::UnitsOf(settings);
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
