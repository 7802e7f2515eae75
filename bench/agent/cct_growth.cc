// The CCT part of the sampling handler's time while a thread's tree grows past a
// million nodes (issue 12, row 9a; docs/PERFORMANCE.md, "CCT growth"). Records
// samples of random 100-deep paths over 16 return addresses (almost every node of a
// path is new once the tree is a few levels deep, as in a program with deep, varied
// recursion) with RecordSample, the call the handler makes, and times each call.
//
//   bench_cct_growth [NODES]   (default 1,500,000)
//
// Prints percentiles, the total, and the slowest calls with the tree's size then (the
// hash index doubles when the tree passes 2 x its buckets: 8,192, 16,384, ... 1,048,576
// nodes).
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "cct.h"

namespace {

// The thread's CPU time: what the calls cost, page faults included, without the time
// other processes took the core (this machine is shared).
uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct Call {
  uint64_t ns;
  uint32_t nodes_before;
  uint32_t nodes_after;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace cilkprof::agent;
  const uint32_t target = argc > 1 ? static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 10)) : 1500000;
  constexpr uint32_t kDepth = 100;
  ThreadCct cct;
  CctOptions options;
  options.max_nodes = target + 2 * kDepth;
  if (!cct.Init(options)) {
    std::fprintf(stderr, "cannot map the tree\n");
    return 1;
  }
  SampleCounters counters;
  std::mt19937_64 rng(42);
  cilkprof::unwinder::Frame frames[kDepth];
  std::vector<Call> calls;
  calls.reserve(target / 50);
  // Touch the clock and the first chunk once before measuring.
  (void)NowNs();
  while (cct.published_count() < target) {
    for (uint32_t d = 0; d < kDepth; ++d) frames[d] = {0x401000 + (rng() % 16) * 32, cilkprof::unwinder::Edge::kCall};
    const uint32_t before = cct.published_count();
    const uint64_t start = NowNs();
    RecordSample(&cct, &counters, frames, kDepth, false, 1000000);
    const uint64_t ns = NowNs() - start;
    calls.push_back({ns, before, cct.published_count()});
  }
  std::vector<Call> sorted = calls;
  std::sort(sorted.begin(), sorted.end(), [](const Call& a, const Call& b) { return a.ns > b.ns; });
  std::vector<uint64_t> times;
  times.reserve(calls.size());
  for (const Call& c : calls) times.push_back(c.ns);
  std::sort(times.begin(), times.end());
  auto pct = [&](double p) { return times[static_cast<size_t>(p * (times.size() - 1))] / 1000.0; };
  std::printf("samples %zu, nodes %u, mapped %.1f MiB\n", calls.size(), cct.published_count(),
              cct.mapped_bytes() / 1048576.0);
  uint64_t total = 0;
  for (uint64_t t : times) total += t;
  std::printf("per sample (us of CPU): median %.1f  p99 %.1f  p99.9 %.1f  p99.99 %.1f  max %.1f; total %.0f ms\n",
              pct(0.5), pct(0.99), pct(0.999), pct(0.9999), sorted.front().ns / 1000.0, total / 1e6);
  std::printf("slowest samples (us, tree size before -> after):\n");
  for (size_t i = 0; i < 8 && i < sorted.size(); ++i) {
    std::printf("  %9.1f  %u -> %u\n", sorted[i].ns / 1000.0, sorted[i].nodes_before, sorted[i].nodes_after);
  }
  return 0;
}
