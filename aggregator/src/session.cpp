// Merging one agent connection into one calling-context tree (see session.h).
#include "cilkprof/aggregator/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_set>

#include "cilkprof/aggregator/framing.h"

namespace cilkprof::aggregator {
namespace {

std::string ThreadName(const wire::ThreadDelta& t) {
  return fmt::format("thread {} (tid {})", t.thread_index(), t.tid());
}

// The lock fields (issue 14), increments like the others.
void AddLockCounters(const wire::ThreadCounters& in, wire::ThreadCounters* sum) {
  sum->set_lock_acquisitions(sum->lock_acquisitions() + in.lock_acquisitions());
  sum->set_lock_contended(sum->lock_contended() + in.lock_contended());
  sum->set_lock_wait_ns(sum->lock_wait_ns() + in.lock_wait_ns());
  sum->set_lock_blame_ns(sum->lock_blame_ns() + in.lock_blame_ns());
  sum->set_lock_unblamed_ns(sum->lock_unblamed_ns() + in.lock_unblamed_ns());
  sum->set_lock_wait_open_ns(sum->lock_wait_open_ns() + in.lock_wait_open_ns());
}

// Counters are increments: every field adds up.
void AddThreadCounters(const wire::ThreadCounters& in, wire::ThreadCounters* sum) {
  sum->set_samples(sum->samples() + in.samples());
  sum->set_partial_unwinds(sum->partial_unwinds() + in.partial_unwinds());
  sum->set_dropped_reentrant(sum->dropped_reentrant() + in.dropped_reentrant());
  sum->set_dropped_no_memory(sum->dropped_no_memory() + in.dropped_no_memory());
  sum->set_cpu_ns(sum->cpu_ns() + in.cpu_ns());
  sum->set_idle_samples(sum->idle_samples() + in.idle_samples());
  sum->set_idle_ns(sum->idle_ns() + in.idle_ns());
  sum->set_overhead_samples(sum->overhead_samples() + in.overhead_samples());
  sum->set_unattributed_overhead(sum->unattributed_overhead() + in.unattributed_overhead());
  sum->set_probe_samples(sum->probe_samples() + in.probe_samples());
  sum->set_probe_partial(sum->probe_partial() + in.probe_partial());
  sum->set_unsampled_ns(sum->unsampled_ns() + in.unsampled_ns());
  sum->set_signal_blocked(sum->signal_blocked() + in.signal_blocked());
  sum->set_deep_stacks(sum->deep_stacks() + in.deep_stacks());
  sum->set_deep_stack_frames_elided(sum->deep_stack_frames_elided() + in.deep_stack_frames_elided());
  // The agent sends the growth of its maximum: the increments sum to it (wire.proto).
  sum->set_deepest_stack(sum->deepest_stack() + in.deepest_stack());
  AddLockCounters(in, sum);
}

}  // namespace

size_t Session::NodeKeyHash::operator()(const NodeKey& k) const {
  // Mix the fields (splitmix64-style); collisions only cost a comparison.
  uint64_t h = k.offset * 0x9e3779b97f4a7c15ull;
  h ^= (uint64_t{k.parent} << 32 | k.module) + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
  h ^= uint64_t(k.kind) << 2 | uint64_t(k.edge);  // edge: wire::EdgeKind, 0..2
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  return static_cast<size_t>(h);
}

Status Session::Apply(const wire::AgentMessage& message) {
  if (!error_.ok()) return error_;
  Status status;
  switch (message.body_case()) {
    case wire::AgentMessage::kHello:
      status = ApplyHello(message.hello());
      break;
    case wire::AgentMessage::kDelta:
      if (!has_hello_) {
        status = Status::Error("a Delta arrived before the Hello (the first message must be Hello)");
      } else if (has_goodbye_) {
        status = Status::Error("a Delta arrived after the Goodbye");
      } else {
        status = ValidateDelta(message.delta());
        if (status.ok()) {
          MergeDelta(message.delta());
          ++deltas_applied_;
        }
      }
      break;
    case wire::AgentMessage::kGoodbye:
      if (!has_hello_) {
        status = Status::Error("a Goodbye arrived before the Hello (the first message must be Hello)");
      } else if (has_goodbye_) {
        status = Status::Error("a second Goodbye arrived");
      } else {
        has_goodbye_ = true;
        goodbye_ = message.goodbye();
      }
      break;
    default:
      status = Status::Error("an empty message (neither Hello, Delta nor Goodbye)");
      break;
  }
  if (!status.ok()) error_ = status;
  return status;
}

Status Session::ApplyHello(const wire::Hello& hello) {
  if (has_hello_) return Status::Error("a second Hello arrived on the same connection");
  if (hello.protocol_version() != kProtocolVersion) {
    return Status::Error(fmt::format(
        "the agent speaks protocol version {}, this aggregator speaks version {}; use an agent "
        "and an aggregator from the same Cilkprof release",
        hello.protocol_version(), kProtocolVersion));
  }
  std::set<std::string> names;
  for (const wire::MetricDescriptor& metric : hello.metrics()) {
    if (metric.name().empty()) return Status::Error("the Hello declares a metric without a name");
    if (!names.insert(metric.name()).second) {
      return Status::Error(fmt::format("the Hello declares metric \"{}\" twice", metric.name()));
    }
  }
  hello_ = hello;
  has_hello_ = true;
  thread_values_.set_metric_count(static_cast<size_t>(hello.metrics_size()));
  return Status::Ok();
}

Status Session::ValidateDelta(const wire::Delta& delta) const {
  if (delta.has_workspan()) CILKPROF_RETURN_IF_ERROR(workspan_.Validate(delta.workspan()));
  // Modules first: nodes of this Delta may refer to modules it introduces.
  std::unordered_map<uint32_t, const wire::LoadModule*> new_modules;
  auto same_identity = [](const ModuleIdentity& known, const wire::LoadModule& m) {
    return known.path == m.path() && known.build_id == m.build_id();
  };
  for (const wire::LoadModule& module : delta.modules()) {
    if (module.id() == 0) {
      return Status::Error(fmt::format("load module \"{}\" has id 0, which is reserved",
                                       module.path()));
    }
    if (auto it = connection_modules_.find(module.id()); it != connection_modules_.end()) {
      if (!same_identity(modules_[it->second], module)) {
        return Status::Error(fmt::format(
            "load module id {} changed from \"{}\" to \"{}\" (ids are never reused)", module.id(),
            modules_[it->second].path, module.path()));
      }
    }
    auto [it, inserted] = new_modules.emplace(module.id(), &module);
    if (!inserted && (it->second->path() != module.path() ||
                      it->second->build_id() != module.build_id())) {
      return Status::Error(fmt::format("load module id {} is announced twice with different files",
                                       module.id()));
    }
  }
  auto module_known = [&](uint32_t id) {
    return id == 0 || connection_modules_.count(id) > 0 || new_modules.count(id) > 0;
  };

  CILKPROF_RETURN_IF_ERROR(LockTable::Validate(delta.locks(), module_known));

  const size_t metric_count = static_cast<size_t>(hello_.metrics_size());
  // Node ids this Delta introduces, per thread (a thread may appear more than once),
  // with their parents' ids, and those of them that are FRAME_LOCK leaves.
  std::map<ThreadKey, std::unordered_map<uint32_t, uint32_t>> pending;
  std::map<ThreadKey, std::unordered_set<uint32_t>> pending_locks;
  std::set<ThreadKey> exiting;
  for (const wire::ThreadDelta& thread : delta.threads()) {
    const ThreadKey key{thread.thread_index(), thread.tid()};
    const auto existing = threads_.find(key);
    const ThreadState* state = existing == threads_.end() ? nullptr : &existing->second;
    if ((state != nullptr && state->exited) || exiting.count(key) > 0) {
      return Status::Error(fmt::format("{} sent data after its last (exited) delta",
                                       ThreadName(thread)));
    }
    std::unordered_map<uint32_t, uint32_t>& fresh = pending[key];
    std::unordered_set<uint32_t>& fresh_locks = pending_locks[key];
    auto defined = [&](uint32_t id) {
      return id == 0 || fresh.count(id) > 0 || (state != nullptr && state->node_map.count(id) > 0);
    };
    for (const wire::NewNode& node : thread.nodes()) {
      if (node.id() == 0) {
        return Status::Error(fmt::format("{} sends node id 0, which is the implicit root",
                                         ThreadName(thread)));
      }
      if (defined(node.id())) {
        // A node announced again (an agent re-declares its nodes at the head of a spill
        // file that starts mid-connection, so that the file can be imported alone) is
        // the same calling context if its parent is the same: the first definition
        // stays. Another parent is a protocol error.
        bool same_parent = false;
        if (auto f = fresh.find(node.id()); f != fresh.end()) {
          same_parent = f->second == node.parent();
        } else if (node.parent() == 0) {
          same_parent = nodes_[state->node_map.at(node.id())].parent == 0;
        } else if (auto p = state->node_map.find(node.parent()); p != state->node_map.end()) {
          // A parent new in this Delta or never declared cannot be the first one.
          same_parent = nodes_[state->node_map.at(node.id())].parent == p->second;
        }
        if (!same_parent) {
          return Status::Error(fmt::format("{} defines node {} twice, with different parents", ThreadName(thread),
                                           node.id()));
        }
        continue;
      }
      if (!defined(node.parent())) {
        return Status::Error(fmt::format("{}: node {} refers to unknown parent node {}",
                                         ThreadName(thread), node.id(), node.parent()));
      }
      if (!wire::FrameKind_IsValid(node.kind()) || !wire::EdgeKind_IsValid(node.edge())) {
        return Status::Error(fmt::format("{}: node {} has an unknown frame kind {} or edge kind {}",
                                         ThreadName(thread), node.id(), static_cast<int>(node.kind()),
                                         static_cast<int>(node.edge())));
      }
      if ((node.kind() == wire::FRAME_PC || node.kind() == wire::FRAME_LOCK) &&
          !module_known(node.module_id())) {
        return Status::Error(fmt::format("{}: node {} refers to unknown load module {}",
                                         ThreadName(thread), node.id(), node.module_id()));
      }
      // A lock is a leaf: the root, code and the partial-unwind and elided markers may
      // hold one, another lock may not (wire.proto FRAME_LOCK).
      const bool parent_is_lock =
          node.parent() != 0 &&
          (fresh_locks.count(node.parent()) > 0 ||
           (fresh.count(node.parent()) == 0 &&
            nodes_[state->node_map.at(node.parent())].kind == wire::FRAME_LOCK));
      if (parent_is_lock) {
        return Status::Error(fmt::format(
            "{}: node {} has lock node {} as its parent (a FRAME_LOCK node is a leaf)",
            ThreadName(thread), node.id(), node.parent()));
      }
      fresh.emplace(node.id(), node.parent());
      if (node.kind() == wire::FRAME_LOCK) fresh_locks.insert(node.id());
    }
    for (const wire::NodeMetrics& metrics : thread.metrics()) {
      if (!defined(metrics.node())) {
        return Status::Error(fmt::format("{}: metrics for unknown node {}", ThreadName(thread),
                                         metrics.node()));
      }
      if (static_cast<size_t>(metrics.values_size()) > metric_count) {
        return Status::Error(fmt::format(
            "{}: node {} carries {} metric values, but the Hello declared {} metrics",
            ThreadName(thread), metrics.node(), metrics.values_size(), metric_count));
      }
      for (double value : metrics.values()) {
        if (!std::isfinite(value)) {
          return Status::Error(fmt::format("{}: node {} carries a metric value that is not finite",
                                           ThreadName(thread), metrics.node()));
        }
      }
    }
    if (thread.exited()) exiting.insert(key);
  }
  // Timeline samples name nodes declared in this Delta or an earlier one (issue 16).
  // Chunks may follow a thread's exited delta: they carry its last events.
  auto node_declared = [&](uint32_t thread_index, uint32_t tid, uint32_t id) {
    if (id == 0) return true;
    const ThreadKey key{thread_index, tid};
    if (auto p = pending.find(key); p != pending.end() && p->second.count(id) > 0) return true;
    const auto t = threads_.find(key);
    return t != threads_.end() && t->second.node_map.count(id) > 0;
  };
  return TimelineTable::Validate(delta.timeline(), hello_.unix_minus_monotonic_ns(), node_declared);
}

uint32_t Session::MergedChild(uint32_t parent, const wire::NewNode& node) {
  NodeKey key{parent, 0, 0, static_cast<int>(node.kind()), static_cast<int>(node.edge())};
  // A lock's address is module-relative like code (wire.proto FRAME_LOCK).
  if (node.kind() == wire::FRAME_PC || node.kind() == wire::FRAME_LOCK) {
    key.module = node.module_id() == 0 ? 0 : connection_modules_.at(node.module_id());
    key.offset = node.offset();
  }
  return MergedChild(key);
}

uint32_t Session::MergedChild(const NodeKey& key) {
  auto [it, inserted] = node_index_.emplace(key, static_cast<uint32_t>(nodes_.size()));
  if (inserted) {
    MergedNode merged;
    merged.parent = key.parent;
    merged.module = key.module;
    merged.offset = key.offset;
    merged.kind = key.kind;
    merged.edge = key.edge;
    nodes_.push_back(std::move(merged));
  }
  return it->second;
}

void Session::MergeDelta(const wire::Delta& delta) {
  if (delta.has_workspan()) workspan_.Merge(delta.workspan());
  if (delta.flush_unix_ns() > last_flush_unix_ns_) {
    previous_flush_unix_ns_ = last_flush_unix_ns_;
    previous_flush_cpu_ns_ = last_flush_cpu_ns_;
    last_flush_unix_ns_ = delta.flush_unix_ns();
    last_flush_cpu_ns_ = delta.process_cpu_ns();
  }
  for (const wire::LoadModule& module : delta.modules()) {
    if (connection_modules_.count(module.id()) > 0) continue;  // e.g. marked unloaded
    auto [it, inserted] = module_index_.emplace(std::make_pair(module.path(), module.build_id()),
                                                static_cast<uint32_t>(modules_.size()));
    if (inserted) modules_.push_back(ModuleIdentity{module.path(), module.build_id()});
    connection_modules_.emplace(module.id(), it->second);
  }
  locks_.Merge(delta.locks(), [&](uint32_t id) { return connection_modules_.at(id); });
  for (const wire::ThreadDelta& thread : delta.threads()) {
    ThreadState& state = threads_[ThreadKey{thread.thread_index(), thread.tid()}];
    state.tid = thread.tid();
    state.thread_index = thread.thread_index();
    if (!thread.name().empty()) state.name = thread.name();
    state.in_window = true;
    for (const wire::NewNode& node : thread.nodes()) {
      if (state.node_map.count(node.id()) != 0) continue;  // announced again (see ValidateDelta)
      const uint32_t parent = node.parent() == 0 ? 0 : state.node_map.at(node.parent());
      state.node_map.emplace(node.id(), MergedChild(parent, node));
    }
    for (const wire::NodeMetrics& metrics : thread.metrics()) {
      const uint32_t merged = metrics.node() == 0 ? 0 : state.node_map.at(metrics.node());
      std::vector<double>& exclusive = nodes_[merged].exclusive;
      if (exclusive.size() < static_cast<size_t>(metrics.values_size())) {
        exclusive.resize(static_cast<size_t>(metrics.values_size()), 0.0);
      }
      for (int i = 0; i < metrics.values_size(); ++i) exclusive[i] += metrics.values(i);
      thread_values_.Add(ThreadKey{thread.thread_index(), thread.tid()}, merged, metrics.values().data(),
                         static_cast<size_t>(metrics.values_size()));
    }
    if (thread.has_counters()) AddThreadCounters(thread.counters(), &state.counters);
    if (thread.exited()) state.exited = true;
  }
  timeline_.Merge(delta.timeline(), hello_.unix_minus_monotonic_ns(),
                  [this](uint32_t thread_index, uint32_t tid, uint32_t id) {
                    return id == 0 ? 0u : threads_.at(ThreadKey{thread_index, tid}).node_map.at(id);
                  });
}

std::unique_ptr<Session> Session::TakeWindow(uint64_t end_unix_ns, bool last) {
  auto window = std::make_unique<Session>();
  window->has_hello_ = has_hello_;
  window->hello_ = hello_;
  window->warnings_ = warnings_;
  window->exec_chain_ = exec_chain_;
  window->modules_ = modules_;
  window->module_index_ = module_index_;
  window->deltas_applied_ = deltas_applied_ - deltas_before_window_;
  deltas_before_window_ = deltas_applied_;

  // The nodes with a value, and their ancestors: a parent's index is below its
  // children's, so one pass from the end marks every ancestor.
  std::vector<char> keep(nodes_.size(), 0);
  keep[0] = 1;
  timeline_.MarkNodes(&keep);  // the contexts of the window's timeline samples (issue 16)
  for (size_t i = nodes_.size(); i-- > 1;) {
    if (!keep[i]) {
      keep[i] = std::any_of(nodes_[i].exclusive.begin(), nodes_[i].exclusive.end(),
                            [](double v) { return v != 0.0; });
    }
    if (keep[i]) keep[nodes_[i].parent] = 1;
  }
  std::vector<uint32_t> index(nodes_.size(), 0);
  window->nodes_[0].exclusive = std::move(nodes_[0].exclusive);
  nodes_[0].exclusive.clear();
  for (size_t i = 1; i < nodes_.size(); ++i) {
    if (!keep[i]) continue;
    MergedNode& node = nodes_[i];
    index[i] = window->MergedChild(NodeKey{index[node.parent], node.module, node.offset, node.kind, node.edge});
    window->nodes_[index[i]].exclusive = std::move(node.exclusive);
    node.exclusive.clear();  // an empty vector is all zeros (MergeDelta resizes)
  }

  for (auto& [key, state] : threads_) {
    if (!state.in_window) continue;
    ThreadState& copy = window->threads_[key];
    copy.tid = state.tid;
    copy.thread_index = state.thread_index;
    copy.name = state.name;
    copy.exited = state.exited;
    copy.counters = state.counters;
    // The agent sends the growth of its deepest stack: keep the sum, the maximum so far.
    const uint64_t deepest = state.counters.deepest_stack();
    state.counters.Clear();
    state.counters.set_deepest_stack(deepest);
    state.in_window = false;
  }
  window->workspan_ = workspan_.TakeWindow();
  window->locks_ = locks_.TakeWindow();
  window->timeline_ = timeline_.TakeWindow(index);
  window->thread_values_ = thread_values_.TakeWindow(index);

  window->window_start_unix_ns_ = window_start_unix_ns_;
  window->window_end_unix_ns_ = end_unix_ns;
  window->earlier_windows_ = earlier_windows_;
  window_start_unix_ns_ = end_unix_ns;
  if (last) {
    window->has_goodbye_ = has_goodbye_;
    window->goodbye_ = goodbye_;
    window->drop_reasons_ = drop_reasons_;
    window->last_flush_unix_ns_ = last_flush_unix_ns_;
    window->last_flush_cpu_ns_ = last_flush_cpu_ns_;
    window->previous_flush_unix_ns_ = previous_flush_unix_ns_;
    window->previous_flush_cpu_ns_ = previous_flush_cpu_ns_;
  } else {
    window->window_cut_ = true;
    if (!window->RecordedNothing()) ++earlier_windows_;
  }
  return window;
}

void Session::MarkDropped(const std::string& reason) { drop_reasons_.push_back(reason); }

std::string Session::UnflushedTailWarning(uint64_t end_unix_ns) const {
  if (has_goodbye_ || last_flush_unix_ns_ == 0 || end_unix_ns <= last_flush_unix_ns_) return {};
  // The CPU rate of the interval before the last flush (or since the start), applied
  // to the time after it: an estimate, said as such.
  uint64_t from_unix = previous_flush_unix_ns_, from_cpu = previous_flush_cpu_ns_;
  if (from_unix == 0) from_unix = hello_.start_unix_ns(), from_cpu = 0;
  const double lost_s = double(end_unix_ns - last_flush_unix_ns_) / 1e9;
  double cpu_s = 0;
  if (from_unix != 0 && last_flush_unix_ns_ > from_unix && last_flush_cpu_ns_ >= from_cpu) {
    cpu_s = lost_s * double(last_flush_cpu_ns_ - from_cpu) / double(last_flush_unix_ns_ - from_unix);
  }
  return fmt::format(
      "the process ended {:.3f} s after the agent's last flush without the agent's last words (it "
      "was killed by a signal no handler sees, such as SIGKILL): what it did in that time, about "
      "{:.3f} s of CPU at its rate before, is not in this profile",
      lost_s, cpu_s);
}

uint64_t Session::SampleCount() const {
  uint64_t samples = 0;
  for (const auto& [key, state] : threads_) samples += state.counters.samples();
  return samples;
}

bool Session::RecordedNothing() const {
  if (!drop_reasons_.empty() || !workspan_.empty() || !locks_.empty()) return false;
  for (const auto& [key, state] : threads_) {
    const wire::ThreadCounters& c = state.counters;
    if (c.samples() != 0 || c.idle_samples() != 0 || c.probe_samples() != 0 ||
        c.dropped_reentrant() != 0 || c.dropped_no_memory() != 0) {
      return false;
    }
  }
  for (const MergedNode& node : nodes_) {
    for (double value : node.exclusive) {
      if (value != 0.0) return false;
    }
  }
  return true;
}

Status Session::FoldExecPredecessor(const Session& earlier) {
  if (!has_hello_ || !earlier.has_hello_) {
    return Status::Error("an image without a Hello cannot be part of an exec chain");
  }
  if (earlier.hello_.clock() != hello_.clock() || earlier.hello_.period_ns() != hello_.period_ns()) {
    return Status::Error(fmt::format("the images before and after exec were sampled differently "
                                     "({}, {} ns against {}, {} ns)",
                                     earlier.hello_.clock(), earlier.hello_.period_ns(),
                                     hello_.clock(), hello_.period_ns()));
  }
  auto same_metric = [](const wire::MetricDescriptor& a, const wire::MetricDescriptor& b) {
    return a.name() == b.name() && a.unit() == b.unit();
  };
  if (!std::equal(earlier.hello_.metrics().begin(), earlier.hello_.metrics().end(),
                  hello_.metrics().begin(), hello_.metrics().end(), same_metric)) {
    return Status::Error("the images before and after exec declare different metrics");
  }
  if (!earlier.workspan_.empty() && !workspan_.empty()) {
    return Status::Error("both images before and after exec measured work and span");
  }

  // The earlier tree, node by node: its nodes are stored parents first, so each
  // parent is mapped before its children.
  std::vector<uint32_t> module_map(earlier.modules_.size(), 0);
  for (size_t m = 1; m < earlier.modules_.size(); ++m) {
    const ModuleIdentity& module = earlier.modules_[m];
    auto [it, inserted] = module_index_.emplace(std::make_pair(module.path, module.build_id),
                                                static_cast<uint32_t>(modules_.size()));
    if (inserted) modules_.push_back(module);
    module_map[m] = it->second;
  }
  std::vector<uint32_t> node_map(earlier.nodes_.size(), 0);
  for (size_t i = 0; i < earlier.nodes_.size(); ++i) {
    const MergedNode& node = earlier.nodes_[i];
    if (i != 0) {
      node_map[i] = MergedChild(
          NodeKey{node_map[node.parent], module_map[node.module], node.offset, node.kind, node.edge});
    }
    std::vector<double>& exclusive = nodes_[node_map[i]].exclusive;
    if (exclusive.size() < node.exclusive.size()) exclusive.resize(node.exclusive.size(), 0.0);
    for (size_t v = 0; v < node.exclusive.size(); ++v) exclusive[v] += node.exclusive[v];
  }

  for (const auto& [key, before] : earlier.threads_) {
    auto [it, inserted] = threads_.emplace(key, ThreadState{});
    ThreadState& state = it->second;
    if (inserted) {
      // A thread exec ended: gone, with no node ids of this connection.
      state.tid = before.tid;
      state.thread_index = before.thread_index;
      state.name = before.name;
      state.exited = true;
    } else if (state.name.empty()) {
      state.name = before.name;
    }
    const wire::ThreadCounters& in = before.counters;
    wire::ThreadCounters& sum = state.counters;
    sum.set_samples(sum.samples() + in.samples());
    sum.set_partial_unwinds(sum.partial_unwinds() + in.partial_unwinds());
    sum.set_dropped_reentrant(sum.dropped_reentrant() + in.dropped_reentrant());
    sum.set_dropped_no_memory(sum.dropped_no_memory() + in.dropped_no_memory());
    sum.set_cpu_ns(sum.cpu_ns() + in.cpu_ns());
    sum.set_idle_samples(sum.idle_samples() + in.idle_samples());
    sum.set_idle_ns(sum.idle_ns() + in.idle_ns());
    sum.set_overhead_samples(sum.overhead_samples() + in.overhead_samples());
    sum.set_unattributed_overhead(sum.unattributed_overhead() + in.unattributed_overhead());
    sum.set_probe_samples(sum.probe_samples() + in.probe_samples());
    sum.set_probe_partial(sum.probe_partial() + in.probe_partial());
    AddLockCounters(in, &sum);
  }
  locks_.Fold(earlier.locks_, module_map);
  timeline_.Fold(earlier.timeline_, node_map);
  thread_values_.Fold(earlier.thread_values_, node_map);
  if (workspan_.empty()) workspan_ = earlier.workspan_;
  // The runtime an earlier image attached to, unless this one names its own: the
  // process ran on it (BuildProfile reads goodbye_.runtime() with or without a Goodbye).
  if (goodbye_.runtime().empty()) goodbye_.set_runtime(earlier.goodbye_.runtime());

  // Warnings the earlier image's agent gave that this one did not repeat.
  auto known = [&](const std::string& warning) {
    return std::find(hello_.warnings().begin(), hello_.warnings().end(), warning) !=
               hello_.warnings().end() ||
           std::find(warnings_.begin(), warnings_.end(), warning) != warnings_.end();
  };
  for (const std::string& warning : earlier.hello_.warnings()) {
    if (!known(warning)) warnings_.push_back(warning);
  }
  for (const std::string& warning : earlier.warnings_) {
    if (!known(warning)) warnings_.push_back(warning);
  }
  drop_reasons_.insert(drop_reasons_.begin(), earlier.drop_reasons_.begin(),
                       earlier.drop_reasons_.end());
  deltas_applied_ += earlier.deltas_applied_;
  // Continuous mode: the last windows of the images are one window from the first's start.
  if (earlier.window_start_unix_ns_ != 0 &&
      (window_start_unix_ns_ == 0 || earlier.window_start_unix_ns_ < window_start_unix_ns_)) {
    window_start_unix_ns_ = earlier.window_start_unix_ns_;
  }

  profile::ExecImage image;
  image.set_executable(earlier.hello_.executable());
  *image.mutable_argv() = earlier.hello_.argv();
  image.set_start_unix_ns(earlier.hello_.start_unix_ns());
  image.set_end_unix_ns(earlier.goodbye_.end_unix_ns());
  image.set_samples(earlier.SampleCount());
  std::vector<profile::ExecImage> chain = earlier.exec_chain_;
  chain.push_back(std::move(image));
  chain.insert(chain.end(), exec_chain_.begin(), exec_chain_.end());
  exec_chain_ = std::move(chain);
  return Status::Ok();
}

}  // namespace cilkprof::aggregator
