// Grafting a second, instrumented run's work/span figures into a sampled run's profile
// (aggregator/workspan_graft.h; `cilkprof run --workspan=separate`).
#include "cilkprof/aggregator/workspan_graft.h"

#include <gtest/gtest.h>

#include <string>

namespace cilkprof::aggregator {
namespace {

profile::Module* AddModule(profile::Profile* p, const std::string& path, const std::string& build_id) {
  profile::Module* m = p->add_modules();
  m->set_path(path);
  m->set_build_id(build_id);
  return m;
}

uint32_t AddLocation(profile::Profile* p, uint32_t module, uint64_t offset, const std::string& function) {
  profile::Location* l = p->add_locations();
  l->set_module(module);
  l->set_offset(offset);
  l->add_frames()->set_function(function);
  return static_cast<uint32_t>(p->locations_size() - 1);
}

// The sampled run: the program and libc, with two sampled addresses.
profile::Profile Sampled() {
  profile::Profile p;
  p.mutable_process()->set_pid(100);
  p.mutable_process()->set_executable("/bin/prog");
  AddModule(&p, "", "");
  AddModule(&p, "/lib/libc.so.6", "libc-id");
  AddModule(&p, "/bin/prog", "prog-id");
  p.add_locations();  // [0] unused
  AddLocation(&p, 2, 0x1000, "main");   // 1
  AddLocation(&p, 1, 0x5000, "memcpy");  // 2
  return p;
}

// The instrumented run: other indexes, one address the sampled run has, one it has
// not, and a module (libcilk) it never sampled.
profile::Profile Instrumented() {
  profile::Profile p;
  p.mutable_process()->set_pid(200);
  p.mutable_process()->set_executable("/bin/prog");
  p.mutable_process()->set_start_unix_ns(1'000'000'000);
  p.mutable_process()->set_end_unix_ns(3'500'000'000);
  AddModule(&p, "", "");
  AddModule(&p, "/bin/prog", "prog-id");
  AddModule(&p, "/lib/libcilk.so.2", "cilk-id");
  p.add_locations();
  AddLocation(&p, 2, 0x700, "cilk::run");  // 1
  AddLocation(&p, 1, 0x2000, "fib");        // 2
  AddLocation(&p, 1, 0x1000, "main");       // 3: the sampled run's 1
  profile::WorkSpan* ws = p.mutable_workspan();
  ws->set_clock("tsc");
  ws->set_unit("ns");
  ws->set_work(900);
  ws->set_span(300);
  profile::CallSite* call = ws->add_call_sites();
  call->set_kind(wire::WORKSPAN_CALL);
  call->set_location(3);
  call->set_callee_location(2);
  call->set_count(1);
  call->set_work_on_work(900);
  profile::CallSite* spawn = ws->add_call_sites();
  spawn->set_kind(wire::WORKSPAN_SPAWN);
  spawn->set_location(2);
  spawn->set_parent_location(1);
  spawn->set_count(7);
  return p;
}

TEST(WorkSpanGraft, MapsEveryLocationToTheSampledProfilesOwn) {
  profile::Profile sampled = Sampled();
  const profile::Profile instrumented = Instrumented();
  ASSERT_TRUE(GraftWorkSpan(instrumented, &sampled).ok());

  ASSERT_TRUE(sampled.has_workspan());
  const profile::WorkSpan& ws = sampled.workspan();
  EXPECT_EQ(ws.work(), 900u);
  EXPECT_EQ(ws.span(), 300u);
  EXPECT_EQ(ws.separate_run_pid(), 200u);
  EXPECT_EQ(ws.separate_run_ns(), 2'500'000'000u);
  ASSERT_EQ(ws.call_sites_size(), 2);

  // The call's location is the sampled run's own `main` (no second copy of it).
  const profile::CallSite& call = ws.call_sites(0);
  EXPECT_EQ(call.location(), 1u);
  EXPECT_EQ(call.parent_location(), 0u);
  // New addresses are added with their frames, in their modules.
  const profile::Location& fib = sampled.locations(static_cast<int>(call.callee_location()));
  EXPECT_EQ(fib.frames(0).function(), "fib");
  EXPECT_EQ(fib.offset(), 0x2000u);
  EXPECT_EQ(sampled.modules(static_cast<int>(fib.module())).path(), "/bin/prog");
  const profile::CallSite& spawn = ws.call_sites(1);
  EXPECT_EQ(spawn.location(), call.callee_location());  // one location for one address
  const profile::Location& run = sampled.locations(static_cast<int>(spawn.parent_location()));
  EXPECT_EQ(run.frames(0).function(), "cilk::run");
  EXPECT_EQ(sampled.modules(static_cast<int>(run.module())).path(), "/lib/libcilk.so.2");
  EXPECT_EQ(sampled.modules_size(), 4);    // libcilk added once
  EXPECT_EQ(sampled.locations_size(), 5);  // fib and cilk::run added
  // The sampled profile's own contents are untouched.
  EXPECT_EQ(sampled.locations(2).frames(0).function(), "memcpy");
  EXPECT_EQ(sampled.process().pid(), 100u);
}

TEST(WorkSpanGraft, RefusesWithoutFiguresOrOverExistingOnes) {
  profile::Profile sampled = Sampled();
  profile::Profile none = Instrumented();
  none.clear_workspan();
  EXPECT_FALSE(GraftWorkSpan(none, &sampled).ok());
  EXPECT_FALSE(sampled.has_workspan());

  ASSERT_TRUE(GraftWorkSpan(Instrumented(), &sampled).ok());
  const Status again = GraftWorkSpan(Instrumented(), &sampled);
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("already has"), std::string::npos) << again.message();
}

TEST(WorkSpanGraft, RefusesAnotherProgramOrARebuiltOne) {
  profile::Profile sampled = Sampled();
  profile::Profile other = Instrumented();
  other.mutable_process()->set_executable("/bin/other");
  const Status different = GraftWorkSpan(other, &sampled);
  EXPECT_FALSE(different.ok());
  EXPECT_NE(different.message().find("different programs"), std::string::npos) << different.message();

  profile::Profile rebuilt = Instrumented();
  rebuilt.mutable_modules(1)->set_build_id("new-id");
  const Status changed = GraftWorkSpan(rebuilt, &sampled);
  EXPECT_FALSE(changed.ok());
  EXPECT_NE(changed.message().find("/bin/prog changed between the two runs"), std::string::npos)
      << changed.message();
  EXPECT_FALSE(sampled.has_workspan());
  EXPECT_EQ(sampled.locations_size(), 3);
}

TEST(WorkSpanGraft, RefusesALocationOutOfRange) {
  profile::Profile sampled = Sampled();
  profile::Profile bad = Instrumented();
  bad.mutable_workspan()->mutable_call_sites(0)->set_callee_location(99);
  EXPECT_FALSE(GraftWorkSpan(bad, &sampled).ok());
  EXPECT_FALSE(sampled.has_workspan());
}

}  // namespace
}  // namespace cilkprof::aggregator
