// Random agent message streams for the merge tests, with what the reference merge
// (reference_merge.h) says their profiles must hold, computed as they are generated.
//
// A process is one to three images (connections of one pid: each but the last ends
// with Goodbye "exec"); an image is several threads, each growing a random calling-
// context tree (agent node ids drawn at random; a small set of addresses, so threads
// and images share contexts), with metric increments on random nodes (the root
// included; value vectors of any length up to the metric count), partial-unwind
// markers (with a garbage offset the aggregator must ignore), addresses outside every
// module, modules announced under two ids, nodes announced again, thread counters,
// lock objects (issue 14: FRAME_LOCK leaves, in modules or at absolute addresses, and
// LockDelta totals, at most one per lock per Delta, with the lock counters).
// Each thread's events are cut into Deltas at random points, a thread sometimes twice
// in one Delta; some threads send their last delta as exited; a process's last image
// sometimes ends without Goodbye.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "reference_merge.h"
#include "wire_builders.h"

namespace cilkprof::aggregator::testing {

struct RandomProcess {
  uint32_t pid = 0;
  std::vector<std::vector<wire::AgentMessage>> images;  // one connection each, in exec order
  std::vector<std::string> executables;                  // of the images
  std::vector<size_t> send_chunks;                       // bytes per send(), per image
  ReferenceProfile want;
};

class RandomStreams {
 public:
  explicit RandomStreams(uint32_t seed) : rng_(seed) {}

  // `min_images`: at least this many images (exec chain length).
  RandomProcess Process(uint32_t pid, int min_images = 1) {
    RandomProcess process;
    process.pid = pid;
    process.want.metric_count = kMetricCount;
    const int images = std::max(min_images, Chance(0.35) ? static_cast<int>(Uniform(2, 3)) : 1);
    for (int i = 0; i < images; ++i) {
      const std::string exe = "/opt/bin/p" + std::to_string(pid) + "-" + std::to_string(i);
      process.executables.push_back(exe);
      process.images.push_back(Image(pid, i, exe, i + 1 == images, &process.want));
      process.send_chunks.push_back(Uniform(1, 400));
    }
    return process;
  }

 private:
  static constexpr size_t kMetricCount = 3;
  struct ModuleDef {
    std::string path, build_id;
  };
  // The last two: one path, two builds, so two modules.
  inline static const std::vector<ModuleDef> kModules = {{"/opt/bin/app", "app-1"},
                                                          {"/usr/lib/libc.so.6", ""},
                                                          {"/usr/lib/libm.so.6", "m-6"},
                                                          {"/opt/lib/plugin.so", "p-1"},
                                                          {"/opt/lib/plugin.so", "p-2"}};

  // Lock objects: a few globals of the modules (one shared by two builds' paths) and
  // two on the heap (module -1: an absolute address). Each lock's kind is its number % 3.
  static constexpr uint32_t kLockCount = 6;
  static std::pair<int, uint64_t> LockAddressOf(uint32_t lock) {
    static const std::pair<int, uint64_t> kLocks[kLockCount] = {
        {0, 0x4040}, {0, 0x4080}, {3, 0x2000}, {4, 0x2000}, {-1, 0x7f0000123000}, {-1, 0x7f0000123040}};
    return kLocks[lock];
  }

  struct Event {
    enum Type { kNode, kMetric, kAnnounceAgain } type;
    wire::NewNode node;     // kNode, kAnnounceAgain
    uint32_t metric_node = 0;
    std::vector<double> values;
  };

  uint32_t Uniform(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  double Value() { return std::uniform_real_distribution<double>(0.0, 1000.0)(rng_); }
  template <class T>
  const T& Pick(const std::vector<T>& v) { return v[Uniform(0, static_cast<uint32_t>(v.size() - 1))]; }

  std::vector<wire::AgentMessage> Image(uint32_t pid, int image, const std::string& exe, bool last,
                                        ReferenceProfile* want) {
    std::vector<wire::AgentMessage> out{Hello(pid, exe)};
    wire::Hello* hello = out.front().mutable_hello();
    hello->add_metrics()->set_name("idleness");
    hello->set_start_unix_ns(1000000000ull + 1000000ull * static_cast<uint64_t>(image));

    // This connection's module ids: each module under one id, some under two.
    std::vector<uint32_t> id_pool(500);
    for (uint32_t i = 0; i < id_pool.size(); ++i) id_pool[i] = i + 1;
    std::shuffle(id_pool.begin(), id_pool.end(), rng_);
    std::vector<std::vector<uint32_t>> ids_of(kModules.size());
    std::map<uint32_t, size_t> module_of;
    size_t next_id = 0;
    for (size_t m = 0; m < kModules.size(); ++m) {
      const int aliases = Chance(0.2) ? 2 : 1;
      for (int a = 0; a < aliases; ++a) {
        ids_of[m].push_back(id_pool[next_id]);
        module_of[id_pool[next_id++]] = m;
      }
    }

    // Each thread's events, and the paths of its nodes.
    const uint32_t thread_count = Uniform(1, 4);
    std::vector<std::vector<Event>> events(thread_count);
    for (uint32_t t = 0; t < thread_count; ++t) {
      std::vector<uint32_t> fresh(5000);
      for (uint32_t i = 0; i < fresh.size(); ++i) fresh[i] = i + 1;
      std::shuffle(fresh.begin(), fresh.end(), rng_);
      std::vector<uint32_t> known{0};  // nodes that may have children
      std::vector<uint32_t> targets{0};  // nodes that may carry metrics: known and locks
      size_t used = 0;                 // of `fresh`
      std::map<uint32_t, AddressPath> path{{0, {}}};
      std::map<uint32_t, wire::NewNode> defined;
      want->AddContext({});
      uint32_t nodes_left = Uniform(0, 50), metrics_left = Uniform(1, 40);
      while (nodes_left + metrics_left > 0) {
        Event event;
        if (nodes_left > 0 && (metrics_left == 0 || Chance(0.5))) {
          --nodes_left;
          event.type = Event::kNode;
          wire::NewNode& node = event.node;
          node.set_id(fresh[used++]);
          node.set_parent(Pick(known));
          node.set_edge(Chance(0.25) ? wire::EDGE_SPAWN : wire::EDGE_CALL);
          PathStep step;
          step.edge = node.edge();
          bool leaf = false;
          if (Chance(0.08)) {
            // A lock object: a leaf, addressed like code.
            leaf = true;
            node.set_kind(wire::FRAME_LOCK);
            step.kind = wire::FRAME_LOCK;
            const auto [module, offset] = LockAddressOf(Uniform(0, kLockCount - 1));
            node.set_offset(offset);
            step.offset = offset;
            if (module >= 0) {
              node.set_module_id(Pick(ids_of[static_cast<size_t>(module)]));
              step.module = kModules[static_cast<size_t>(module)].path;
              step.build_id = kModules[static_cast<size_t>(module)].build_id;
            }
          } else if (Chance(0.06)) {
            node.set_kind(wire::FRAME_PARTIAL_UNWIND);
            node.set_offset(Uniform(0, 1000));  // meaningless for a marker
            step.kind = wire::FRAME_PARTIAL_UNWIND;
          } else if (Chance(0.05)) {
            node.set_kind(wire::FRAME_PC);
            node.set_module_id(0);
            node.set_offset(0x7f0000 + 8 * Uniform(0, 3));
            step.offset = node.offset();
          } else {
            const size_t m = Uniform(0, static_cast<uint32_t>(kModules.size() - 1));
            node.set_kind(wire::FRAME_PC);
            node.set_module_id(Pick(ids_of[m]));
            node.set_offset(0x100 + 0x10 * Uniform(0, 5));
            step.module = kModules[m].path;
            step.build_id = kModules[m].build_id;
            step.offset = node.offset();
          }
          path[node.id()] = path[node.parent()];
          path[node.id()].push_back(step);
          want->AddContext(path[node.id()]);
          if (!leaf) known.push_back(node.id());
          targets.push_back(node.id());
          defined[node.id()] = node;
        } else if (known.size() > 1 && Chance(0.03)) {
          event.type = Event::kAnnounceAgain;
          uint32_t id = Pick(known);
          while (id == 0) id = Pick(known);
          event.node = defined[id];
        } else {
          --metrics_left;
          event.type = Event::kMetric;
          event.metric_node = Pick(targets);
          const uint32_t n = Uniform(0, kMetricCount);
          for (uint32_t v = 0; v < n; ++v) event.values.push_back(Value());
          want->AddValues(path[event.metric_node], event.values);
        }
        events[t].push_back(std::move(event));
      }
    }

    // Cut into Deltas.
    auto tid_of = [&](uint32_t t) { return t == 0 ? pid : pid * 16 + 4 * static_cast<uint32_t>(image) + t; };
    std::vector<size_t> cursor(thread_count, 0);
    std::set<uint32_t> announced;
    auto remaining = [&] {
      for (uint32_t t = 0; t < thread_count; ++t) {
        if (cursor[t] < events[t].size()) return true;
      }
      return false;
    };
    while (remaining()) {
      wire::AgentMessage message;
      wire::Delta* delta = message.mutable_delta();
      std::set<uint32_t> needed;
      bool progressed = false;
      for (uint32_t t = 0; t < thread_count; ++t) {
        if (cursor[t] == events[t].size() || (progressed && !Chance(0.6))) continue;
        progressed = true;
        const size_t end = cursor[t] + Uniform(1, static_cast<uint32_t>(events[t].size() - cursor[t]));
        const int pieces = end - cursor[t] >= 2 && Chance(0.2) ? 2 : 1;
        const size_t middle = pieces == 2 ? cursor[t] + (end - cursor[t]) / 2 : end;
        for (int piece = 0; piece < pieces; ++piece) {
          const size_t to = piece == 0 ? middle : end;
          wire::ThreadDelta* td = AddThread(delta, tid_of(t), t, Chance(0.3) ? "t" + std::to_string(t) : "");
          for (; cursor[t] < to; ++cursor[t]) {
            const Event& e = events[t][cursor[t]];
            if (e.type == Event::kMetric) {
              AddMetrics(td, e.metric_node, e.values);
            } else {
              *td->add_nodes() = e.node;
              if (e.node.kind() != wire::FRAME_PARTIAL_UNWIND && e.node.module_id() != 0) {
                needed.insert(e.node.module_id());
              }
            }
          }
          wire::ThreadCounters* c = td->mutable_counters();
          c->set_samples(Uniform(0, 20));
          c->set_partial_unwinds(Uniform(0, 3));
          c->set_dropped_reentrant(Uniform(0, 1));
          c->set_dropped_no_memory(Uniform(0, 1));
          c->set_cpu_ns(Uniform(0, 20000000));
          c->set_idle_samples(Uniform(0, 5));
          c->set_idle_ns(Uniform(0, 5000000));
          c->set_overhead_samples(Uniform(0, 4));
          c->set_unattributed_overhead(Uniform(0, 2));
          c->set_probe_samples(Uniform(0, 3));
          c->set_probe_partial(Uniform(0, 1));
          if (Chance(0.3)) {
            c->set_lock_acquisitions(Uniform(0, 100));
            c->set_lock_contended(Uniform(0, 10));
            c->set_lock_wait_ns(Uniform(0, 9000000));
            c->set_lock_blame_ns(Uniform(0, 5000000));
            c->set_lock_unblamed_ns(Uniform(0, 4000000));
            c->set_lock_wait_open_ns(Uniform(0, 1));
          }
          want->threads[{t, tid_of(t)}].Add(*c);
          if (cursor[t] == events[t].size() && Chance(0.5)) td->set_exited(true);
        }
      }
      // Lock totals: some locks, each once at most.
      for (uint32_t lock = 0; lock < kLockCount; ++lock) {
        if (!Chance(0.15)) continue;
        const auto [module, offset] = LockAddressOf(lock);
        wire::LockDelta* entry = delta->add_locks();
        entry->set_offset(offset);
        entry->set_kind(static_cast<wire::LockKind>(lock % 3));
        if (module >= 0) {
          entry->set_module_id(Pick(ids_of[static_cast<size_t>(module)]));
          needed.insert(entry->module_id());
        }
        entry->set_contended(Uniform(0, 50));
        entry->set_wait_ns(Uniform(0, 90000000));
        entry->set_blame_ns(Uniform(0, 90000000));
        entry->set_timeouts(Uniform(0, 2));
        const ModuleDef none;
        const ModuleDef& def = module >= 0 ? kModules[static_cast<size_t>(module)] : none;
        want->locks[{def.path, def.build_id, offset}].Add(*entry);
      }
      for (const auto& [id, m] : module_of) {
        const bool again = announced.count(id) > 0 && Chance(0.05);
        const bool early = announced.count(id) == 0 && Chance(0.1);
        if ((needed.count(id) > 0 && announced.count(id) == 0) || again || early) {
          AddModule(delta, id, kModules[m].path, kModules[m].build_id);
          announced.insert(id);
        }
      }
      out.push_back(std::move(message));
    }
    if (!last) {
      out.push_back(Goodbye("exec"));
    } else if (Chance(0.8)) {
      out.push_back(Goodbye("exit"));
    }
    return out;
  }

  std::mt19937 rng_;
};

}  // namespace cilkprof::aggregator::testing
