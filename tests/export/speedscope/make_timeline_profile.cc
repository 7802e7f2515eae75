// cilkprof_make_timeline_profile -o FILE: a small profile with a timeline (issue 16),
// for the speedscope export's per-thread profiles (speedscope_test.sh checks them
// against the numbers below). The tree: main -> fib -> [spawn] fib, with an inlined
// helper at one address; two worker threads whose timelines hold samples in every
// state and a steal.
#include <cstdio>
#include <string>

#include "cilkprof/aggregator/profile_io.h"

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "-o") {
    std::fprintf(stderr, "usage: cilkprof_make_timeline_profile -o FILE\n");
    return 2;
  }
  using namespace cilkprof;
  profile::Profile p;
  p.set_format_version(aggregator::kProfileFormatVersion);
  auto* process = p.mutable_process();
  process->set_pid(42);
  process->set_executable("/synthetic/timeline_program");
  process->add_argv("timeline_program");
  process->set_clock("cpu");
  process->set_period_ns(1'000'000);
  process->set_start_unix_ns(1'000'000'000);
  process->set_end_unix_ns(2'000'000'000);
  for (const char* name : {"samples", "work", "idleness", "overhead"}) {
    auto* metric = p.add_metrics();
    metric->set_name(name);
    metric->set_unit(std::string(name) == "samples" ? "count" : "ns");
  }
  p.add_modules();
  p.add_modules()->set_path("/synthetic/timeline_program");
  p.add_locations();
  auto add_location = [&](uint64_t offset, const char* function, uint32_t line, const char* inlined) {
    auto* location = p.add_locations();
    location->set_module(1);
    location->set_offset(offset);
    auto* frame = location->add_frames();
    frame->set_function(function);
    frame->set_file("/src/program.cpp");
    frame->set_line(line);
    frame->set_function_file("/src/program.cpp");
    frame->set_function_line(line - 2);
    if (inlined != nullptr) {
      auto* inner = location->add_frames();
      inner->set_function(inlined);
      inner->set_file("/src/helper.h");
      inner->set_line(7);
      inner->set_inlined(true);
      inner->set_function_file("/src/helper.h");
      inner->set_function_line(5);
    }
  };
  add_location(0x100, "main", 20, nullptr);        // location 1
  add_location(0x200, "fib(int)", 10, nullptr);    // location 2
  add_location(0x300, "fib(int)", 12, "add(int, int)");  // location 3: add inlined into fib

  // Nodes: 0 root, 1 main, 2 fib (call), 3 fib (spawn), 4 fib's inlined add (call).
  // Exclusive values: samples, work, idleness, overhead.
  auto add_node = [&](uint32_t parent, uint32_t location, wire::EdgeKind edge, std::initializer_list<double> values) {
    auto* node = p.add_nodes();
    node->set_parent(parent);
    node->set_kind(wire::FRAME_PC);
    node->set_location(location);
    node->set_edge(edge);
    for (double v : values) node->add_exclusive(v);
  };
  add_node(0, 0, wire::EDGE_CALL, {1, 0, 0, 1'000'000});        // unattributed overhead at the root
  add_node(0, 1, wire::EDGE_CALL, {});
  add_node(1, 2, wire::EDGE_CALL, {3, 3'000'000, 500'000, 0});
  add_node(2, 2, wire::EDGE_SPAWN, {3, 2'000'000, 0, 1'000'000});
  add_node(3, 3, wire::EDGE_CALL, {2, 2'000'000, 250'000, 0});

  for (uint32_t t = 0; t < 2; ++t) {
    auto* thread = p.add_threads();
    thread->set_tid(1000 + t);
    thread->set_thread_index(t);
  }
  p.mutable_threads(0)->set_name("timeline_progra");

  // Thread 0 (worker 0): work at node 2 three times, overhead at node 3, one steal.
  // Thread 1 (worker 1): work at node 3 once and node 4 twice, idle once, overhead once.
  auto* timeline = p.mutable_timeline();
  timeline->set_start_unix_ns(1'000'000'000);
  auto add_event = [](profile::TimelineTrack* track, uint64_t t, wire::TimelineEventKind kind,
                      wire::TimelineState state, uint32_t node) {
    track->add_time_ns(t);
    track->add_kind(kind);
    track->add_state(state);
    track->add_node(node);
  };
  auto* t0 = timeline->add_tracks();
  t0->set_thread_index(0);
  t0->set_tid(1000);
  t0->set_worker_id_plus_1(1);
  add_event(t0, 1'000'000, wire::TIMELINE_SAMPLE, wire::TIMELINE_WORKING, 2);
  add_event(t0, 2'000'000, wire::TIMELINE_SAMPLE, wire::TIMELINE_WORKING, 2);
  add_event(t0, 2'500'000, wire::TIMELINE_STEAL, wire::TIMELINE_STATE_UNKNOWN, 2);
  add_event(t0, 3'000'000, wire::TIMELINE_SAMPLE, wire::TIMELINE_OVERHEAD, 3);
  add_event(t0, 4'000'000, wire::TIMELINE_SAMPLE, wire::TIMELINE_WORKING, 2);
  auto* t1 = timeline->add_tracks();
  t1->set_thread_index(1);
  t1->set_tid(1001);
  t1->set_worker_id_plus_1(2);
  add_event(t1, 1'100'000, wire::TIMELINE_SAMPLE, wire::TIMELINE_IDLE, 0);
  add_event(t1, 2'100'000, wire::TIMELINE_SAMPLE, wire::TIMELINE_WORKING, 3);
  add_event(t1, 3'100'000, wire::TIMELINE_SAMPLE, wire::TIMELINE_WORKING, 4);
  add_event(t1, 4'100'000, wire::TIMELINE_SAMPLE, wire::TIMELINE_OVERHEAD, 0);
  add_event(t1, 5'100'000, wire::TIMELINE_SAMPLE, wire::TIMELINE_WORKING, 4);

  if (auto written = aggregator::WriteProfileFile(argv[2], p); !written.ok()) {
    std::fprintf(stderr, "%s\n", written.message().c_str());
    return 1;
  }
  return 0;
}
