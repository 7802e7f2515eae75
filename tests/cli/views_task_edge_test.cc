// OpenMP task edges (wire::EDGE_TASK, issue 17) in the views, on TaskProfile
// (views_test_profile.h): a task, a spawn and a call of the same function at the same
// site stay three contexts; a task row reads "[task] f" as a spawned one reads
// "[spawn] f"; json and csv say "task"; a task is joined to the work/span site of its
// creation point as a spawned strand is to its spawn point. Expected values checked
// by hand against the samples listed in views_test_profile.h.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cilkprof/views/bottom_up.h"
#include "cilkprof/views/build.h"
#include "cilkprof/views/callsite_columns.h"
#include "cilkprof/views/render.h"
#include "cilkprof/views/view_tree.h"
#include "views_test_profile.h"

namespace cilkprof::views {
namespace {

const ViewHeader kHeader{"test.cilkprof", "/bin/prog", 42};

ViewOptions Options(SortKey key) {
  ViewOptions options;
  options.metric = 1;  // work
  options.sort_key = key;
  return options;
}

TEST(TaskEdges, TopDownKeepsTaskSpawnAndCallApartAndLabelsTasks) {
  const RowTree tree = BuildTopDown(testing::TaskProfile());
  EXPECT_EQ(RenderText(tree, ViewKind::kTopDown, Options(SortKey::kInclusive), kHeader),
            R"(# cilkprof top-down view of test.cilkprof: /bin/prog (pid 42); work in ms, total 15.0 ms; sorted by inclusive work
Incl work (ms)   Incl%  Excl work (ms)   Excl%  Function
          15.0  100.0%             0.0    0.0%  <program root>
          15.0  100.0%             1.0    6.7%    main
           8.0   53.3%             3.0   20.0%      [task] c
           5.0   33.3%             5.0   33.3%        [task] d
           4.0   26.7%             4.0   26.7%      [spawn] c
           2.0   13.3%             2.0   13.3%      c
)");
}

TEST(TaskEdges, BottomUpCallersCarryTheTaskEdge) {
  const RowTree top_down = BuildTopDown(testing::TaskProfile());
  EXPECT_EQ(RenderText(BottomUp(top_down), ViewKind::kBottomUp, Options(SortKey::kExclusive), kHeader),
            R"(# cilkprof bottom-up view of test.cilkprof: /bin/prog (pid 42); work in ms, total 15.0 ms; sorted by exclusive work
Incl work (ms)   Incl%  Excl work (ms)   Excl%  Function
          15.0  100.0%             0.0    0.0%  <program root>
          14.0   93.3%             9.0   60.0%    c
           4.0   26.7%             4.0   26.7%      [spawn] main
           8.0   53.3%             3.0   20.0%      [task] main
           2.0   13.3%             2.0   13.3%      main
           5.0   33.3%             5.0   33.3%    d
           5.0   33.3%             5.0   33.3%      [task] c
           5.0   33.3%             5.0   33.3%        [task] main
          15.0  100.0%             1.0    6.7%    main
)");
}

TEST(TaskEdges, JsonAndCsvNameTheEdgeTask) {
  const RowTree tree = BuildTopDown(testing::TaskProfile());
  const nlohmann::json json = nlohmann::json::parse(RenderJson(tree, Options(SortKey::kInclusive)));
  const nlohmann::json& main = json["children"][0];
  ASSERT_EQ(main["children"].size(), 3u) << main.dump();
  EXPECT_EQ(main["children"][0]["name"], "c");
  EXPECT_EQ(main["children"][0]["edge"], "task");
  EXPECT_EQ(main["children"][0]["children"][0]["edge"], "task");
  EXPECT_EQ(main["children"][1]["edge"], "spawn");
  EXPECT_EQ(main["children"][2]["edge"], "call");

  const std::string csv = RenderCsv(BuildTopDown(testing::TaskProfile()), Options(SortKey::kInclusive));
  EXPECT_NE(csv.find("\n3,main;c;d,d,prog.c,58,/bin/prog,task,0,5,5,5000000,5000000\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n2,main;c,c,prog.c,38,/bin/prog,task,0,8,3,8000000,3000000\n"), std::string::npos) << csv;
}

TEST(TaskEdges, RowLabel) {
  ViewNode task;
  task.name = "c";
  task.edge = Edge::kTask;
  EXPECT_EQ(RowLabel(task), "[task] c");
  EXPECT_STREQ(EdgeMarker(Edge::kTask), "[task]");
  EXPECT_STREQ(EdgeMarker(Edge::kSpawn), "[spawn]");
  EXPECT_EQ(EdgeMarker(Edge::kCall), nullptr);
  EXPECT_EQ(EdgeOf(wire::EDGE_TASK), Edge::kTask);
}

TEST(TaskEdges, ATaskJoinsTheSiteOfItsCreationPointLikeASpawn) {
  profile::Profile p = testing::TaskProfile();
  auto* ws = p.mutable_workspan();
  ws->set_unit("ns");
  auto* creation = ws->add_call_sites();  // site 0: the creation (spawn) point main@10
  creation->set_kind(wire::WORKSPAN_SPAWN);
  creation->set_location(1);
  auto* call = ws->add_call_sites();  // site 1: the call of c at main@10
  call->set_kind(wire::WORKSPAN_CALL);
  call->set_location(1);
  call->set_callee_location(2);
  const NodeSites joined = JoinCallSitesToNodes(p);
  // Nodes as added: root, main, [task] c, [spawn] c, c, [task] d (its parent c@40 is no site).
  const std::vector<std::vector<uint32_t>> expected = {{}, {}, {0}, {0}, {1}, {}};
  ASSERT_EQ(joined.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(std::vector<uint32_t>(joined[i].begin(), joined[i].end()), expected[i]) << "node " << i;
  }
}

}  // namespace
}  // namespace cilkprof::views
