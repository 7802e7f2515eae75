#include "workspan/settings.h"

#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "log.h"
#include "monotonic_clock.h"

namespace cilkprof::agent::workspan {
namespace {

bool InvariantTsc() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
  if (a < 0x80000007u) return false;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
  return (d & (1u << 8)) != 0;
}

// ns per TSC tick, measured once over ~5 ms against CLOCK_MONOTONIC; 0 if it ran back.
double CalibrateTsc() {
  const uint64_t t0 = MonotonicNs();
  const uint64_t c0 = __rdtsc();
  uint64_t t1 = t0;
  while (t1 - t0 < 5000000ull) t1 = MonotonicNs();
  const uint64_t c1 = __rdtsc();
  if (c1 <= c0) return 0;
  return static_cast<double>(t1 - t0) / static_cast<double>(c1 - c0);
}

}  // namespace

const char* Env(const char* name) {
  const char* v = getenv(name);
  return v != nullptr && v[0] != '\0' ? v : nullptr;
}

bool WorkSpanEnabled() {
  const char* on = Env("CILKPROF_WORKSPAN");
  if (on == nullptr) return true;
  if (std::strcmp(on, "0") == 0) return false;
  if (std::strcmp(on, "1") != 0) {
    LogLine(std::string("CILKPROF_WORKSPAN='") + on + "' is invalid: expected 1 or 0; using 1");
  }
  return true;
}

ClockSettings ReadClockSettings() {
  ClockSettings settings;
  const char* clock = Env("CILKPROF_WS_CLOCK");
  const char* sampler_clock = Env("CILKPROF_CLOCK");
  if (clock == nullptr && sampler_clock != nullptr && std::strcmp(sampler_clock, "counter") == 0) clock = "counter";
  if (clock == nullptr) clock = "tsc";
  if (std::strcmp(clock, "counter") == 0) {
    settings.clock = ClockKind::kCounter;
  } else if (std::strcmp(clock, "monotonic") == 0) {
    settings.clock = ClockKind::kMonotonic;
  } else {
    if (std::strcmp(clock, "tsc") != 0) {
      LogLine(std::string("CILKPROF_WS_CLOCK='") + clock + "' is invalid: expected tsc, monotonic or counter; using tsc");
    }
    settings.clock = ClockKind::kTsc;
  }
  if (settings.clock == ClockKind::kTsc) {
    settings.ns_per_tick = InvariantTsc() ? CalibrateTsc() : 0;
    if (settings.ns_per_tick <= 0) {
      LogLine("the TSC is not invariant on this machine; work and span use CLOCK_MONOTONIC instead");
      settings.clock = ClockKind::kMonotonic;
      settings.ns_per_tick = 1;
    }
  }
  if (const char* b = Env("CILKPROF_BURDEN")) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = strtoull(b, &end, 10);
    if (errno != 0 || end == b || *end != '\0' || v > (1ull << 40)) {
      LogLine(std::string("CILKPROF_BURDEN='") + b + "' is invalid: expected a number of cycles (0 .. 2^40); using 15000");
    } else {
      settings.burden_ticks = v;
    }
  }
  return settings;
}

ReportUnits UnitsOf(const ClockSettings& settings) {
  ReportUnits units;
  units.clock = settings.clock == ClockKind::kTsc       ? "tsc"
                : settings.clock == ClockKind::kCounter ? "counter"
                                                        : "monotonic";
  units.unit = settings.clock == ClockKind::kCounter ? "units" : "ns";
  units.unit_per_tick = settings.ns_per_tick;
  // The burden is in cycles for the TSC (TSC ticks are reference cycles) and in the
  // clock's own unit otherwise.
  units.burden_ticks = settings.burden_ticks;
  return units;
}

}  // namespace cilkprof::agent::workspan
