// The work/span call-site columns of the tree views (callsite_columns.h): the join of
// Profile.workspan.call_sites into an address-level tree shaped like
// examples/serial_bottleneck.cpp, and its text, JSON and CSV rendering.
//
// Address-level tree (location names as below; [s] = entered by a spawn edge):
//   main
//     op@bar-call          op = main's lambda, holds the scope at line 118
//       bar@work           bar holds the scope at line 77
//     op@spawn (line 119, cilk::scope::spawn inlined)
//       [s] lam            foo's lambda, spawned at 119
//         cp@call          cp = count_primes, holds the scope at line 58
//           cp@spawn (line 59)
//             [s] cplam    cp's lambda, spawned at 59
//               cp@leaf
//                 cp@spawn
//                   [s] cplam
//                     cp@leaf
//           cp@leaf        folds into the same row as its sibling cp@spawn
//     op@baz-call          baz is called after op's scope closed
//       baz@work           baz holds the scope at line 87
//
// Call sites, keyed by the call instruction in the caller (work, span, span-on-span
// in ms; the program's span is 254 ms). The spawned lambdas' calls of cp belong to
// their spawns.
//   0 call  main -> op   at main@0x100     1000 / 250 / 250
//   1 spawn at op:119 (callee cp)           700 /   2 /   0
//   2 spawn at cp:59 (callee cp)            690 /   3 /   0
//   3 call  cp -> cp     at cp:60           685 /   2 /   0
//   4 call  op -> bar    at op:120          300 / 248 / 248
//   5 call  op -> baz    at op:124          100 /   4 /   4
#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cilkprof/views/bottom_up.h"
#include "cilkprof/views/build.h"
#include "cilkprof/views/callsite_columns.h"
#include "cilkprof/views/filter.h"
#include "cilkprof/views/render.h"
#include "cilkprof/views/units.h"
#include "cilkprof/views/view_tree.h"

namespace cilkprof::views {
namespace {

constexpr double kMs = 1e6;

struct FrameSpec {
  const char* function;
  uint32_t line;
  uint32_t function_line;
  bool inlined;
  const char* file = "sb.cpp";
};

uint32_t AddLocation(profile::Profile& p, uint64_t offset, std::initializer_list<FrameSpec> frames) {
  auto* location = p.add_locations();
  location->set_module(1);
  location->set_offset(offset);
  for (const auto& spec : frames) {
    auto* frame = location->add_frames();
    frame->set_function(spec.function);
    frame->set_file(spec.file);
    frame->set_line(spec.line);
    frame->set_function_file(spec.file);
    frame->set_function_line(spec.function_line);
    frame->set_inlined(spec.inlined);
  }
  return static_cast<uint32_t>(p.locations_size() - 1);
}

uint32_t AddNode(profile::Profile& p, uint32_t parent, uint32_t location, double work_ms,
                 wire::EdgeKind edge = wire::EDGE_CALL) {
  auto* node = p.add_nodes();
  node->set_parent(parent);
  node->set_kind(wire::FRAME_PC);
  node->set_location(location);
  node->set_edge(edge);
  node->add_exclusive(work_ms * kMs);
  return static_cast<uint32_t>(p.nodes_size() - 1);
}

void AddSite(profile::Profile& p, wire::WorkSpanSiteKind kind, uint32_t location, uint32_t callee,
             double work_ms, double span_ms, double span_on_span_ms, uint64_t count) {
  auto* site = p.mutable_workspan()->add_call_sites();
  site->set_kind(kind);
  site->set_location(location);
  site->set_callee_location(callee);
  site->set_count(count);
  site->set_work_on_work(static_cast<uint64_t>(work_ms * kMs));
  site->set_span_on_work(static_cast<uint64_t>(span_ms * kMs));
  site->set_work_on_span(static_cast<uint64_t>(span_on_span_ms > 0 ? work_ms * kMs : 0));
  site->set_span_on_span(static_cast<uint64_t>(span_on_span_ms * kMs));
}

profile::Profile BottleneckProfile(bool with_workspan = true) {
  profile::Profile p;
  p.set_format_version(1);
  p.mutable_process()->set_executable("/bin/sb");
  p.mutable_process()->set_pid(7);
  auto* work = p.add_metrics();
  work->set_name("work");
  work->set_unit("ns");
  p.add_modules();  // 0: unknown
  p.add_modules()->set_path("/bin/sb");
  p.add_locations();  // 0: unused
  p.add_nodes();      // 0: root

  const char* spawn_op = "cilk::scope::spawn<op::lam>";
  const char* spawn_cp = "cilk::scope::spawn<cp::lam>";
  const uint32_t main_at = AddLocation(p, 0x100, {{"main", 130, 105, false}});
  const uint32_t op_scope = AddLocation(p, 0x1f0, {{"op", 118, 110, false}, {"cilk::scope::scope()", 20, 18, true, "cilk.hpp"}});
  const uint32_t op_bar = AddLocation(p, 0x200, {{"op", 120, 110, false}});
  const uint32_t op_spawn = AddLocation(p, 0x210, {{"op", 119, 110, false}, {spawn_op, 40, 38, true, "cilk.hpp"}});
  const uint32_t op_baz = AddLocation(p, 0x230, {{"op", 124, 110, false}});
  const uint32_t lam = AddLocation(p, 0x300, {{"op::lam", 119, 119, false}});
  const uint32_t cp_scope = AddLocation(p, 0x400, {{"cp", 58, 50, false}, {"cilk::scope::scope()", 20, 18, true, "cilk.hpp"}});
  const uint32_t cp_spawn = AddLocation(p, 0x410, {{"cp", 59, 50, false}, {spawn_cp, 40, 38, true, "cilk.hpp"}});
  const uint32_t cp_call = AddLocation(p, 0x420, {{"cp", 60, 50, false}});
  const uint32_t cp_leaf = AddLocation(p, 0x430, {{"cp", 53, 50, false}});
  const uint32_t cplam = AddLocation(p, 0x500, {{"cp::lam", 59, 59, false}});
  const uint32_t bar_scope = AddLocation(p, 0x600, {{"bar", 77, 74, false}});
  const uint32_t bar_work = AddLocation(p, 0x610, {{"bar", 79, 74, false}});
  const uint32_t baz_scope = AddLocation(p, 0x700, {{"baz", 87, 85, false}});
  const uint32_t baz_work = AddLocation(p, 0x710, {{"baz", 88, 85, false}});

  const uint32_t main_node = AddNode(p, 0, main_at, 0);
  const uint32_t op1 = AddNode(p, main_node, op_bar, 1);
  AddNode(p, op1, bar_work, 300);
  const uint32_t op2 = AddNode(p, main_node, op_spawn, 0);
  const uint32_t lam_node = AddNode(p, op2, lam, 0, wire::EDGE_SPAWN);
  const uint32_t cp1 = AddNode(p, lam_node, cp_call, 1);
  const uint32_t cp2 = AddNode(p, cp1, cp_spawn, 1);
  const uint32_t cplam1 = AddNode(p, cp2, cplam, 0, wire::EDGE_SPAWN);
  const uint32_t cp3 = AddNode(p, cplam1, cp_leaf, 100);
  const uint32_t cp4 = AddNode(p, cp3, cp_spawn, 0);
  const uint32_t cplam2 = AddNode(p, cp4, cplam, 0, wire::EDGE_SPAWN);
  AddNode(p, cplam2, cp_leaf, 200);
  AddNode(p, cp1, cp_leaf, 400);
  const uint32_t op3 = AddNode(p, main_node, op_baz, 0);
  AddNode(p, op3, baz_work, 100);

  if (with_workspan) {
    auto* ws = p.mutable_workspan();
    ws->set_clock("tsc");
    ws->set_unit("ns");
    ws->set_work(static_cast<uint64_t>(1100 * kMs));
    ws->set_span(static_cast<uint64_t>(254 * kMs));
    AddSite(p, wire::WORKSPAN_CALL, main_at, op_scope, 1000, 250, 250, 1);
    AddSite(p, wire::WORKSPAN_SPAWN, op_spawn, cp_scope, 700, 2, 0, 1);
    AddSite(p, wire::WORKSPAN_SPAWN, cp_spawn, cp_scope, 690, 3, 0, 7);
    AddSite(p, wire::WORKSPAN_CALL, cp_call, cp_scope, 685, 2, 0, 3);
    AddSite(p, wire::WORKSPAN_CALL, op_bar, bar_scope, 300, 248, 248, 1);
    AddSite(p, wire::WORKSPAN_CALL, op_baz, baz_scope, 100, 4, 4, 1);
  }
  return p;
}

// Rows by their label path from the root ("main/op/bar"), with the cell each shows.
std::map<std::string, std::optional<CallSiteCell>> CellsByPath(const ViewSource& source, const ViewOptions& options = {}) {
  const ViewTree tree = Materialize(source, options);
  std::vector<std::string> path(tree.nodes.size());
  std::map<std::string, std::optional<CallSiteCell>> out;
  for (size_t i = 1; i < tree.nodes.size(); ++i) {
    const ViewNode& n = tree.nodes[i];
    const std::string label = RowLabel(n);
    path[i] = n.parent == 0 ? label : path[n.parent] + "/" + label;
    EXPECT_EQ(out.count(path[i]), 0u) << "two rows at " << path[i];
    out[path[i]] = n.cell;
  }
  return out;
}

double WorkMs(const std::optional<CallSiteCell>& cell) { return cell ? cell->work / kMs : -1; }

const std::string kOp = "main/op";
const std::string kLam = kOp + "/cilk::scope::spawn<op::lam> (inline)/[spawn] op::lam";
const std::string kCp1 = kLam + "/cp";
const std::string kCp2 = kCp1 + "/cp";
const std::string kCpLam1 = kCp2 + "/cilk::scope::spawn<cp::lam> (inline)/[spawn] cp::lam";
const std::string kCp3 = kCpLam1 + "/cp";
const std::string kCp4 = kCp3 + "/cp";
const std::string kCpLam2 = kCp4 + "/cilk::scope::spawn<cp::lam> (inline)/[spawn] cp::lam";
const std::string kCp5 = kCpLam2 + "/cp";

TEST(CallSiteJoin, AddressNodesGetTheirSites) {
  const NodeSites joined = JoinCallSitesToNodes(BottleneckProfile());
  // Node numbers as added in BottleneckProfile.
  const std::vector<std::vector<uint32_t>> expected = {
      {},   // root
      {},   // main
      {0},  // op@bar-call: called from main at 0x100
      {4},  // bar: called from op at op:120
      {0},  // op@spawn
      {1},  // [s] lam: the spawn at op:119
      {},   // cp@call: called by the spawned lambda itself (part of the spawn)
      {3},  // cp@spawn: called from cp at cp:60
      {2},  // [s] cplam: the spawn at cp:59
      {},   // cp@leaf: called by the spawned lambda
      {},   // cp@spawn under cp@leaf: no site at that address
      {2},  // [s] cplam (recursive)
      {},   // cp@leaf (recursive)
      {3},  // cp@leaf under cp@call: called at cp:60
      {0},  // op@baz-call
      {5},  // baz: called from op at op:124
  };
  ASSERT_EQ(joined.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(std::vector<uint32_t>(joined[i].begin(), joined[i].end()), expected[i]) << "node " << i;
  }
}

TEST(CallSiteJoin, NoWorkSpanJoinsNothing) {
  const NodeSites joined = JoinCallSitesToNodes(BottleneckProfile(false));
  for (size_t i = 0; i < 16; ++i) EXPECT_TRUE(joined[i].empty());
  EXPECT_FALSE(CallSiteTableOf(BottleneckProfile(false)).present);
}

TEST(CallSiteColumns, TopDownRowsShowTheirSitesOnceAtTheTopMostRow) {
  const auto cells = CellsByPath(BuildTopDown(BottleneckProfile()));
  EXPECT_FALSE(cells.at("main"));
  // Two address nodes of op fold into one row: the site counts once.
  EXPECT_DOUBLE_EQ(WorkMs(cells.at(kOp)), 1000);
  EXPECT_DOUBLE_EQ(cells.at(kOp)->span, 250 * kMs);
  EXPECT_DOUBLE_EQ(*cells.at(kOp)->parallelism, 4.0);
  EXPECT_NEAR(cells.at(kOp)->span_percent, 100.0 * 250 / 254, 1e-9);
  EXPECT_EQ(cells.at(kOp)->count, 1u);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at(kOp + "/bar")), 300);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at(kOp + "/baz")), 100);
  // The spawn site is on the [spawn] row, not on the inlined spawn template above it.
  EXPECT_FALSE(cells.at(kOp + "/cilk::scope::spawn<op::lam> (inline)"));
  EXPECT_DOUBLE_EQ(WorkMs(cells.at(kLam)), 700);
  // count_primes called by the spawned lambdas belongs to their spawns (no row of
  // its own); called by itself at cp:60 it is a call site.
  EXPECT_FALSE(cells.at(kCp1));
  EXPECT_DOUBLE_EQ(WorkMs(cells.at(kCp2)), 685);  // two address nodes, one site
  EXPECT_EQ(cells.at(kCp2)->count, 3u);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at(kCpLam1)), 690);
  EXPECT_FALSE(cells.at(kCp3));
  // Recursion: the same sites deeper on the path show nothing.
  EXPECT_FALSE(cells.at(kCp4));
  EXPECT_FALSE(cells.at(kCpLam2));
  EXPECT_FALSE(cells.at(kCp5));
}

TEST(CallSiteColumns, BottomUpFunctionsShowTheirOutermostContextsSites) {
  const RowTree top_down = BuildTopDown(BottleneckProfile());
  const auto cells = CellsByPath(BottomUp(top_down));

  // The outermost count_primes are called by spawned lambdas: their spawns' sites
  // show on the lambdas' rows; count_primes itself shows its call from itself.
  EXPECT_FALSE(cells.at("cp"));
  EXPECT_FALSE(cells.at("cp/op::lam"));
  EXPECT_DOUBLE_EQ(WorkMs(cells.at("cp/cp")), 685);
  EXPECT_FALSE(cells.at("cp/cp::lam"));
  EXPECT_DOUBLE_EQ(WorkMs(cells.at("op::lam")), 700);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at("cp::lam")), 690);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at("bar")), 300);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at("bar/op")), 300);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at("op")), 1000);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at("op/main")), 1000);  // a caller row: op's sites through main
  EXPECT_FALSE(cells.at("main"));
}

TEST(CallSiteColumns, FlatLinesShowTheSitesAtThem) {
  const auto cells = CellsByPath(BuildFlat(BottleneckProfile()));
  const std::string cp = "/bin/sb/sb.cpp/cp/";
  // Each site on the caller's line: the call or the spawn.
  EXPECT_DOUBLE_EQ(WorkMs(cells.at("/bin/sb/sb.cpp/main/sb.cpp:130")), 1000);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at("/bin/sb/sb.cpp/op/sb.cpp:119")), 700);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at("/bin/sb/sb.cpp/op/sb.cpp:120")), 300);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at("/bin/sb/sb.cpp/op/sb.cpp:124")), 100);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at(cp + "sb.cpp:59")), 690);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at(cp + "sb.cpp:60")), 685);
  // Module, file and function rows and lines without a call carry nothing.
  EXPECT_FALSE(cells.at("/bin/sb"));
  EXPECT_FALSE(cells.at("/bin/sb/sb.cpp"));
  EXPECT_FALSE(cells.at("/bin/sb/sb.cpp/cp"));
  EXPECT_FALSE(cells.at(cp + "sb.cpp:53"));
}

TEST(CallSiteColumns, FiltersKeepTheColumns) {
  ViewOptions options;
  const RowTree top_down = BuildTopDown(BottleneckProfile());
  // Focus on count_primes: rooted at its outermost context, whose site it shows.
  auto focused = FocusOn(top_down, "cp");
  ASSERT_TRUE(focused.ok());
  const auto cells = CellsByPath(*focused, options);
  EXPECT_DOUBLE_EQ(WorkMs(cells.at("cp")), 685);
  options.depth = 2;
  options.threshold_percent = 10;
  const auto pruned = CellsByPath(top_down, options);
  EXPECT_DOUBLE_EQ(WorkMs(pruned.at(kOp)), 1000);
  options.depth.reset();
  options.threshold_percent = 0;
  options.hot_path = true;
  const auto hot = CellsByPath(top_down, options);
  EXPECT_DOUBLE_EQ(WorkMs(hot.at(kCp2)), 685);
}

TEST(CallSiteColumns, TextHasTheFourColumnsAligned) {
  ViewOptions options;
  options.depth = 3;
  options.threshold_percent = 20;
  EXPECT_EQ(RenderText(BuildTopDown(BottleneckProfile()), ViewKind::kTopDown, options, {"sb.cilkprof", "/bin/sb", 7}),
            R"(# cilkprof top-down view of sb.cilkprof: /bin/sb (pid 7); work in ms, total 1103.0 ms; sorted by inclusive work; rows under 20% hidden
Incl work (ms)   Incl%  Excl work (ms)   Excl%  Work(instr) (ms)  Span (ms)  Parallelism  Span %  Function
        1103.0  100.0%             0.0    0.0%                                                    <program root>
        1103.0  100.0%             0.0    0.0%                                                      main
        1103.0  100.0%             1.0    0.1%            1000.0      250.0         4.00   98.4%      op
         702.0   63.6%             0.0    0.0%                                                          cilk::scope::spawn<op::lam> (inline)
         300.0   27.2%           300.0   27.2%             300.0      248.0         1.21   97.6%        bar
)");
}

TEST(CallSiteColumns, JsonHasACallsiteObjectOnRowsWithSites) {
  ViewOptions options;
  options.depth = 3;
  const nlohmann::json json = nlohmann::json::parse(RenderJson(BuildTopDown(BottleneckProfile()), options));
  const nlohmann::json& main_row = json["children"][0];
  EXPECT_FALSE(main_row.contains("callsite"));
  EXPECT_EQ(main_row.size(), 8u);
  const nlohmann::json& op = main_row["children"][0];
  ASSERT_TRUE(op.contains("callsite")) << op.dump();
  EXPECT_EQ(op["callsite"], (nlohmann::json{{"work_instr", 1000 * kMs},
                                             {"span", 250 * kMs},
                                             {"parallelism", 4.0},
                                             {"span_percent", 100.0 * 250 / 254},
                                             {"count", 1},
                                             {"unit", "ns"}}));
  // Keys: the contract's, with callsite before children.
  const std::string text = RenderJson(BuildTopDown(BottleneckProfile()), options);
  EXPECT_LT(text.find("\"metrics\""), text.find("\"callsite\""));
  EXPECT_LT(text.find("\"callsite\""), text.rfind("\"children\""));
}

TEST(CallSiteColumns, ParallelismIsAbsentWhenTheSpanIsZero) {
  profile::Profile p = BottleneckProfile();
  p.mutable_workspan()->mutable_call_sites(4)->set_span_on_work(0);  // bar
  const RowTree tree = BuildTopDown(p);
  const auto cells = CellsByPath(tree);
  EXPECT_FALSE(cells.at(kOp + "/bar")->parallelism.has_value());
  const std::string json = RenderJson(tree, {});
  EXPECT_NE(json.find("\"parallelism\": null"), std::string::npos);
  const std::string csv = RenderCsv(tree, {});
  EXPECT_NE(csv.find(",300000000,0,,97.6"), std::string::npos) << csv;
}

TEST(CallSiteColumns, CsvAppendsFourColumns) {
  ViewOptions options;
  options.depth = 2;
  const std::string csv = RenderCsv(BuildTopDown(BottleneckProfile()), options);
  EXPECT_EQ(csv, std::string("depth,path,name,file,line,module,edge,inlined,work_inclusive,work_exclusive,"
                             "work_instr,span,parallelism,span_percent\n"
                             "0,,<program root>,,0,,call,0,1103000000,0,,,,\n"
                             "1,main,main,sb.cpp,105,/bin/sb,call,0,1103000000,0,,,,\n"
                             "2,main;op,op,sb.cpp,110,/bin/sb,call,0,1103000000,1000000,1000000000,250000000,4,") +
                     FormatExact(100.0 * 250 / 254) + "\n");
}

TEST(CallSiteColumns, WithoutWorkSpanTheViewsAreUnchanged) {
  const profile::Profile plain = BottleneckProfile(false);
  ViewOptions options;
  const RowTree top_down = BuildTopDown(plain);
  const BottomUp bottom_up(top_down);
  const RowTree flat = BuildFlat(plain);
  for (const ViewSource& source : {ViewSource(top_down), ViewSource(bottom_up), ViewSource(flat)}) {
    EXPECT_EQ(RenderText(source, ViewKind::kTopDown, options, {}).find("Work(instr)"), std::string::npos);
    EXPECT_EQ(RenderJson(source, options).find("callsite"), std::string::npos);
    EXPECT_EQ(RenderCsv(source, options).find("work_instr"), std::string::npos);
  }
  // The flat view has the same rows: a site's line is its call instruction's, which
  // the samples under the call reach already.
  EXPECT_EQ(flat.size(), BuildFlat(BottleneckProfile()).size());
}

}  // namespace
}  // namespace cilkprof::views
