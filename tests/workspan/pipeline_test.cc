// The work/span data path without a process: engine snapshot -> the agent's encoder
// (Reporter, hand-written protobuf) -> parsed with the generated classes -> the
// aggregator's Session (WorkSpanJoin: validation, increments) -> Profile.workspan ->
// the views (call-site rows, sorting, JSON keys, summary figures, what-if, Cilkscale
// CSV). Also the join's protocol checks.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/session.h"
#include "cilkprof/views/workspan.h"
#include "cilkprof/wire.pb.h"
#include "module_table.h"
#include "workspan/report.h"

namespace cilkprof {
namespace {

namespace ws = agent::workspan;

// A code address of this test binary (the spawn point of the fake snapshot).
__attribute__((noinline)) void SomeCode() { __asm__ volatile(""); }

// Symbolizes offset O of any module as function "f<O>", file "src.cc", line O % 1000,
// with a frame of the runtime's spawn template inlined at `spawn_offset`.
class FakeSymbols : public aggregator::SymbolSource {
 public:
  explicit FakeSymbols(uint64_t spawn_offset) : spawn_offset_(spawn_offset) {}
  std::vector<profile::SourceFrame> Symbolize(const std::string&, const std::string&, uint64_t offset) override {
    std::vector<profile::SourceFrame> frames;
    profile::SourceFrame outer;
    outer.set_function("f" + std::to_string(offset));
    outer.set_file("src.cc");
    outer.set_line(static_cast<uint32_t>(offset % 1000));
    frames.push_back(outer);
    if (offset == spawn_offset_) {
      profile::SourceFrame spawn;
      spawn.set_function("void cilk::scope::spawn<f(int)::{lambda()#1}>(f(int)::{lambda()#1}&&)");
      spawn.set_file("cilk.hpp");
      spawn.set_line(120);
      spawn.set_inlined(true);
      frames.push_back(spawn);
    }
    return frames;
  }

 private:
  uint64_t spawn_offset_;
};

uintptr_t SpawnPc() { return reinterpret_cast<uintptr_t>(&SomeCode) + 5; }

// What the reporter sends for SpawnPc(): (module path, ELF address of pc - 1).
uint64_t SpawnOffset() {
  agent::ModuleTable modules;
  modules.Refresh();
  const agent::ModuleInfo* m = modules.Find(SpawnPc() - 1);
  return m != nullptr ? SpawnPc() - 1 - m->load_bias : 0;
}

wire::Hello MakeHello() {
  wire::Hello h;
  h.set_protocol_version(1);
  h.set_pid(7);
  h.add_metrics()->set_name("samples");
  return h;
}

// Frame bytes -> AgentMessage (the 4-byte length prefix checked).
wire::AgentMessage Parse(const std::string& frame) {
  EXPECT_GE(frame.size(), 4u);
  const uint32_t n = static_cast<uint8_t>(frame[0]) | static_cast<uint8_t>(frame[1]) << 8 |
                     static_cast<uint8_t>(frame[2]) << 16 | static_cast<uint32_t>(static_cast<uint8_t>(frame[3])) << 24;
  EXPECT_EQ(n, frame.size() - 4);
  wire::AgentMessage m;
  EXPECT_TRUE(m.ParseFromString(frame.substr(4)));
  return m;
}

ws::Snapshot FirstSnapshot() {
  ws::Snapshot s;
  s.program.work = 1000;
  s.program.span = 100;
  s.program.burdened_span = 160;
  s.program.spawns = 3;
  s.program.syncs = 4;
  s.program.computations = 1;
  s.program.regions = {"parse"};
  for (int v = 0; v < ws::kVariants; ++v) s.program.whatif_span[v] = 100;
  for (int f = 0; f < ws::kFactorCount; ++f) {
    s.program.whatif_span[f] = 100.0 - 40.0 + 40.0 / ws::kWhatIfFactors[f];  // all regions
    s.program.whatif_span[ws::kFactorCount + f] = s.program.whatif_span[f];  // parse alone
  }
  ws::SiteTotals root;  // top level: main's scope (absolute addresses: no module)
  root.kind = ws::SiteKind::kCall;
  root.pc = 0x101;
  root.count = 1;
  root.work_on_work = root.work_on_span = 1000;
  root.span_on_work = root.span_on_span = 100;
  root.burdened_span_on_work = 160;
  ws::SiteTotals spawn;
  spawn.kind = ws::SiteKind::kSpawn;
  spawn.pc = SpawnPc();
  spawn.count = 3;
  spawn.work_on_work = 600;
  spawn.span_on_work = 300;
  spawn.work_on_span = 200;
  spawn.span_on_span = 90;
  spawn.burdened_span_on_work = 390;
  s.sites = {root, spawn};
  return s;
}

TEST(WorkSpanPipeline, IncrementsTravelAndJoinIntoTheProfile) {
  ws::Reporter reporter(ws::ReportUnits{"counter", "units", 1.0, 20});
  ws::Snapshot s = FirstSnapshot();
  const std::string first = reporter.NextFrame(s, false);
  ASSERT_FALSE(first.empty());
  EXPECT_TRUE(reporter.NextFrame(s, false).empty()) << "nothing changed: no frame";
  // More work arrives: only increments travel.
  s.program.work += 500;
  s.program.span += 50;
  s.program.burdened_span += 50;
  for (double& v : s.program.whatif_span) v += 50;  // 50 more outside regions
  s.sites[1].count += 1;
  s.sites[1].work_on_work += 100;
  const std::string second = reporter.NextFrame(s, false);
  ASSERT_FALSE(second.empty());

  const wire::AgentMessage m1 = Parse(first), m2 = Parse(second);
  ASSERT_TRUE(m1.has_delta() && m1.delta().has_workspan());
  const wire::WorkSpanDelta& d1 = m1.delta().workspan();
  EXPECT_EQ(d1.clock(), "counter");
  EXPECT_EQ(d1.unit(), "units");
  EXPECT_EQ(d1.burden(), 20u);
  EXPECT_EQ(d1.sites_size(), 2);
  EXPECT_EQ(d1.sites(0).kind(), wire::WORKSPAN_CALL);
  EXPECT_EQ(d1.sites(0).location().offset(), 0x100u);  // return address - 1
  EXPECT_EQ(d1.sites(1).kind(), wire::WORKSPAN_SPAWN);
  const wire::WorkSpanDelta& d2 = m2.delta().workspan();
  EXPECT_EQ(d2.work(), 500u);
  ASSERT_EQ(d2.sites_size(), 1);
  EXPECT_FALSE(d2.sites(0).has_location()) << "a site's address travels once";
  EXPECT_EQ(d2.sites(0).count(), 1u);
  EXPECT_EQ(d2.sites(0).work_on_work(), 100u);

  aggregator::Session session;
  wire::AgentMessage hello;
  *hello.mutable_hello() = MakeHello();
  ASSERT_TRUE(session.Apply(hello).ok());
  ASSERT_TRUE(session.Apply(m1).ok()) << session.error().message();
  ASSERT_TRUE(session.Apply(m2).ok()) << session.error().message();
  const uint64_t spawn_offset = SpawnOffset();
  ASSERT_NE(spawn_offset, 0u) << "this test's own code is in a known module";
  FakeSymbols symbols(spawn_offset);
  const profile::Profile p = session.BuildProfile(symbols, 1);
  auto reread = aggregator::DecodeProfileFile("built", aggregator::EncodeProfileFile(p));
  ASSERT_TRUE(reread.ok()) << reread.status().message();
  ASSERT_TRUE(p.has_workspan());
  const profile::WorkSpan& w = p.workspan();
  EXPECT_EQ(w.work(), 1500u);
  EXPECT_EQ(w.span(), 150u);
  EXPECT_EQ(w.burdened_span(), 210u);
  EXPECT_EQ(w.spawns(), 3u);
  EXPECT_EQ(w.regions_size(), 1);
  EXPECT_EQ(w.whatif_span_size(), 2 * ws::kFactorCount) << "all regions, then parse";
  ASSERT_EQ(w.call_sites_size(), 2);
  EXPECT_EQ(w.call_sites(1).count(), 4u);
  EXPECT_EQ(w.call_sites(1).work_on_work(), 700u);

  // The views.
  auto rows = views::CallSiteRows(p);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  const views::CallSiteRow& top = (*rows)[0];  // sorted by work-on-work
  EXPECT_EQ(top.kind, "call");
  EXPECT_EQ(top.caller, "(root)");
  EXPECT_EQ(top.callee, "0x100");  // an absolute address: no module to symbolize
  const views::CallSiteRow& spawn = (*rows)[1];
  EXPECT_EQ(spawn.kind, "spawn");
  EXPECT_EQ(spawn.caller, "f" + std::to_string(spawn_offset));  // the library template frame is skipped
  EXPECT_EQ(spawn.callee, "f(int)::{lambda()#1}") << "the spawned callable, no child entered a scope";
  EXPECT_EQ(spawn.file, "src.cc");
  EXPECT_EQ(spawn.line, spawn_offset % 1000);
  EXPECT_DOUBLE_EQ(spawn.parallelism, 700.0 / 300.0);
  EXPECT_DOUBLE_EQ(spawn.span_percent, 100.0 * 90 / 150);
  ASSERT_TRUE(views::SortCallSites(&*rows, "parallelism").ok());
  EXPECT_EQ((*rows)[0].kind, "spawn");
  EXPECT_FALSE(views::SortCallSites(&*rows, "bogus").ok());

  const auto json = nlohmann::ordered_json::parse(views::RenderCallSitesJson(*rows));
  ASSERT_EQ(json.size(), 2u);
  std::vector<std::string> keys;
  for (auto it = json[0].begin(); it != json[0].end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"caller", "callee", "file", "line", "kind", "count", "work_on_work",
                                             "span_on_work", "work_on_span", "span_on_span", "parallelism"}));

  auto figures = views::WholeProgram(p);
  ASSERT_TRUE(figures.ok());
  EXPECT_DOUBLE_EQ(figures->parallelism, 10.0);
  EXPECT_DOUBLE_EQ(figures->average_maximal_strand, 1500.0 / (1 + 2 * 3 + 4));
  ASSERT_EQ(figures->speedup.size(), 9u);
  EXPECT_DOUBLE_EQ(figures->speedup[1].lower, 1500.0 / (1500.0 / 2 + 1.7 * 0.5 * 210));
  EXPECT_DOUBLE_EQ(figures->speedup[1].upper, 2.0);
  EXPECT_DOUBLE_EQ(figures->speedup[8].upper, 10.0);
  const auto summary = nlohmann::json::parse(views::AddWorkSpanToSummaryJson("{\"work\": 3, \"x\": 1}", *figures));
  EXPECT_EQ(summary["work"].get<double>(), 1500.0);
  EXPECT_EQ(summary["x"].get<int>(), 1);
  EXPECT_EQ(summary["speedup"][0]["p"].get<int>(), 1);

  auto what_if = views::RenderWhatIfJson(p);
  ASSERT_TRUE(what_if.ok()) << what_if.status().message();
  const auto wj = nlohmann::json::parse(*what_if);
  EXPECT_TRUE(wj["what_if"][0]["region"].is_null());
  EXPECT_EQ(wj["what_if"][1]["region"], "parse");
  // The increments of the what-if spans added up on the way: 1500 / (span with parse 2x faster).
  EXPECT_NEAR(wj["what_if"][1]["parallelism"][0].get<double>(), 1500.0 / (150.0 - 20.0), 1e-9);

  auto csv = views::RenderCilkscaleCsv(p);
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(csv->rfind("tag,work (u),span (u),parallelism,burdened_span (u),burdened_parallelism\n", 0), 0u);
  EXPECT_NE(csv->find("\n,1500,150,10,210,7.14"), std::string::npos) << *csv;
}

TEST(WorkSpanPipeline, ProfilesWithoutWorkSpanSayHowToGetIt) {
  profile::Profile p;
  auto rows = views::CallSiteRows(p);
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find("--no-workspan"), std::string::npos);
  EXPECT_FALSE(views::WholeProgram(p).ok());
  EXPECT_FALSE(views::RenderCilkscaleCsv(p).ok());
  p.mutable_workspan()->set_work(5);
  auto what_if = views::RenderWhatIfText(p);
  ASSERT_FALSE(what_if.ok());
  EXPECT_NE(what_if.status().message().find("cilkprof::region"), std::string::npos);
}

// The join refuses messages that break the protocol, all or nothing.
TEST(WorkSpanPipeline, JoinRefusesBrokenMessages) {
  auto session_with = [](const std::function<void(wire::WorkSpanDelta*)>& fill) {
    auto s = std::make_unique<aggregator::Session>();
    wire::AgentMessage hello;
    *hello.mutable_hello() = MakeHello();
    EXPECT_TRUE(s->Apply(hello).ok());
    wire::AgentMessage m;
    fill(m.mutable_delta()->mutable_workspan());
    return std::make_pair(std::move(s), m);
  };
  struct Case {
    const char* name;
    std::function<void(wire::WorkSpanDelta*)> fill;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"id 0", [](wire::WorkSpanDelta* d) { d->add_sites()->set_kind(wire::WORKSPAN_CALL); }, "id 0"},
      {"no location",
       [](wire::WorkSpanDelta* d) {
         auto* s = d->add_sites();
         s->set_id(1);
         s->set_kind(wire::WORKSPAN_CALL);
       },
       "without its location"},
      {"unknown kind",
       [](wire::WorkSpanDelta* d) {
         auto* s = d->add_sites();
         s->set_id(1);
         s->mutable_location()->set_offset(5);
       },
       "known kind"},
      {"module not listed",
       [](wire::WorkSpanDelta* d) {
         auto* s = d->add_sites();
         s->set_id(1);
         s->set_kind(wire::WORKSPAN_SPAWN);
         s->mutable_location()->set_module(3);
       },
       "does not list"},
      {"bad what-if",
       [](wire::WorkSpanDelta* d) {
         d->add_whatif_factors(2);
         d->add_whatif_factors(4);
         d->add_whatif_span(1.0);
       },
       "factors"},
      {"non-finite what-if",
       [](wire::WorkSpanDelta* d) {
         d->add_whatif_factors(2);
         d->add_whatif_span(std::nan(""));
       },
       "finite"},
  };
  for (const Case& c : cases) {
    auto [session, message] = session_with(c.fill);
    const Status status = session->Apply(message);
    EXPECT_FALSE(status.ok()) << c.name;
    EXPECT_NE(status.message().find(c.expect), std::string::npos) << c.name << ": " << status.message();
  }
  // A site defined twice, and a clock that changes, across messages.
  auto [session, first] = session_with([](wire::WorkSpanDelta* d) {
    d->set_clock("tsc");
    auto* s = d->add_sites();
    s->set_id(1);
    s->set_kind(wire::WORKSPAN_CALL);
    s->mutable_location()->set_offset(9);
  });
  ASSERT_TRUE(session->Apply(first).ok());
  wire::AgentMessage again = first;
  EXPECT_NE(session->Apply(again).message().find("defined a second time"), std::string::npos);
  aggregator::Session other;
  wire::AgentMessage hello;
  *hello.mutable_hello() = MakeHello();
  ASSERT_TRUE(other.Apply(hello).ok());
  ASSERT_TRUE(other.Apply(first).ok());
  wire::AgentMessage counter;
  counter.mutable_delta()->mutable_workspan()->set_clock("counter");
  EXPECT_NE(other.Apply(counter).message().find("clock changed"), std::string::npos);
}

}  // namespace
}  // namespace cilkprof
