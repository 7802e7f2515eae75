// Session -> profile::Profile: symbolization of each distinct location, thread and
// total counters, process information (see session.h).
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <map>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/session.h"

namespace cilkprof::aggregator {
namespace {

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
  if (has_goodbye_) {
    process->set_end_unix_ns(goodbye_.end_unix_ns() != 0 ? goodbye_.end_unix_ns() : end_unix_ns);
    process->set_end_reason(goodbye_.reason().empty() ? "exit" : goodbye_.reason());
  } else {
    process->set_end_unix_ns(end_unix_ns);
    process->set_end_reason("connection lost");
  }
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
  workspan_.Build(symbols, &out);  // the work/span call sites share the locations
  for (std::string& warning : symbols.Warnings()) process->add_warnings(std::move(warning));

  profile::Totals* totals = out.mutable_totals();
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
  }
  totals->set_connections_dropped(drop_reasons_.empty() ? 0 : 1);
  return out;
}

}  // namespace cilkprof::aggregator
