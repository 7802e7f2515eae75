// Filters: --depth, --threshold, --focus, --hot-path and --metric semantics.
#include <gtest/gtest.h>

#include "cilkprof/views/bottom_up.h"
#include "cilkprof/views/build.h"
#include "cilkprof/views/filter.h"
#include "cilkprof/views/view_tree.h"
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
  EXPECT_EQ(Rows(Materialize(BuildTopDown(testing::SmallProfile()), options)),
            (Lines{"<program root>", "  main", "  <partial unwind>"}));
  options.depth = 0;
  EXPECT_EQ(Rows(Materialize(BuildTopDown(testing::SmallProfile()), options)), (Lines{"<program root>"}));
}

TEST(Prune, ThresholdHidesRowsBelowPercentOfTotal) {
  ViewOptions options = WorkInclusive();
  options.threshold_percent = 25;  // of 13.5 ms: 3.375 ms
  EXPECT_EQ(Rows(Materialize(BuildTopDown(testing::SmallProfile()), options)),
            (Lines{"<program root>", "  main", "    a", "      helper (inline)", "        b", "    [spawn] c"}));
  // Exactly at the threshold is kept: b and the spawned c hold 4 of 14 samples.
  options.metric = 0;
  options.threshold_percent = 100.0 * 4 / 14;
  EXPECT_EQ(Rows(Materialize(BuildTopDown(testing::SmallProfile()), options)),
            (Lines{"<program root>", "  main", "    a", "      helper (inline)", "        b", "    [spawn] c"}));
}

TEST(Prune, BottomUpThresholdUsesExclusive) {
  ViewOptions options = WorkInclusive();
  options.sort_key = SortKey::kExclusive;
  options.threshold_percent = 29;  // 3.915 ms of exclusive work
  const RowTree top_down = BuildTopDown(testing::SmallProfile());
  EXPECT_EQ(Rows(Materialize(BottomUp(top_down), options)),
            (Lines{"<program root>", "  b", "  c", "    [spawn] main"}));
}

TEST(Prune, HotPathExpandsWhileAChildHoldsHalf) {
  ViewOptions options = WorkInclusive();
  options.hot_path = true;
  // root (13.5) -> main (11.5, hot) -> a 5.5 < 5.75: main's children are shown, none expanded.
  EXPECT_EQ(Rows(Materialize(BuildTopDown(testing::SmallProfile()), options)),
            (Lines{"<program root>", "  main", "    a", "    [spawn] c", "    c", "  <partial unwind>"}));
  // Focused on a: a (5.5) -> helper (5.5) -> b (3.5 >= 2.75) -> ?? (0.5 < 1.75).
  auto focused = FocusOn(BuildTopDown(testing::SmallProfile()), "a");
  ASSERT_TRUE(focused.ok());
  EXPECT_EQ(Rows(Materialize(*focused, options)),
            (Lines{"a", "  helper (inline)", "    b", "      ?? [libm.so]"}));
}

TEST(Focus, MergesEveryContextOfTheFunction) {
  auto focused_tree = FocusOn(BuildTopDown(testing::SmallProfile()), "b");
  ASSERT_TRUE(focused_tree.ok()) << focused_tree.status().message();
  const ViewTree focused = Materialize(*focused_tree);
  const ViewNode& root = focused.nodes[0];
  EXPECT_EQ(root.name, "b");
  EXPECT_DOUBLE_EQ(root.inclusive[0], 6);  // 4 under helper + 2 under the partial unwind
  EXPECT_DOUBLE_EQ(root.exclusive[0], 5);
  EXPECT_DOUBLE_EQ(focused.program_total[0], 14);  // percentages stay of the program
  EXPECT_EQ(Rows(Materialize(*focused_tree, WorkInclusive())), (Lines{"b", "  ?? [libm.so]"}));
  // Both c contexts (spawned and called) merge at the root of the view.
  auto c = FocusOn(BuildTopDown(testing::SmallProfile()), "c");
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c->inclusive(0)[0], 5);
}

TEST(Focus, CountsRecursionOnce) {
  auto focused = FocusOn(BuildTopDown(testing::RecursiveProfile(4)), "f(int)");
  ASSERT_TRUE(focused.ok());
  EXPECT_DOUBLE_EQ(focused->inclusive(0)[0], 4);
  EXPECT_EQ(Rows(Materialize(*focused, WorkInclusive())), (Lines{"f(int)", "  f(int)", "    f(int)", "      f(int)"}));
}

TEST(Focus, AcceptsANameWithoutParameters) {
  auto focused = FocusOn(BuildTopDown(testing::RecursiveProfile(2)), "f");
  ASSERT_TRUE(focused.ok()) << focused.status().message();
  EXPECT_EQ(focused->labels().Name(focused->label(0)), "f(int)");
}

TEST(Focus, AcceptsANameWithoutQualifiers) {
  profile::Profile p = testing::RecursiveProfile(2);
  p.mutable_locations(2)->mutable_frames(0)->set_function("(anonymous namespace)::f(int)");
  auto focused = FocusOn(BuildTopDown(p), "f");
  ASSERT_TRUE(focused.ok()) << focused.status().message();
  EXPECT_EQ(focused->labels().Name(focused->label(0)), "(anonymous namespace)::f(int)");
}

TEST(Focus, ErrorsNameTheProblem) {
  auto missing = FocusOn(BuildTopDown(testing::SmallProfile()), "nosuch");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no function named 'nosuch'"), std::string::npos);
  auto similar = FocusOn(BuildTopDown(testing::SmallProfile()), "help");
  ASSERT_FALSE(similar.ok());
  EXPECT_NE(similar.status().message().find("helper"), std::string::npos);

  profile::Profile p = testing::RecursiveProfile(2);
  auto* overload = p.add_locations();
  *overload = p.locations(2);
  overload->mutable_frames(0)->set_function("f(long)");
  auto* node = p.add_nodes();
  node->set_location(static_cast<uint32_t>(p.locations_size() - 1));
  node->add_exclusive(1);
  auto ambiguous = FocusOn(BuildTopDown(p), "f");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_NE(ambiguous.status().message().find("f(int)"), std::string::npos);
  EXPECT_NE(ambiguous.status().message().find("f(long)"), std::string::npos);
}

TEST(Focus, FlatViewRootsAtTheFunctionsLines) {
  auto focused = FocusOn(BuildFlat(testing::SmallProfile()), "main");
  ASSERT_TRUE(focused.ok());
  ViewOptions options = WorkInclusive();
  options.sort_key = SortKey::kExclusive;
  EXPECT_EQ(Rows(Materialize(*focused, options)), (Lines{"main", "  prog.c:10", "  prog.c:11"}));
}

TEST(Metric, DefaultIsWorkElseTheFirst) {
  const MetricColumns metrics = MetricColumns::Of(testing::SmallProfile());
  EXPECT_EQ(*ResolveMetric(metrics, ""), 1u);
  EXPECT_EQ(*ResolveMetric(metrics, "samples"), 0u);
  auto unknown = ResolveMetric(metrics, "cycles");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("samples, work"), std::string::npos);
  EXPECT_EQ(*ResolveMetric(MetricColumns::Of({{"samples", "count", ""}, {"wall", "ns", ""}}), ""), 0u);
  EXPECT_FALSE(ResolveMetric(MetricColumns::Of(std::vector<MetricInfo>{}), "").ok());
}

TEST(Sorting, TiesBreakByNameSoOutputIsDeterministic) {
  ViewOptions options = WorkInclusive();
  options.sort_key = SortKey::kExclusive;
  options.depth = 1;
  const RowTree top_down = BuildTopDown(testing::SmallProfile());
  const Lines rows = Rows(Materialize(BottomUp(top_down), options));
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows[1], "  b");  // b and c both hold 5 ms
  EXPECT_EQ(rows[2], "  c");
}

TEST(WithoutParameters, StripsParametersAndQualifiers) {
  EXPECT_EQ(WithoutParameters("ns::f<int>(int, char) const"), "ns::f<int>");
  EXPECT_EQ(WithoutParameters("g(void (*)(int))"), "g");
  EXPECT_EQ(WithoutParameters("main"), "main");
  EXPECT_EQ(WithoutParameters("(anonymous namespace)::h()"), "(anonymous namespace)::h");
  // Lambdas as c++filt spells them; a call operator without a parameter list keeps its name.
  EXPECT_EQ(WithoutParameters("(anonymous namespace)::fib(int)::{lambda()#1}::operator()() const"),
            "(anonymous namespace)::fib(int)::{lambda()#1}::operator()");
  EXPECT_EQ(WithoutParameters("main::{lambda()#1}::operator()() const::{lambda()}::operator()"),
            "main::{lambda()#1}::operator()() const::{lambda()}::operator()");
  // Function templates carry their return type.
  EXPECT_EQ(WithoutParameters("void cilk::detail::invoke_erased<fib(int)::{lambda()#1}>(void*)"),
            "cilk::detail::invoke_erased<fib(int)::{lambda()#1}>");
  EXPECT_EQ(WithoutParameters("int (anonymous namespace)::apply<int>(int)"), "(anonymous namespace)::apply<int>");
  EXPECT_EQ(WithoutParameters("ns::C::operator new(unsigned long)"), "ns::C::operator new");
}

TEST(UnqualifiedName, StripsQualifiersOutsideTemplateArguments) {
  EXPECT_EQ(UnqualifiedName("ns::C<a::b>::f(int) const"), "f");
  EXPECT_EQ(UnqualifiedName("(anonymous namespace)::fib(int)"), "fib");
  EXPECT_EQ(UnqualifiedName("cilk::scope::spawn<ns::g(int)::<lambda()> >"), "spawn<ns::g(int)::<lambda()> >");
  EXPECT_EQ(UnqualifiedName("main"), "main");
  EXPECT_EQ(UnqualifiedName("void cilk::detail::invoke_erased<fib(int)::{lambda()#1}>(void*)"),
            "invoke_erased<fib(int)::{lambda()#1}>");
  EXPECT_EQ(UnqualifiedName("(anonymous namespace)::fib(int)::{lambda()#1}::operator()() const"), "operator()");
}

}  // namespace
}  // namespace cilkprof::views
