#include "views_test_profile.h"

#include <initializer_list>
#include <string>

namespace cilkprof::views::testing {
namespace {

struct FrameSpec {
  const char* function;
  const char* file;
  uint32_t line;
  const char* function_file;
  uint32_t function_line;
  bool inlined;
};

uint32_t AddLocation(profile::Profile& p, uint32_t module, uint64_t offset, std::initializer_list<FrameSpec> frames) {
  auto* location = p.add_locations();
  location->set_module(module);
  location->set_offset(offset);
  for (const auto& spec : frames) {
    auto* frame = location->add_frames();
    frame->set_function(spec.function);
    frame->set_file(spec.file);
    frame->set_line(spec.line);
    frame->set_function_file(spec.function_file);
    frame->set_function_line(spec.function_line);
    frame->set_inlined(spec.inlined);
  }
  return static_cast<uint32_t>(p.locations_size() - 1);
}

uint32_t AddNode(profile::Profile& p, uint32_t parent, uint32_t location, double samples, double work_ms,
                 wire::EdgeKind edge = wire::EDGE_CALL, wire::FrameKind kind = wire::FRAME_PC) {
  auto* node = p.add_nodes();
  node->set_parent(parent);
  node->set_kind(kind);
  node->set_location(location);
  node->set_edge(edge);
  if (samples != 0 || work_ms != 0) {
    node->add_exclusive(samples);
    node->add_exclusive(work_ms * 1e6);
  }
  return static_cast<uint32_t>(p.nodes_size() - 1);
}

// The profile's metric columns: "samples" counts, the others are ns.
void SetMetrics(profile::Profile& p, std::initializer_list<const char*> names) {
  p.clear_metrics();
  for (const char* name : names) {
    auto* metric = p.add_metrics();
    metric->set_name(name);
    metric->set_unit(name == std::string("samples") ? "count" : "ns");
  }
}

profile::Profile Skeleton() {
  profile::Profile p;
  p.set_format_version(1);
  auto* process = p.mutable_process();
  process->set_pid(42);
  process->set_executable("/bin/prog");
  process->add_argv("prog");
  process->add_argv("--size=3");
  process->set_start_unix_ns(1'000'000'000);
  process->set_end_unix_ns(1'250'000'000);
  process->set_clock("cpu");
  process->set_period_ns(1'000'000);
  process->set_unwind_mode("dwarf");
  process->set_end_reason("exit");
  auto* samples = p.add_metrics();
  samples->set_name("samples");
  samples->set_unit("count");
  auto* work = p.add_metrics();
  work->set_name("work");
  work->set_unit("ns");
  p.add_modules();  // 0: unknown
  p.add_modules()->set_path("/bin/prog");
  p.add_modules()->set_path("/lib/libm.so");
  p.add_locations();  // 0: unused
  p.add_nodes();      // 0: root
  return p;
}

}  // namespace

profile::Profile SmallProfile() {
  profile::Profile p = Skeleton();
  const uint32_t main10 = AddLocation(p, 1, 0x100, {{"main", "prog.c", 10, "prog.c", 5, false}});
  const uint32_t main11 = AddLocation(p, 1, 0x108, {{"main", "prog.c", 11, "prog.c", 5, false}});
  const uint32_t a21 = AddLocation(p, 1, 0x200, {{"a", "prog.c", 21, "prog.c", 18, false},
                                                 {"helper", "util.h", 3, "util.h", 1, true}});
  const uint32_t b30 = AddLocation(p, 1, 0x300, {{"b", "prog.c", 30, "prog.c", 28, false}});
  const uint32_t c40 = AddLocation(p, 1, 0x400, {{"c", "prog.c", 40, "prog.c", 38, false}});
  const uint32_t libm = AddLocation(p, 2, 0x50, {{"??", "", 0, "", 0, false}});

  const uint32_t main_node = AddNode(p, 0, main10, 1, 1);
  const uint32_t a_node = AddNode(p, main_node, a21, 2, 2);
  const uint32_t b_node = AddNode(p, a_node, b30, 3, 3);
  AddNode(p, b_node, libm, 1, 0.5);
  AddNode(p, main_node, c40, 4, 4, wire::EDGE_SPAWN);
  const uint32_t main_other = AddNode(p, 0, main11, 0, 0);
  AddNode(p, main_other, c40, 1, 1);
  const uint32_t partial = AddNode(p, 0, 0, 0, 0, wire::EDGE_CALL, wire::FRAME_PARTIAL_UNWIND);
  AddNode(p, partial, b30, 2, 2);

  p.add_threads()->set_tid(42);
  p.add_threads()->set_tid(43);
  auto* totals = p.mutable_totals();
  totals->set_samples(14);
  totals->set_partial_unwinds(2);
  return p;
}

profile::Profile RecursiveProfile(int depth) {
  profile::Profile p = Skeleton();
  const uint32_t main10 = AddLocation(p, 1, 0x100, {{"main", "prog.c", 10, "prog.c", 5, false}});
  const uint32_t f = AddLocation(p, 1, 0x500, {{"f(int)", "prog.c", 50, "prog.c", 48, false}});
  uint32_t parent = AddNode(p, 0, main10, 0, 0);
  for (int i = 0; i < depth; ++i) parent = AddNode(p, parent, f, 1, 1);
  p.add_threads()->set_tid(42);
  p.mutable_totals()->set_samples(static_cast<uint64_t>(depth));
  return p;
}

profile::Profile TaskProfile() {
  profile::Profile p = Skeleton();
  const uint32_t main10 = AddLocation(p, 1, 0x100, {{"main", "prog.c", 10, "prog.c", 5, false}});
  const uint32_t c40 = AddLocation(p, 1, 0x400, {{"c", "prog.c", 40, "prog.c", 38, false}});
  const uint32_t d60 = AddLocation(p, 1, 0x600, {{"d", "prog.c", 60, "prog.c", 58, false}});
  const uint32_t main_node = AddNode(p, 0, main10, 1, 1);
  const uint32_t task = AddNode(p, main_node, c40, 3, 3, wire::EDGE_TASK);
  AddNode(p, main_node, c40, 4, 4, wire::EDGE_SPAWN);
  AddNode(p, main_node, c40, 2, 2, wire::EDGE_CALL);
  AddNode(p, task, d60, 5, 5, wire::EDGE_TASK);
  p.add_threads()->set_tid(42);
  p.mutable_totals()->set_samples(15);
  return p;
}

profile::Profile BlameProfile() {
  profile::Profile p = Skeleton();
  SetMetrics(p, {"samples", "work", "idleness", "overhead"});
  const uint32_t main10 = AddLocation(p, 1, 0x100, {{"main", "prog.c", 10, "prog.c", 5, false}});
  const uint32_t main_node = AddNode(p, 0, main10, 0, 0);
  struct Row {
    const char* name;
    double work, idleness, overhead;
  };
  uint32_t d_node = 0;
  uint64_t offset = 0x1000;
  for (const Row& row : {Row{"A", 90, 4, 6}, Row{"B", 80, 4, 16}, Row{"C", 70, 24, 6}, Row{"D", 40, 30, 20}}) {
    const uint32_t location = AddLocation(p, 1, offset += 0x100, {{row.name, "prog.c", 20, "prog.c", 18, false}});
    auto* node = p.mutable_nodes(static_cast<int>(AddNode(p, main_node, location, 1, 0)));
    node->clear_exclusive();
    for (double v : {row.work / 10, row.work * 1e6, row.idleness * 1e6, row.overhead * 1e6}) node->add_exclusive(v);
    if (row.name == std::string("D")) d_node = static_cast<uint32_t>(p.nodes_size() - 1);
  }
  const uint32_t inlined = AddLocation(p, 1, 0x2000, {{"D", "prog.c", 21, "prog.c", 18, false},
                                                       {"helper", "util.h", 3, "util.h", 1, true}});
  auto* helper = p.mutable_nodes(static_cast<int>(AddNode(p, d_node, inlined, 1, 0)));
  helper->clear_exclusive();
  for (double v : {1.0, 10e6, 0.0, 0.0}) helper->add_exclusive(v);
  p.add_threads()->set_tid(42);
  auto* totals = p.mutable_totals();
  totals->set_samples(30);
  totals->set_idle_samples(7);
  totals->set_idle_ns(31'000'000);
  totals->set_overhead_samples(5);
  totals->set_unattributed_overhead(1);
  return p;
}

profile::Profile OpenMpGlueProfile() {
  profile::Profile p = Skeleton();
  SetMetrics(p, {"samples", "work", "idleness", "overhead"});
  const uint32_t main_node = AddNode(p, 0, AddLocation(p, 1, 0x100, {{"main", "prog.c", 10, "prog.c", 5, false}}), 0, 0);
  auto add = [&](uint32_t parent, uint64_t offset, const char* name, wire::EdgeKind edge, double work, double idleness) {
    const uint32_t location = AddLocation(p, 1, offset, {{name, "prog.c", 20, "prog.c", 18, false}});
    const uint32_t node = AddNode(p, parent, location, 0, 0, edge);
    if (work != 0 || idleness != 0) {
      auto* n = p.mutable_nodes(static_cast<int>(node));
      n->clear_exclusive();
      for (double v : {work / 10, work * 1e6, idleness * 1e6, 0.0}) n->add_exclusive(v);
    }
    return node;
  };
  const uint32_t region = add(main_node, 0x1000, ".omp_outlined.", wire::EDGE_TASK, 0, 0);
  add(region, 0x1100, "E", wire::EDGE_CALL, 60, 30);
  const uint32_t entry = add(main_node, 0x1200, ".omp_task_entry..3", wire::EDGE_TASK, 1, 0);
  add(entry, 0x1300, "F", wire::EDGE_CALL, 40, 0);
  add(main_node, 0x1400, "G._omp_fn.0", wire::EDGE_TASK, 50, 10);
  p.add_threads()->set_tid(42);
  auto* totals = p.mutable_totals();
  totals->set_samples(15);
  totals->set_idle_samples(4);
  totals->set_idle_ns(40'000'000);
  return p;
}

profile::Profile LockProfile() {
  profile::Profile p = Skeleton();
  SetMetrics(p, {"samples", "work", "idleness", "overhead", "lock_wait", "lock_blame"});
  p.add_modules()->set_path("/lib/x86_64-linux-gnu/libc.so.6");  // 3
  // Values in ms: work, idleness, overhead, lock_wait, lock_blame.
  auto node = [&](uint32_t parent, uint32_t location, std::initializer_list<double> ms,
                  wire::FrameKind kind = wire::FRAME_PC) {
    const uint32_t n = AddNode(p, parent, location, 0, 0, wire::EDGE_CALL, kind);
    auto* values = p.mutable_nodes(static_cast<int>(n))->mutable_exclusive();
    values->Clear();
    values->Add(ms.size() > 0 ? 1 : 0);
    for (double v : ms) values->Add(v * 1e6);
    return n;
  };
  const uint32_t main10 = AddLocation(p, 1, 0x100, {{"main", "prog.cc", 10, "prog.cc", 8, false}});
  const uint32_t worker31 = AddLocation(p, 1, 0x300, {{"worker(int)", "prog.cc", 31, "prog.cc", 29, false}});
  const uint32_t worker32 = AddLocation(p, 1, 0x308, {{"worker(int)", "prog.cc", 32, "prog.cc", 29, false}});
  const uint32_t hold22 = AddLocation(p, 1, 0x200, {{"hold_long()", "prog.cc", 22, "prog.cc", 19, false},
                                                    {"std::mutex::unlock()", "std_mutex.h", 118, "std_mutex.h", 116, true}});
  const uint32_t wait41 = AddLocation(p, 1, 0x400, {{"wait_here()", "prog.cc", 41, "prog.cc", 39, false},
                                                    {"std::mutex::lock()", "std_mutex.h", 100, "std_mutex.h", 98, true}});
  const uint32_t libc_lock = AddLocation(p, 3, 0x9000, {{"pthread_mutex_lock", "", 0, "", 0, false}});
  const uint32_t g_mutex = AddLocation(p, 1, 0x4040, {{"g_mutex", "prog.cc", 5, "", 0, false}});
  const uint32_t heap_lock = AddLocation(p, 0, 0x7f0000001000, {{"??", "", 0, "", 0, false}});

  const uint32_t main_node = node(0, main10, {10, 0, 0, 0, 0});
  const uint32_t worker = node(main_node, worker31, {100, 20, 15, 0, 0});
  const uint32_t hold = node(worker, hold22, {50, 0, 0, 0, 0});
  node(hold, g_mutex, {0, 0, 0, 0, 60}, wire::FRAME_LOCK);
  const uint32_t wait = node(worker, wait41, {5, 0, 0, 0, 0});
  const uint32_t libc = node(wait, libc_lock, {});
  node(libc, g_mutex, {0, 0, 0, 80, 0}, wire::FRAME_LOCK);
  const uint32_t worker_heap = node(main_node, worker32, {});
  node(worker_heap, heap_lock, {0, 0, 0, 20, 0}, wire::FRAME_LOCK);
  node(main_node, heap_lock, {0, 0, 0, 0, 15}, wire::FRAME_LOCK);

  auto* lock = p.add_locks();
  lock->set_location(g_mutex);
  lock->set_kind(wire::LOCK_MUTEX);
  lock->set_contended(40);
  lock->set_acquisitions(1200);  // estimated by the agent; the heap spinlock's is unknown (0)
  lock->set_wait_ns(80'000'000);
  lock->set_blame_ns(60'000'000);
  lock = p.add_locks();
  lock->set_location(heap_lock);
  lock->set_kind(wire::LOCK_SPIN);
  lock->set_contended(10);
  lock->set_wait_ns(20'000'000);
  lock->set_blame_ns(15'000'000);
  lock->set_timeouts(2);

  p.add_threads()->set_tid(42);
  p.add_threads()->set_tid(43);
  auto* totals = p.mutable_totals();
  totals->set_samples(300);
  totals->set_lock_acquisitions(1000);
  totals->set_lock_contended(50);
  totals->set_lock_wait_ns(100'000'000);
  totals->set_lock_blame_ns(75'000'000);
  totals->set_lock_unblamed_ns(25'000'000);
  return p;
}

}  // namespace cilkprof::views::testing
