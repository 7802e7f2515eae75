// Filters: --depth, --threshold, --focus, --hot-path and --metric semantics.
#include <gtest/gtest.h>

#include "cilkprof/views/build.h"
#include "cilkprof/views/filter.h"
#include "cilkprof/views/render.h"
#include "views_test_profile.h"

namespace cilkprof::views {
namespace {

ViewOptions WorkInclusive() {
  ViewOptions options;
  options.metric = 1;
  options.sort_key = SortKey::kInclusive;
  return options;
}

// Labels of the pruned tree in display order, indented by depth.
std::vector<std::string> Rows(const ViewTree& tree) {
  std::vector<std::string> rows;
  std::vector<std::pair<uint32_t, size_t>> stack{{0, 0}};
  while (!stack.empty()) {
    auto [n, depth] = stack.back();
    stack.pop_back();
    rows.push_back(std::string(2 * depth, ' ') + RowLabel(tree.nodes[n]));
    const auto& kids = tree.nodes[n].children;
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back({*it, depth + 1});
  }
  return rows;
}

using Lines = std::vector<std::string>;

TEST(Prune, DepthCountsLevelsBelowTheRoot) {
  ViewOptions options = WorkInclusive();
  options.depth = 1;
  EXPECT_EQ(Rows(Prune(BuildTopDown(testing::SmallProfile()), options)),
            (Lines{"<program root>", "  main", "  <partial unwind>"}));
  options.depth = 0;
  EXPECT_EQ(Rows(Prune(BuildTopDown(testing::SmallProfile()), options)), (Lines{"<program root>"}));
}

TEST(Prune, ThresholdHidesRowsBelowPercentOfTotal) {
  ViewOptions options = WorkInclusive();
  options.threshold_percent = 25;  // of 13.5 ms: 3.375 ms
  EXPECT_EQ(Rows(Prune(BuildTopDown(testing::SmallProfile()), options)),
            (Lines{"<program root>", "  main", "    a", "      helper (inline)", "        b", "    [spawn] c"}));
  // Exactly at the threshold is kept: b and the spawned c hold 4 of 14 samples.
  options.metric = 0;
  options.threshold_percent = 100.0 * 4 / 14;
  EXPECT_EQ(Rows(Prune(BuildTopDown(testing::SmallProfile()), options)),
            (Lines{"<program root>", "  main", "    a", "      helper (inline)", "        b", "    [spawn] c"}));
}

TEST(Prune, BottomUpThresholdUsesExclusive) {
  ViewOptions options = WorkInclusive();
  options.sort_key = SortKey::kExclusive;
  options.threshold_percent = 29;  // 3.915 ms of exclusive work
  EXPECT_EQ(Rows(Prune(BuildBottomUp(BuildTopDown(testing::SmallProfile())), options)),
            (Lines{"<program root>", "  b", "  c", "    [spawn] main"}));
}

TEST(Prune, HotPathExpandsWhileAChildHoldsHalf) {
  ViewOptions options = WorkInclusive();
  options.hot_path = true;
  // root (13.5) -> main (11.5, hot) -> a 5.5 < 5.75: main's children are shown, none expanded.
  EXPECT_EQ(Rows(Prune(BuildTopDown(testing::SmallProfile()), options)),
            (Lines{"<program root>", "  main", "    a", "    [spawn] c", "    c", "  <partial unwind>"}));
  // Focused on a: a (5.5) -> helper (5.5) -> b (3.5 >= 2.75) -> ?? (0.5 < 1.75).
  auto focused = FocusOn(BuildTopDown(testing::SmallProfile()), "a");
  ASSERT_TRUE(focused.ok());
  EXPECT_EQ(Rows(Prune(*focused, options)),
            (Lines{"a", "  helper (inline)", "    b", "      ?? [libm.so]"}));
}

TEST(Focus, MergesEveryContextOfTheFunction) {
  auto focused = FocusOn(BuildTopDown(testing::SmallProfile()), "b");
  ASSERT_TRUE(focused.ok()) << focused.status().message();
  const ViewNode& root = focused->nodes[0];
  EXPECT_EQ(root.name, "b");
  EXPECT_DOUBLE_EQ(root.inclusive[0], 6);  // 4 under helper + 2 under the partial unwind
  EXPECT_DOUBLE_EQ(root.exclusive[0], 5);
  EXPECT_DOUBLE_EQ(focused->program_total[0], 14);  // percentages stay of the program
  EXPECT_EQ(Rows(Prune(*focused, WorkInclusive())), (Lines{"b", "  ?? [libm.so]"}));
  // Both c contexts (spawned and called) merge at the root of the view.
  auto c = FocusOn(BuildTopDown(testing::SmallProfile()), "c");
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c->nodes[0].inclusive[0], 5);
}

TEST(Focus, CountsRecursionOnce) {
  auto focused = FocusOn(BuildTopDown(testing::RecursiveProfile(4)), "f(int)");
  ASSERT_TRUE(focused.ok());
  EXPECT_DOUBLE_EQ(focused->nodes[0].inclusive[0], 4);
  EXPECT_EQ(Rows(Prune(*focused, WorkInclusive())), (Lines{"f(int)", "  f(int)", "    f(int)", "      f(int)"}));
}

TEST(Focus, AcceptsANameWithoutParameters) {
  auto focused = FocusOn(BuildTopDown(testing::RecursiveProfile(2)), "f");
  ASSERT_TRUE(focused.ok()) << focused.status().message();
  EXPECT_EQ(focused->nodes[0].name, "f(int)");
}

TEST(Focus, AcceptsANameWithoutQualifiers) {
  ViewTree tree = BuildTopDown(testing::RecursiveProfile(2));
  for (ViewNode& node : tree.nodes) {
    if (node.name == "f(int)") node.name = "(anonymous namespace)::f(int)";
  }
  auto focused = FocusOn(tree, "f");
  ASSERT_TRUE(focused.ok()) << focused.status().message();
  EXPECT_EQ(focused->nodes[0].name, "(anonymous namespace)::f(int)");
}

TEST(Focus, ErrorsNameTheProblem) {
  auto missing = FocusOn(BuildTopDown(testing::SmallProfile()), "nosuch");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no function named 'nosuch'"), std::string::npos);
  auto similar = FocusOn(BuildTopDown(testing::SmallProfile()), "help");
  ASSERT_FALSE(similar.ok());
  EXPECT_NE(similar.status().message().find("helper"), std::string::npos);

  ViewTree tree = BuildTopDown(testing::RecursiveProfile(2));
  ViewNode overload = tree.nodes[1];
  overload.name = "f(long)";
  tree.AddChild(0, overload);
  auto ambiguous = FocusOn(tree, "f");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_NE(ambiguous.status().message().find("f(int)"), std::string::npos);
  EXPECT_NE(ambiguous.status().message().find("f(long)"), std::string::npos);
}

TEST(Focus, FlatViewRootsAtTheFunctionsLines) {
  auto focused = FocusOn(BuildFlat(testing::SmallProfile()), "main");
  ASSERT_TRUE(focused.ok());
  ViewOptions options = WorkInclusive();
  options.sort_key = SortKey::kExclusive;
  EXPECT_EQ(Rows(Prune(*focused, options)), (Lines{"main", "  prog.c:10", "  prog.c:11"}));
}

TEST(Metric, DefaultIsWorkElseTheFirst) {
  ViewTree tree = BuildTopDown(testing::SmallProfile());
  EXPECT_EQ(*ResolveMetric(tree, ""), 1u);
  EXPECT_EQ(*ResolveMetric(tree, "samples"), 0u);
  auto unknown = ResolveMetric(tree, "cycles");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("samples, work"), std::string::npos);
  tree.metrics[1].name = "wall";
  EXPECT_EQ(*ResolveMetric(tree, ""), 0u);
  tree.metrics.clear();
  EXPECT_FALSE(ResolveMetric(tree, "").ok());
}

TEST(Sorting, TiesBreakByNameSoOutputIsDeterministic) {
  ViewOptions options = WorkInclusive();
  options.sort_key = SortKey::kExclusive;
  options.depth = 1;
  const Lines rows = Rows(Prune(BuildBottomUp(BuildTopDown(testing::SmallProfile())), options));
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows[1], "  b");  // b and c both hold 5 ms
  EXPECT_EQ(rows[2], "  c");
}

TEST(WithoutParameters, StripsParametersAndQualifiers) {
  EXPECT_EQ(WithoutParameters("ns::f<int>(int, char) const"), "ns::f<int>");
  EXPECT_EQ(WithoutParameters("g(void (*)(int))"), "g");
  EXPECT_EQ(WithoutParameters("main"), "main");
  EXPECT_EQ(WithoutParameters("(anonymous namespace)::h()"), "(anonymous namespace)::h");
}

TEST(UnqualifiedName, StripsQualifiersOutsideTemplateArguments) {
  EXPECT_EQ(UnqualifiedName("ns::C<a::b>::f(int) const"), "f");
  EXPECT_EQ(UnqualifiedName("(anonymous namespace)::fib(int)"), "fib");
  EXPECT_EQ(UnqualifiedName("cilk::scope::spawn<ns::g(int)::<lambda()> >"), "spawn<ns::g(int)::<lambda()> >");
  EXPECT_EQ(UnqualifiedName("main"), "main");
}

}  // namespace
}  // namespace cilkprof::views
