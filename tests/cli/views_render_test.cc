// Rendering: exact text, JSON and CSV for SmallProfile (views_test_profile.h). The
// expected values were checked by hand against the samples listed there.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cilkprof/views/bottom_up.h"
#include "cilkprof/views/build.h"
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

TEST(RenderText, TopDown) {
  const ViewOptions options = Options(SortKey::kInclusive);
  const RowTree tree = BuildTopDown(testing::SmallProfile());
  EXPECT_EQ(RenderText(tree, ViewKind::kTopDown, options, kHeader), R"(# cilkprof top-down view of test.cilkprof: /bin/prog (pid 42); work in ms, total 13.5 ms; sorted by inclusive work
Incl work (ms)   Incl%  Excl work (ms)   Excl%  Function
          13.5  100.0%             0.0    0.0%  <program root>
          11.5   85.2%             1.0    7.4%    main
           5.5   40.7%             0.0    0.0%      a
           5.5   40.7%             2.0   14.8%        helper (inline)
           3.5   25.9%             3.0   22.2%          b
           0.5    3.7%             0.5    3.7%            ?? [libm.so]
           4.0   29.6%             4.0   29.6%      [spawn] c
           1.0    7.4%             1.0    7.4%      c
           2.0   14.8%             0.0    0.0%    <partial unwind>
           2.0   14.8%             2.0   14.8%      b
)");
}

TEST(RenderText, BottomUp) {
  const ViewOptions options = Options(SortKey::kExclusive);
  const RowTree top_down = BuildTopDown(testing::SmallProfile());
  EXPECT_EQ(RenderText(BottomUp(top_down), ViewKind::kBottomUp, options, kHeader), R"(# cilkprof bottom-up view of test.cilkprof: /bin/prog (pid 42); work in ms, total 13.5 ms; sorted by exclusive work
Incl work (ms)   Incl%  Excl work (ms)   Excl%  Function
          13.5  100.0%             0.0    0.0%  <program root>
           5.5   40.7%             5.0   37.0%    b
           3.5   25.9%             3.0   22.2%      helper (inline)
           3.5   25.9%             3.0   22.2%        a
           3.5   25.9%             3.0   22.2%          main
           2.0   14.8%             2.0   14.8%      <partial unwind>
           5.0   37.0%             5.0   37.0%    c
           4.0   29.6%             4.0   29.6%      [spawn] main
           1.0    7.4%             1.0    7.4%      main
           5.5   40.7%             2.0   14.8%    helper (inline)
           5.5   40.7%             2.0   14.8%      a
           5.5   40.7%             2.0   14.8%        main
          11.5   85.2%             1.0    7.4%    main
           0.5    3.7%             0.5    3.7%    ?? [libm.so]
           0.5    3.7%             0.5    3.7%      b
           0.5    3.7%             0.5    3.7%        helper (inline)
           0.5    3.7%             0.5    3.7%          a
           0.5    3.7%             0.5    3.7%            main
           2.0   14.8%             0.0    0.0%    <partial unwind>
           5.5   40.7%             0.0    0.0%    a
           5.5   40.7%             0.0    0.0%      main
)");
}

TEST(RenderText, Flat) {
  const ViewOptions options = Options(SortKey::kExclusive);
  const RowTree tree = BuildFlat(testing::SmallProfile());
  EXPECT_EQ(RenderText(tree, ViewKind::kFlat, options, kHeader), R"(# cilkprof flat view of test.cilkprof: /bin/prog (pid 42); work in ms, total 13.5 ms; sorted by exclusive work
Incl work (ms)   Incl%  Excl work (ms)   Excl%  Location
          13.5  100.0%             0.0    0.0%  <program root>
          13.5  100.0%            13.0   96.3%    /bin/prog
          13.5  100.0%            11.0   81.5%      prog.c
           5.5   40.7%             5.0   37.0%        b
           5.5   40.7%             5.0   37.0%          prog.c:30
           5.0   37.0%             5.0   37.0%        c
           5.0   37.0%             5.0   37.0%          prog.c:40
          11.5   85.2%             1.0    7.4%        main
          10.5   77.8%             1.0    7.4%          prog.c:10
           1.0    7.4%             0.0    0.0%          prog.c:11
           5.5   40.7%             0.0    0.0%        a
           5.5   40.7%             0.0    0.0%          prog.c:21
           5.5   40.7%             2.0   14.8%      util.h
           5.5   40.7%             2.0   14.8%        helper (inline)
           5.5   40.7%             2.0   14.8%          util.h:3
           0.5    3.7%             0.5    3.7%    /lib/libm.so
           0.5    3.7%             0.5    3.7%      <unknown file>
           0.5    3.7%             0.5    3.7%        ?? [libm.so]
           0.5    3.7%             0.5    3.7%          ??:?
           2.0   14.8%             0.0    0.0%    <partial unwind>
)");
}

TEST(RenderText, CountsHaveNoUnitAndLargeTimesUseSeconds) {
  ViewOptions options = Options(SortKey::kInclusive);
  options.metric = 0;  // samples
  options.depth = 0;
  const RowTree tree = BuildTopDown(testing::SmallProfile());
  EXPECT_EQ(RenderText(tree, ViewKind::kTopDown, options, kHeader),
            "# cilkprof top-down view of test.cilkprof: /bin/prog (pid 42); samples, total 14; sorted by inclusive samples\n"
            "Incl samples   Incl%  Excl samples   Excl%  Function\n"
            "          14  100.0%             0    0.0%  <program root>\n");
}

TEST(RenderCsv, TopDown) {
  EXPECT_EQ(RenderCsv(BuildTopDown(testing::SmallProfile()), Options(SortKey::kInclusive)), R"(depth,path,name,file,line,module,edge,inlined,samples_inclusive,samples_exclusive,work_inclusive,work_exclusive
0,,<program root>,,0,,call,0,14,0,13500000,0
1,main,main,prog.c,5,/bin/prog,call,0,12,1,11500000,1000000
2,main;a,a,prog.c,18,/bin/prog,call,0,6,0,5500000,0
3,main;a;helper,helper,util.h,1,/bin/prog,call,1,6,2,5500000,2000000
4,main;a;helper;b,b,prog.c,28,/bin/prog,call,0,4,3,3500000,3000000
5,main;a;helper;b;??,??,,0,/lib/libm.so,call,0,1,1,500000,500000
2,main;c,c,prog.c,38,/bin/prog,spawn,0,4,4,4000000,4000000
2,main;c,c,prog.c,38,/bin/prog,call,0,1,1,1000000,1000000
1,<partial unwind>,<partial unwind>,,0,,call,0,2,0,2000000,0
2,<partial unwind>;b,b,prog.c,28,/bin/prog,call,0,2,2,2000000,2000000
)");
}

TEST(RenderCsv, FlatHasOneRowPerLine) {
  EXPECT_EQ(RenderCsv(BuildFlat(testing::SmallProfile()), Options(SortKey::kExclusive)), R"(depth,path,name,file,line,module,edge,inlined,samples_inclusive,samples_exclusive,work_inclusive,work_exclusive
0,,<program root>,,0,,call,0,14,0,13500000,0
1,/bin/prog,/bin/prog,,0,/bin/prog,call,0,14,13,13500000,13000000
2,/bin/prog;prog.c,prog.c,prog.c,0,/bin/prog,call,0,14,11,13500000,11000000
3,/bin/prog;prog.c;b,b,prog.c,28,/bin/prog,call,0,6,5,5500000,5000000
4,/bin/prog;prog.c;b;b,b,prog.c,30,/bin/prog,call,0,6,5,5500000,5000000
3,/bin/prog;prog.c;c,c,prog.c,38,/bin/prog,call,0,5,5,5000000,5000000
4,/bin/prog;prog.c;c;c,c,prog.c,40,/bin/prog,call,0,5,5,5000000,5000000
3,/bin/prog;prog.c;main,main,prog.c,5,/bin/prog,call,0,12,1,11500000,1000000
4,/bin/prog;prog.c;main;main,main,prog.c,10,/bin/prog,call,0,11,1,10500000,1000000
4,/bin/prog;prog.c;main;main,main,prog.c,11,/bin/prog,call,0,1,0,1000000,0
3,/bin/prog;prog.c;a,a,prog.c,18,/bin/prog,call,0,6,0,5500000,0
4,/bin/prog;prog.c;a;a,a,prog.c,21,/bin/prog,call,0,6,0,5500000,0
2,/bin/prog;util.h,util.h,util.h,0,/bin/prog,call,0,6,2,5500000,2000000
3,/bin/prog;util.h;helper,helper,util.h,1,/bin/prog,call,1,6,2,5500000,2000000
4,/bin/prog;util.h;helper;helper,helper,util.h,3,/bin/prog,call,1,6,2,5500000,2000000
1,/lib/libm.so,/lib/libm.so,,0,/lib/libm.so,call,0,1,1,500000,500000
2,/lib/libm.so;<unknown file>,<unknown file>,,0,/lib/libm.so,call,0,1,1,500000,500000
3,/lib/libm.so;<unknown file>;??,??,,0,/lib/libm.so,call,0,1,1,500000,500000
4,/lib/libm.so;<unknown file>;??;??,??,,0,/lib/libm.so,call,0,1,1,500000,500000
1,<partial unwind>,<partial unwind>,,0,,call,0,2,0,2000000,0
)");
}

TEST(RenderCsv, QuotesFieldsWithCommasAndQuotes) {
  profile::Profile p = testing::SmallProfile();
  p.mutable_locations(1)->mutable_frames(0)->set_function("std::map<int, \"x\">::find");
  p.mutable_locations(2)->mutable_frames(0)->set_function("std::map<int, \"x\">::find");
  const std::string csv = RenderCsv(BuildTopDown(p), Options(SortKey::kInclusive));
  EXPECT_NE(csv.find(",\"std::map<int, \"\"x\"\">::find\",prog.c,5,"), std::string::npos) << csv;
}

TEST(RenderJson, TopDownIsTheDocumentedNestedTree) {
  const RowTree tree = BuildTopDown(testing::SmallProfile());
  auto metrics = [](double s_incl, double s_excl, double w_incl, double w_excl) {
    return nlohmann::json{{"samples", {{"inclusive", s_incl}, {"exclusive", s_excl}}},
                          {"work", {{"inclusive", w_incl * 1e6}, {"exclusive", w_excl * 1e6}}}};
  };
  auto node = [](const char* name, const char* file, int line, const char* module, const char* edge,
                 nlohmann::json metrics, nlohmann::json children) {
    return nlohmann::json{{"name", name},  {"file", file}, {"line", line},       {"module", module},
                          {"edge", edge},  {"inlined", std::string(name) == "helper"},
                          {"metrics", metrics}, {"children", children}};
  };
  const auto empty = nlohmann::json::array();
  const nlohmann::json expected = node(
      "<program root>", "", 0, "", "call", metrics(14, 0, 13.5, 0),
      {node("main", "prog.c", 5, "/bin/prog", "call", metrics(12, 1, 11.5, 1),
            {node("a", "prog.c", 18, "/bin/prog", "call", metrics(6, 0, 5.5, 0),
                  {node("helper", "util.h", 1, "/bin/prog", "call", metrics(6, 2, 5.5, 2),
                        {node("b", "prog.c", 28, "/bin/prog", "call", metrics(4, 3, 3.5, 3),
                              {node("??", "", 0, "/lib/libm.so", "call", metrics(1, 1, 0.5, 0.5), empty)})})}),
             node("c", "prog.c", 38, "/bin/prog", "spawn", metrics(4, 4, 4, 4), empty),
             node("c", "prog.c", 38, "/bin/prog", "call", metrics(1, 1, 1, 1), empty)}),
       node("<partial unwind>", "", 0, "", "call", metrics(2, 0, 2, 0),
            {node("b", "prog.c", 28, "/bin/prog", "call", metrics(2, 2, 2, 2), empty)})});
  const std::string text = RenderJson(tree, Options(SortKey::kInclusive));
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(nlohmann::json::parse(text), expected);
  // Keys come in the documented order.
  EXPECT_LT(text.find("\"name\""), text.find("\"file\""));
  EXPECT_LT(text.find("\"edge\""), text.find("\"metrics\""));
}

TEST(RenderJson, EveryNodeHasExactlyTheContractFields) {
  const RowTree top_down = BuildTopDown(testing::SmallProfile());
  const BottomUp bottom_up(top_down);
  const RowTree flat = BuildFlat(testing::SmallProfile());
  for (const ViewSource& source : {ViewSource(bottom_up), ViewSource(flat)}) {
    const nlohmann::json json = nlohmann::json::parse(RenderJson(source, Options(SortKey::kExclusive)));
    std::vector<const nlohmann::json*> stack{&json};
    size_t seen = 0;
    while (!stack.empty()) {
      const nlohmann::json& n = *stack.back();
      stack.pop_back();
      ++seen;
      ASSERT_EQ(n.size(), 8u) << n.dump();
      for (const char* key : {"name", "file", "line", "module", "edge", "inlined", "metrics", "children"}) {
        ASSERT_TRUE(n.contains(key)) << key;
      }
      EXPECT_TRUE(n["edge"] == "call" || n["edge"] == "spawn");
      EXPECT_TRUE(n["metrics"].contains("work"));
      for (const auto& child : n["children"]) stack.push_back(&child);
    }
    EXPECT_EQ(seen, Materialize(source, Options(SortKey::kExclusive)).nodes.size());
  }
}

TEST(RenderText, LabelsSpawnInlineAndUnknownCode) {
  ViewNode spawned;
  spawned.name = "c";
  spawned.edge = Edge::kSpawn;
  EXPECT_EQ(RowLabel(spawned), "[spawn] c");
  ViewNode inlined;
  inlined.name = "helper";
  inlined.inlined = true;
  EXPECT_EQ(RowLabel(inlined), "helper (inline)");
  ViewNode unknown;
  unknown.name = "??";
  unknown.module = "/usr/lib/libm.so.6";
  EXPECT_EQ(RowLabel(unknown), "?? [libm.so.6]");
  ViewNode line;
  line.kind = RowKind::kLine;
  line.file = "/src/prog.c";
  line.line = 12;
  EXPECT_EQ(RowLabel(line), "prog.c:12");
}

}  // namespace
}  // namespace cilkprof::views
