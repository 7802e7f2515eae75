// Session -> profile::Profile: symbolization of each distinct location, thread and
// total counters, process information (see session.h).
#include <fmt/format.h>

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <exception>
#include <map>
#include <vector>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/session.h"

namespace cilkprof::aggregator {
namespace {

// Hello.sample_source of an agent that armed no sample source (CILKPROF_SAMPLE_SOURCE=none).
constexpr const char* kNoSampleSource = "none";

profile::SourceFrame UnknownFrame(const std::string& function) {
  profile::SourceFrame frame;
  frame.set_function(function);
  return frame;
}

// Calls the symbol source defensively: it is another component, and a profile must be
// written even if symbolizing one address goes wrong.
std::vector<profile::SourceFrame> SymbolizeOne(SymbolSource& symbols, const std::string& path,
                                               const std::string& build_id, uint64_t offset) {
  std::vector<profile::SourceFrame> frames;
  try {
    frames = symbols.Symbolize(path, build_id, offset);
  } catch (const std::exception&) {
    frames.clear();
  }
  if (frames.empty()) frames.push_back(UnknownFrame("??"));
  return frames;
}

// The data object at a lock's address (issue 14), as defensively as code: one frame.
profile::SourceFrame SymbolizeDataOne(SymbolSource& symbols, const std::string& path,
                                      const std::string& build_id, uint64_t offset) {
  profile::SourceFrame frame;
  try {
    frame = symbols.SymbolizeData(path, build_id, offset);
  } catch (const std::exception&) {
    frame.Clear();
  }
  if (frame.function().empty()) frame.set_function("??");
  return frame;
}

// Time the samples did not cover (issue 11; docs/AGENT.md, "Unsampled time"), summed
// over the threads, with what the warnings need to name its causes.
struct UnsampledTime {
  uint64_t measured_ns = 0;          // the threads' clock time: sampled, idle and unsampled
  uint64_t unsampled_ns = 0;
  uint64_t blocked_threads = 0;      // threads found with the sampling signal blocked
  uint64_t blocked_unsampled_ns = 0;
  uint64_t short_threads = 0;        // threads that ended before their first sample
  uint64_t threads = 0;

  void Add(const wire::ThreadCounters& c) {
    ++threads;
    measured_ns += c.cpu_ns() + c.idle_ns() + c.unsampled_ns();
    unsampled_ns += c.unsampled_ns();
    if (c.signal_blocked() != 0) {
      ++blocked_threads;
      blocked_unsampled_ns += c.unsampled_ns();
    } else if (c.samples() == 0 && c.idle_samples() == 0 && c.unsampled_ns() != 0) {
      ++short_threads;
    }
  }
};

// Totals.deep_stack_samples and deep_stack_truncated, from the tree: the samples of
// every node at or under a FRAME_ELIDED node (parents come before children).
void CountDeepStacks(const profile::Profile& profile, profile::Totals* totals) {
  enum : uint8_t { kNone = 0, kElided = 1, kUnderPartial = 2 };
  int samples_metric = -1;
  for (int m = 0; m < profile.metrics_size(); ++m) {
    if (profile.metrics(m).name() == "samples") samples_metric = m;
  }
  if (samples_metric < 0) return;
  const int count = profile.nodes_size();
  std::vector<uint8_t> state(static_cast<size_t>(count), kNone);
  uint64_t deep = 0, truncated = 0;
  for (int i = 1; i < count; ++i) {
    const profile::Node& node = profile.nodes(i);
    const uint32_t parent = node.parent() < static_cast<uint32_t>(i) ? node.parent() : 0;
    uint8_t s = state[parent];
    if (node.kind() == wire::FRAME_PARTIAL_UNWIND) s |= kUnderPartial;
    if (node.kind() == wire::FRAME_ELIDED) s |= kElided;
    state[static_cast<size_t>(i)] = s;
    if ((s & kElided) == 0 || node.exclusive_size() <= samples_metric) continue;
    const auto samples = static_cast<uint64_t>(node.exclusive(samples_metric));
    deep += samples;
    if ((s & kUnderPartial) != 0) truncated += samples;
  }
  totals->set_deep_stack_samples(deep);
  totals->set_deep_stack_truncated(truncated);
}

std::string Duration(uint64_t ns) {
  if (ns >= 1000000000) return fmt::format("{:.2f} s", ns / 1e9);
  return fmt::format("{:.1f} ms", ns / 1e6);
}

std::string SignalName(uint32_t signo) {
  const char* abbrev = signo != 0 ? sigabbrev_np(static_cast<int>(signo)) : nullptr;
  if (abbrev != nullptr) return fmt::format("SIG{}", abbrev);
  return fmt::format("signal {}", signo);
}

// One warning per cause that matters: more than ten sampling periods, and for the time
// lost in general (a tail below one period per thread is normal) a tenth of the total,
// for unseen threads a twentieth.
void WarnAboutUnsampledTime(const wire::Hello& hello, const UnsampledTime& t, uint64_t unseen_ns,
                            profile::ProcessInfo* process) {
  const uint64_t period = hello.period_ns() != 0 ? hello.period_ns() : 1000000;
  const uint64_t noticeable = 10 * period;
  const std::string clock = hello.clock() == "wall" ? "wall-clock" : "CPU";
  if (t.blocked_threads != 0 && t.blocked_unsampled_ns >= noticeable) {
    process->add_warnings(fmt::format(
        "{} thread{} ran with the sampling signal ({}) blocked, so {} of {} time was not "
        "sampled and is missing from the profile: the program blocked the signal with a direct "
        "rt_sigprocmask system call, or the thread{} started with it blocked in a way the agent "
        "does not interpose (docs/AGENT.md, \"Signal masks\")",
        t.blocked_threads, t.blocked_threads == 1 ? "" : "s", SignalName(hello.profiling_signal()),
        Duration(t.blocked_unsampled_ns), clock, t.blocked_threads == 1 ? "" : "s"));
  }
  const uint64_t other_ns = t.unsampled_ns - t.blocked_unsampled_ns;
  if (other_ns >= noticeable && other_ns * 10 >= t.measured_ns) {
    std::string why;
    if (t.short_threads != 0) {
      why = fmt::format(": {} of the {} threads ended before their first sample, which comes after "
                        "one sampling period ({}) of a thread's own time; sample short threads with "
                        "a shorter period (--period)",
                        t.short_threads, t.threads, Duration(period));
    }
    process->add_warnings(fmt::format(
        "{} ({:.1f}%) of the {} time measured in the program's threads came after each thread's "
        "last sample and is missing from the profile{}",
        Duration(other_ns), 100.0 * other_ns / t.measured_ns, clock, why));
  }
  // Each registered thread also runs a few microseconds after it unregisters (its exit
  // in the C library and the kernel), which counts as unseen: allow 100 us per thread.
  const uint64_t thread_exits_ns = 100000 * t.threads;
  if (unseen_ns >= noticeable && unseen_ns >= thread_exits_ns &&
      unseen_ns * 20 >= t.measured_ns + unseen_ns) {
    process->add_warnings(fmt::format(
        "{} of CPU time was used by threads the agent never saw (started inside the C library, "
        "e.g. for SIGEV_THREAD timers or mq_notify, or with a raw clone system call); they were "
        "not sampled and are missing from the profile",
        Duration(unseen_ns)));
  }
}

// Totals' lock fields (issue 14): sums of the threads' fields of the same names.
void AddLockTotals(const wire::ThreadCounters& c, profile::Totals* totals) {
  totals->set_lock_acquisitions(totals->lock_acquisitions() + c.lock_acquisitions());
  totals->set_lock_contended(totals->lock_contended() + c.lock_contended());
  totals->set_lock_wait_ns(totals->lock_wait_ns() + c.lock_wait_ns());
  totals->set_lock_blame_ns(totals->lock_blame_ns() + c.lock_blame_ns());
  totals->set_lock_unblamed_ns(totals->lock_unblamed_ns() + c.lock_unblamed_ns());
  totals->set_lock_wait_open_ns(totals->lock_wait_open_ns() + c.lock_wait_open_ns());
}

void FillProcess(const wire::Hello& hello, profile::ProcessInfo* process) {
  process->set_pid(hello.pid());
  process->set_ppid(hello.ppid());
  process->set_executable(hello.executable());
  *process->mutable_argv() = hello.argv();
  process->set_hostname(hello.hostname());
  process->set_start_unix_ns(hello.start_unix_ns());
  process->set_clock(hello.clock());
  process->set_sample_source(hello.sample_source());
  process->set_period_ns(hello.period_ns());
  process->set_unwind_mode(hello.unwind_mode());
  *process->mutable_warnings() = hello.warnings();
  process->set_profiling_signal(hello.profiling_signal());
}

}  // namespace

profile::Profile Session::BuildProfile(SymbolSource& symbols, uint64_t end_unix_ns) const {
  profile::Profile out;
  out.set_format_version(kProfileFormatVersion);
  profile::ProcessInfo* process = out.mutable_process();
  FillProcess(hello_, process);
  // A process that exec'd started with its first image (see FoldExecPredecessor).
  *process->mutable_exec_chain() = {exec_chain_.begin(), exec_chain_.end()};
  if (!exec_chain_.empty() && exec_chain_.front().start_unix_ns() != 0) {
    process->set_start_unix_ns(exec_chain_.front().start_unix_ns());
  }
  if (window_cut_) {
    // A window of a process that went on (continuous mode): no end yet.
    process->set_end_unix_ns(window_end_unix_ns_);
    process->set_end_reason("window");
  } else if (has_goodbye_) {
    process->set_end_unix_ns(goodbye_.end_unix_ns() != 0 ? goodbye_.end_unix_ns() : end_unix_ns);
    process->set_end_reason(goodbye_.reason().empty() ? "exit" : goodbye_.reason());
  } else {
    process->set_end_unix_ns(end_unix_ns);
    process->set_end_reason("connection lost");
    if (std::string lost = UnflushedTailWarning(end_unix_ns); !lost.empty()) process->add_warnings(lost);
  }
  if (window_start_unix_ns_ != 0) {
    // Continuous mode: the window, and the time its data covers (profile.proto).
    process->set_window_start_unix_ns(window_start_unix_ns_);
    process->set_window_end_unix_ns(window_cut_ ? window_end_unix_ns_ : process->end_unix_ns());
    process->set_start_unix_ns(std::max(process->start_unix_ns(), window_start_unix_ns_));
  }
  // Also when the last image lost its connection: FoldExecPredecessor may have carried
  // an earlier image's runtime into goodbye_.
  process->set_runtime(goodbye_.runtime());
  for (const std::string& reason : drop_reasons_) {
    process->add_warnings(fmt::format(
        "the agent's connection was dropped for bad data ({}); the profile holds what arrived "
        "before it",
        reason));
  }
  for (const std::string& warning : warnings_) process->add_warnings(warning);
  *out.mutable_metrics() = hello_.metrics();

  for (const ModuleIdentity& module : modules_) {
    profile::Module* m = out.add_modules();
    m->set_path(module.path);
    m->set_build_id(module.build_id);
  }

  out.add_locations();  // locations[0] is unused
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> location_index;
  // Lock objects (FRAME_LOCK nodes and Profile.locks) are data, symbolized as variables,
  // in locations of their own: one per lock, shared by its nodes and its Lock entry.
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> data_location_index;
  auto data_location = [&](uint32_t module, uint64_t offset) {
    auto [it, inserted] = data_location_index.emplace(std::make_pair(module, offset),
                                                      static_cast<uint32_t>(out.locations_size()));
    if (inserted) {
      profile::Location* location = out.add_locations();
      location->set_module(module);
      location->set_offset(offset);
      *location->add_frames() =
          module == 0 ? UnknownFrame(fmt::format("0x{:x}", offset))
                      : SymbolizeDataOne(symbols, modules_[module].path, modules_[module].build_id, offset);
    }
    return it->second;
  };
  out.mutable_nodes()->Reserve(static_cast<int>(nodes_.size()));
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const MergedNode& node = nodes_[i];
    profile::Node* n = out.add_nodes();
    n->set_parent(node.parent);
    n->set_kind(static_cast<wire::FrameKind>(node.kind));
    n->set_edge(static_cast<wire::EdgeKind>(node.edge));
    // Trailing zeros are implied (profile.proto: "may be shorter").
    size_t used = node.exclusive.size();
    while (used > 0 && node.exclusive[used - 1] == 0.0) --used;
    for (size_t m = 0; m < used; ++m) n->add_exclusive(node.exclusive[m]);
    if (i != 0 && node.kind == wire::FRAME_LOCK) n->set_location(data_location(node.module, node.offset));
    if (i == 0 || node.kind != wire::FRAME_PC) continue;
    auto [it, inserted] = location_index.emplace(std::make_pair(node.module, node.offset),
                                                 static_cast<uint32_t>(out.locations_size()));
    if (inserted) {
      profile::Location* location = out.add_locations();
      location->set_module(node.module);
      location->set_offset(node.offset);
      std::vector<profile::SourceFrame> frames =
          node.module == 0
              ? std::vector<profile::SourceFrame>{UnknownFrame(fmt::format("0x{:x}", node.offset))}
              : SymbolizeOne(symbols, modules_[node.module].path, modules_[node.module].build_id,
                             node.offset);
      for (profile::SourceFrame& frame : frames) *location->add_frames() = std::move(frame);
    }
    n->set_location(it->second);
  }
  locks_.Build(data_location, &out);
  CountDeepStacks(out, out.mutable_totals());
  workspan_.Build(symbols, &out);  // the work/span call sites share the locations
  timeline_.Build(process->start_unix_ns(), &out);  // issue 16
  for (std::string& warning : symbols.Warnings()) process->add_warnings(std::move(warning));

  profile::Totals* totals = out.mutable_totals();
  UnsampledTime unsampled;
  for (const auto& [key, state] : threads_) {  // ordered by (thread_index, tid)
    profile::ThreadInfo* thread = out.add_threads();
    thread->set_tid(state.tid);
    thread->set_name(state.name);
    thread->set_thread_index(state.thread_index);
    *thread->mutable_counters() = state.counters;
    thread->set_exited(state.exited);
    totals->set_samples(totals->samples() + state.counters.samples());
    totals->set_partial_unwinds(totals->partial_unwinds() + state.counters.partial_unwinds());
    totals->set_dropped_reentrant(totals->dropped_reentrant() + state.counters.dropped_reentrant());
    totals->set_dropped_no_memory(totals->dropped_no_memory() + state.counters.dropped_no_memory());
    totals->set_idle_samples(totals->idle_samples() + state.counters.idle_samples());
    totals->set_idle_ns(totals->idle_ns() + state.counters.idle_ns());
    totals->set_overhead_samples(totals->overhead_samples() + state.counters.overhead_samples());
    totals->set_unattributed_overhead(totals->unattributed_overhead() +
                                      state.counters.unattributed_overhead());
    totals->set_probe_samples(totals->probe_samples() + state.counters.probe_samples());
    totals->set_probe_partial(totals->probe_partial() + state.counters.probe_partial());
    unsampled.Add(state.counters);
    totals->set_deep_stack_frames_elided(totals->deep_stack_frames_elided() +
                                         state.counters.deep_stack_frames_elided());
    totals->set_deepest_stack(std::max(totals->deepest_stack(), state.counters.deepest_stack()));
    AddLockTotals(state.counters, totals);
  }
  {
    std::map<ThreadKey, uint32_t> positions;  // out.threads is in threads_' order
    uint32_t position = 0;
    for (const auto& entry : threads_) positions.emplace(entry.first, position++);
    thread_values_.Build(positions, &out);  // issue 16
  }
  totals->set_connections_dropped(drop_reasons_.empty() ? 0 : 1);
  totals->set_unsampled_ns(unsampled.unsampled_ns);
  totals->set_signal_blocked_threads(unsampled.blocked_threads);
  totals->set_signal_blocked_unsampled_ns(unsampled.blocked_unsampled_ns);
  totals->set_unseen_thread_cpu_ns(has_goodbye_ ? goodbye_.unseen_thread_cpu_ns() : 0);
  // A run without sampling (CILKPROF_SAMPLE_SOURCE=none) meant to take no samples: none
  // is missing. (Its agent sends no unsampled time either; this covers what it could not
  // measure away, e.g. a connection lost before the Goodbye.)
  if (hello_.sample_source() != kNoSampleSource) {
    WarnAboutUnsampledTime(hello_, unsampled, totals->unseen_thread_cpu_ns(), process);
  }
  return out;
}

}  // namespace cilkprof::aggregator
