#include "timeline_test_profile.h"

#include <initializer_list>

namespace cilkprof::timeline_testing {
namespace {

constexpr uint64_t kMs = 1'000'000;

uint32_t AddLocation(profile::Profile& p, std::initializer_list<std::pair<const char*, bool>> frames) {
  auto* location = p.add_locations();
  location->set_module(1);
  location->set_offset(0x1000 + 0x10 * static_cast<uint64_t>(p.locations_size()));
  for (const auto& [function, inlined] : frames) {
    auto* frame = location->add_frames();
    frame->set_function(function);
    frame->set_file("prog.cc");
    frame->set_line(10);
    frame->set_inlined(inlined);
  }
  return static_cast<uint32_t>(p.locations_size() - 1);
}

uint32_t AddNode(profile::Profile& p, uint32_t parent, uint32_t location, wire::EdgeKind edge, double samples) {
  auto* node = p.add_nodes();
  node->set_parent(parent);
  node->set_kind(wire::FRAME_PC);
  node->set_location(location);
  node->set_edge(edge);
  node->add_exclusive(samples);
  node->add_exclusive(samples * kMs);
  return static_cast<uint32_t>(p.nodes_size() - 1);
}

struct Event {
  double ms;
  wire::TimelineEventKind kind;
  wire::TimelineState state;
  uint32_t node;
};

void AddTrack(profile::Timeline* timeline, uint32_t thread_index, uint32_t tid, uint32_t worker_plus_1,
              std::initializer_list<Event> events) {
  auto* track = timeline->add_tracks();
  track->set_thread_index(thread_index);
  track->set_tid(tid);
  track->set_worker_id_plus_1(worker_plus_1);
  for (const Event& e : events) {
    track->add_time_ns(static_cast<uint64_t>(e.ms * kMs));
    track->add_kind(e.kind);
    track->add_state(e.state);
    track->add_node(e.node);
  }
}

}  // namespace

profile::Profile ProfileWithoutTimeline() {
  profile::Profile p;
  p.set_format_version(1);
  auto* process = p.mutable_process();
  process->set_pid(4242);
  process->set_executable("/opt/bin/prog");
  process->set_start_unix_ns(1'000'000'000);
  process->set_end_unix_ns(1'000'000'000 + 13 * kMs);
  process->set_clock("cpu");
  process->set_period_ns(kMs);
  process->set_unwind_mode("dwarf");
  process->set_end_reason("exit");
  for (const char* name : {"samples", "work"}) {
    auto* metric = p.add_metrics();
    metric->set_name(name);
    metric->set_unit(name == std::string("samples") ? "count" : "ns");
  }
  p.add_modules();
  p.add_modules()->set_path("/opt/bin/prog");
  p.add_locations();
  const uint32_t main_at = AddLocation(p, {{"main", false}});
  const uint32_t compute_at = AddLocation(p, {{"compute(int)", false}});
  const uint32_t leaf_at = AddLocation(p, {{"leaf_work(int)", false}, {"helper()", true}});
  auto* root = p.add_nodes();
  root->set_kind(wire::FRAME_PC);
  const uint32_t main_node = AddNode(p, 0, main_at, wire::EDGE_CALL, 12);
  const uint32_t compute = AddNode(p, main_node, compute_at, wire::EDGE_CALL, 7);
  AddNode(p, compute, leaf_at, wire::EDGE_SPAWN, 7);
  for (const auto& [index, tid, name] : {std::tuple{0u, 101u, "prog"}, {1u, 102u, "prog"}, {2u, 100u, "main"}}) {
    auto* thread = p.add_threads();
    thread->set_thread_index(index);
    thread->set_tid(tid);
    thread->set_name(name);
  }
  p.mutable_totals()->set_samples(26);
  return p;
}

profile::Profile TimelineProfile() {
  using wire::TIMELINE_SAMPLE, wire::TIMELINE_STEAL, wire::TIMELINE_SYNC_WAIT_BEGIN, wire::TIMELINE_SYNC_WAIT_END;
  constexpr auto kNone = wire::TIMELINE_STATE_UNKNOWN, kWorking = wire::TIMELINE_WORKING,
                 kIdle = wire::TIMELINE_IDLE, kOverhead = wire::TIMELINE_OVERHEAD,
                 kLock = wire::TIMELINE_LOCK_WAIT, kOther = wire::TIMELINE_NOT_A_WORKER;
  profile::Profile p = ProfileWithoutTimeline();
  auto* timeline = p.mutable_timeline();
  timeline->set_start_unix_ns(p.process().start_unix_ns());
  AddTrack(timeline, 0, 101, 1,
           {{1, TIMELINE_SAMPLE, kWorking, 3},
            {2, TIMELINE_SAMPLE, kWorking, 3},
            {3, TIMELINE_SAMPLE, kWorking, 3},
            {4, TIMELINE_SAMPLE, kWorking, 3},
            {5, TIMELINE_SAMPLE, kWorking, 2},
            {5.5, TIMELINE_SYNC_WAIT_BEGIN, kNone, 0},
            {6, TIMELINE_SAMPLE, kIdle, 0},
            {7, TIMELINE_SAMPLE, kIdle, 0},
            {7.5, TIMELINE_SYNC_WAIT_END, kNone, 0},
            {8, TIMELINE_SAMPLE, kWorking, 2},
            {12, TIMELINE_SAMPLE, kWorking, 2}});
  AddTrack(timeline, 1, 102, 2,
           {{1, TIMELINE_SAMPLE, kIdle, 0},
            {2, TIMELINE_SAMPLE, kIdle, 0},
            {2.5, TIMELINE_STEAL, kNone, 1},
            {3, TIMELINE_SAMPLE, kWorking, 3},
            {4, TIMELINE_SAMPLE, kWorking, 3},
            {5, TIMELINE_SAMPLE, kWorking, 3},
            {6, TIMELINE_SAMPLE, kOverhead, 2},
            {7, TIMELINE_SAMPLE, kLock, 2},
            {8, TIMELINE_SAMPLE, kLock, 2}});
  AddTrack(timeline, 2, 100, 0,
           {{1, TIMELINE_SAMPLE, kOther, 1},
            {2, TIMELINE_SAMPLE, kOther, 1},
            {3, TIMELINE_SAMPLE, kOther, 1},
            {4, TIMELINE_SAMPLE, kOther, 1},
            {5, TIMELINE_SAMPLE, kOther, 1},
            {6, TIMELINE_SAMPLE, kOther, 1},
            {7, TIMELINE_SAMPLE, kOther, 1},
            {8, TIMELINE_SAMPLE, kOther, 1},
            {9, TIMELINE_SAMPLE, kOther, 1},
            {10, TIMELINE_SAMPLE, kOther, 1},
            {11, TIMELINE_SAMPLE, kOther, 1},
            {12, TIMELINE_SAMPLE, kOther, 1}});
  return p;
}

}  // namespace cilkprof::timeline_testing
