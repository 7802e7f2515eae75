// Turns engine snapshots into wire increments (wire.proto WorkSpanDelta inside a
// Delta frame). Keeps, like the sampler's delta builder, a shadow of what it sent, so
// the increments of any number of frames add up to the totals; values are converted
// from clock ticks to the report unit on the totals (never on increments), so
// rounding does not accumulate.
// Not thread-safe: callers serialize (the agent uses the flusher's lock).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "module_table.h"
#include "workspan/engine.h"

namespace cilkprof::agent::workspan {

struct ReportUnits {
  std::string clock;        // "tsc", "monotonic", "counter"
  std::string unit;         // "ns" or "units"
  double unit_per_tick = 1;  // ns per TSC tick, or 1
  uint64_t burden_ticks = 0;
  // What produced the figures, when not the Cilk runtime's hooks: "openmp tasks (...)"
  // for the OMPT tool (agent/src/ompt/ompt_workspan.h). Empty: the Cilk model.
  std::string model;
};

class Reporter {
 public:
  explicit Reporter(ReportUnits units) : units_(std::move(units)) {}

  // One complete frame (length prefix + AgentMessage{delta{workspan}}), or an empty
  // string when nothing changed since the previous call.
  std::string NextFrame(const Snapshot& snapshot, bool incomplete);

  // After fork, in the child: what the parent measured belongs to the parent's
  // profile; only what the child adds from now on is reported.
  void ForgetSent(const Snapshot& snapshot);

  // A receiver that has none of it (a spill file that starts when the aggregator is
  // gone, transport.h): the next frame reports everything from zero.
  void ForgetReceiver() {
    sent_.clear();
    sent_program_ = ProgramTotals{};
    header_sent_ = false;
    incomplete_sent_ = false;
  }

 private:
  uint64_t Units(uint64_t ticks) const;

  ReportUnits units_;
  ModuleTable modules_;
  struct SentSite {
    bool defined = false;
    bool callee_sent = false;
    uint64_t count = 0, wow = 0, sow = 0, wos = 0, sos = 0, bsow = 0;  // ticks (count: invocations)
  };
  std::vector<SentSite> sent_;
  ProgramTotals sent_program_;
  bool header_sent_ = false;
  bool incomplete_sent_ = false;
};

}  // namespace cilkprof::agent::workspan
