// A reference merge for the aggregator's tests: what a profile must hold, computed
// without the aggregator's Session. A calling context is named by its full address
// path, each step (module path, build-id, offset, frame kind, edge kind) from the root;
// the reference sums every metric increment into the vector of its context's path and
// every thread counter into its (thread_index, tid), and every lock's totals (issue 14,
// LockDelta) into its address (module path, build-id, offset). Nothing else: no node
// ids, no module ids, no tree. The profile read back from disk is flattened the same way.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cilkprof/profile.pb.h"
#include "cilkprof/wire.pb.h"

namespace cilkprof::aggregator::testing {

// One step of a path. A lock object (FRAME_LOCK) has its address like code. A
// partial-unwind marker has no address: module, build-id and
// offset are empty/0 whatever the agent sent. An address outside every module has
// an empty module path and the absolute address as offset.
struct PathStep {
  std::string module;
  std::string build_id;
  uint64_t offset = 0;
  int kind = wire::FRAME_PC;
  int edge = wire::EDGE_CALL;
  auto operator<=>(const PathStep&) const = default;
};
using AddressPath = std::vector<PathStep>;  // root: empty
using ThreadId = std::pair<uint32_t, uint32_t>;  // (thread_index, tid)

struct CounterSums {
  uint64_t samples = 0, partial_unwinds = 0, dropped_reentrant = 0, dropped_no_memory = 0,
           cpu_ns = 0, idle_samples = 0, idle_ns = 0, overhead_samples = 0,
           unattributed_overhead = 0, probe_samples = 0, probe_partial = 0;
  uint64_t lock_acquisitions = 0, lock_contended = 0, lock_wait_ns = 0, lock_blame_ns = 0,
           lock_unblamed_ns = 0, lock_wait_open_ns = 0;
  void Add(const wire::ThreadCounters& c) {
    lock_acquisitions += c.lock_acquisitions();
    lock_contended += c.lock_contended();
    lock_wait_ns += c.lock_wait_ns();
    lock_blame_ns += c.lock_blame_ns();
    lock_unblamed_ns += c.lock_unblamed_ns();
    lock_wait_open_ns += c.lock_wait_open_ns();
    samples += c.samples();
    partial_unwinds += c.partial_unwinds();
    dropped_reentrant += c.dropped_reentrant();
    dropped_no_memory += c.dropped_no_memory();
    cpu_ns += c.cpu_ns();
    idle_samples += c.idle_samples();
    idle_ns += c.idle_ns();
    overhead_samples += c.overhead_samples();
    unattributed_overhead += c.unattributed_overhead();
    probe_samples += c.probe_samples();
    probe_partial += c.probe_partial();
  }
  auto operator<=>(const CounterSums&) const = default;
};

// One lock's totals (issue 14).
struct LockSums {
  int kind = 0;
  uint64_t contended = 0, wait_ns = 0, blame_ns = 0, timeouts = 0;
  void Add(const wire::LockDelta& l) {
    kind = l.kind();
    contended += l.contended();
    wait_ns += l.wait_ns();
    blame_ns += l.blame_ns();
    timeouts += l.timeouts();
  }
  auto operator<=>(const LockSums&) const = default;
};
using LockAddress = std::tuple<std::string, std::string, uint64_t>;  // module path, build-id, offset

// One process: what its profile must hold.
struct ReferenceProfile {
  size_t metric_count = 0;
  std::map<AddressPath, std::vector<double>> exclusive;  // every context, even without values
  std::map<ThreadId, CounterSums> threads;
  std::map<LockAddress, LockSums> locks;

  void AddContext(const AddressPath& path) {
    exclusive.emplace(path, std::vector<double>(metric_count, 0.0));
  }
  void AddValues(const AddressPath& path, const std::vector<double>& values) {
    std::vector<double>& sum = exclusive.emplace(path, std::vector<double>(metric_count, 0.0)).first->second;
    if (sum.size() < values.size()) sum.resize(values.size(), 0.0);  // too many: Differences says so
    for (size_t i = 0; i < values.size(); ++i) sum[i] += values[i];
  }
  CounterSums Totals() const {
    CounterSums total;
    for (const auto& [id, sums] : threads) {
      wire::ThreadCounters c;
      c.set_samples(sums.samples);
      c.set_partial_unwinds(sums.partial_unwinds);
      c.set_dropped_reentrant(sums.dropped_reentrant);
      c.set_dropped_no_memory(sums.dropped_no_memory);
      c.set_cpu_ns(sums.cpu_ns);
      c.set_idle_samples(sums.idle_samples);
      c.set_idle_ns(sums.idle_ns);
      c.set_overhead_samples(sums.overhead_samples);
      c.set_unattributed_overhead(sums.unattributed_overhead);
      c.set_probe_samples(sums.probe_samples);
      c.set_probe_partial(sums.probe_partial);
      c.set_lock_acquisitions(sums.lock_acquisitions);
      c.set_lock_contended(sums.lock_contended);
      c.set_lock_wait_ns(sums.lock_wait_ns);
      c.set_lock_blame_ns(sums.lock_blame_ns);
      c.set_lock_unblamed_ns(sums.lock_unblamed_ns);
      c.set_lock_wait_open_ns(sums.lock_wait_open_ns);
      total.Add(c);
    }
    return total;
  }
};

// A written profile in the reference's terms. `duplicate_paths` counts nodes whose
// path another node has already (a correct merge has none).
inline ReferenceProfile Flatten(const profile::Profile& p, size_t* duplicate_paths) {
  ReferenceProfile out;
  out.metric_count = static_cast<size_t>(p.metrics_size());
  *duplicate_paths = 0;
  std::vector<AddressPath> paths(static_cast<size_t>(p.nodes_size()));
  for (int i = 0; i < p.nodes_size(); ++i) {
    const profile::Node& node = p.nodes(i);
    if (i > 0) {
      paths[i] = paths[node.parent()];
      PathStep step;
      step.kind = node.kind();
      step.edge = node.edge();
      if (node.kind() == wire::FRAME_PC || node.kind() == wire::FRAME_LOCK) {
        const profile::Location& location = p.locations(static_cast<int>(node.location()));
        const profile::Module& module = p.modules(static_cast<int>(location.module()));
        step.module = module.path();
        step.build_id = module.build_id();
        step.offset = location.offset();
      }
      paths[i].push_back(step);
    }
    if (out.exclusive.count(paths[i]) > 0) ++*duplicate_paths;
    out.AddValues(paths[i], std::vector<double>(node.exclusive().begin(), node.exclusive().end()));
  }
  for (const profile::ThreadInfo& thread : p.threads()) {
    out.threads[{thread.thread_index(), thread.tid()}].Add(thread.counters());
  }
  for (const profile::Lock& lock : p.locks()) {
    const profile::Location& location = p.locations(static_cast<int>(lock.location()));
    const profile::Module& module = p.modules(static_cast<int>(location.module()));
    LockSums& sums = out.locks[{module.path(), module.build_id(), location.offset()}];
    sums.kind = lock.kind();
    sums.contended += lock.contended();
    sums.wait_ns += lock.wait_ns();
    sums.blame_ns += lock.blame_ns();
    sums.timeouts += lock.timeouts();
  }
  return out;
}

inline std::string PathText(const AddressPath& path) {
  std::ostringstream out;
  out << "<root>";
  for (const PathStep& s : path) {
    out << " > " << (s.kind == wire::FRAME_LOCK ? "lock:" : "")
        << (s.kind == wire::FRAME_PARTIAL_UNWIND ? "<partial>" : s.module) << "+0x" << std::hex
        << s.offset << std::dec << (s.edge == wire::EDGE_SPAWN ? " (spawn)" : "");
  }
  return out.str();
}

// Differences between `got` and `want`, one line each; empty when they agree (values
// within a relative 1e-9: the aggregator may add in another order).
inline std::vector<std::string> Differences(const ReferenceProfile& got, const ReferenceProfile& want) {
  std::vector<std::string> out;
  for (const auto& [path, values] : want.exclusive) {
    auto it = got.exclusive.find(path);
    if (it == got.exclusive.end()) {
      out.push_back("missing context " + PathText(path));
      continue;
    }
    if (it->second.size() > want.metric_count) out.push_back("too many metric values at " + PathText(path));
    for (size_t m = 0; m < want.metric_count; ++m) {
      const double a = m < it->second.size() ? it->second[m] : 0.0;
      const double b = values[m];
      if (std::fabs(a - b) > 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)})) {
        out.push_back("metric " + std::to_string(m) + " of " + PathText(path) + ": " + std::to_string(a) +
                      ", expected " + std::to_string(b));
      }
    }
  }
  for (const auto& [path, values] : got.exclusive) {
    if (want.exclusive.count(path) == 0) out.push_back("unexpected context " + PathText(path));
  }
  if (got.locks != want.locks) {
    out.push_back("lock totals differ (" + std::to_string(got.locks.size()) + " locks, expected " +
                  std::to_string(want.locks.size()) + ")");
  }
  if (got.threads != want.threads) {
    out.push_back("thread counters differ (" + std::to_string(got.threads.size()) + " threads, expected " +
                  std::to_string(want.threads.size()) + ")");
  }
  return out;
}

}  // namespace cilkprof::aggregator::testing
