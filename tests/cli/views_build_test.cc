// Folding: inclusive/exclusive arithmetic of the three views on SmallProfile.
#include <gtest/gtest.h>

#include "cilkprof/views/bottom_up.h"
#include "cilkprof/views/build.h"
#include "cilkprof/views/view_tree.h"
#include "views_test_profile.h"

namespace cilkprof::views {
namespace {

constexpr size_t kSamples = 0;
constexpr size_t kWork = 1;

// The child of `parent` whose label matches (name and edge), or -1.
int Child(const ViewTree& tree, uint32_t parent, const std::string& name, Edge edge = Edge::kCall) {
  for (uint32_t c : tree.nodes[parent].children) {
    if (tree.nodes[c].name == name && tree.nodes[c].edge == edge) return static_cast<int>(c);
  }
  return -1;
}

uint32_t Path(const ViewTree& tree, std::initializer_list<std::pair<const char*, Edge>> steps) {
  uint32_t at = 0;
  for (const auto& [name, edge] : steps) {
    const int next = Child(tree, at, name, edge);
    EXPECT_GE(next, 0) << "missing " << name;
    if (next < 0) return 0;
    at = static_cast<uint32_t>(next);
  }
  return at;
}

constexpr Edge kCall = Edge::kCall;
constexpr Edge kSpawn = Edge::kSpawn;

// Every row of a view, unpruned.
ViewTree TopDown(const profile::Profile& p, const BuildOptions& options = {}) {
  return Materialize(BuildTopDown(p, options));
}
ViewTree BottomUpOf(const profile::Profile& p) {
  const RowTree top_down = BuildTopDown(p);
  return Materialize(BottomUp(top_down));
}
ViewTree Flat(const profile::Profile& p, const BuildOptions& options = {}) { return Materialize(BuildFlat(p, options)); }

TEST(TopDown, FoldsAddressesIntoFunctionsWithInclusiveAndExclusive) {
  const ViewTree tree = TopDown(testing::SmallProfile());
  ASSERT_EQ(tree.metrics.size(), 2u);
  EXPECT_EQ(tree.nodes[0].name, "<program root>");
  EXPECT_DOUBLE_EQ(tree.program_total[kSamples], 14);
  EXPECT_DOUBLE_EQ(tree.program_total[kWork], 13.5e6);

  // Both addresses of main merge into one row.
  ASSERT_EQ(tree.nodes[0].children.size(), 2u);
  const uint32_t main = Path(tree, {{"main", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[main].exclusive[kSamples], 1);
  EXPECT_DOUBLE_EQ(tree.nodes[main].inclusive[kSamples], 12);
  EXPECT_DOUBLE_EQ(tree.nodes[main].inclusive[kWork], 11.5e6);
  EXPECT_EQ(tree.nodes[main].file, "prog.c");
  EXPECT_EQ(tree.nodes[main].line, 5u);  // where main is defined
  EXPECT_EQ(tree.nodes[main].module, "/bin/prog");

  // The inlined helper is a row of its own below a; the address's cost is its.
  const uint32_t a = Path(tree, {{"main", kCall}, {"a", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[a].exclusive[kSamples], 0);
  EXPECT_DOUBLE_EQ(tree.nodes[a].inclusive[kSamples], 6);
  const uint32_t helper = Path(tree, {{"main", kCall}, {"a", kCall}, {"helper", kCall}});
  EXPECT_TRUE(tree.nodes[helper].inlined);
  EXPECT_FALSE(tree.nodes[a].inlined);
  EXPECT_EQ(tree.nodes[helper].file, "util.h");
  EXPECT_DOUBLE_EQ(tree.nodes[helper].exclusive[kSamples], 2);
  EXPECT_DOUBLE_EQ(tree.nodes[helper].inclusive[kWork], 5.5e6);
  const uint32_t unknown = Path(tree, {{"main", kCall}, {"a", kCall}, {"helper", kCall}, {"b", kCall}, {"??", kCall}});
  EXPECT_EQ(tree.nodes[unknown].module, "/lib/libm.so");
  EXPECT_DOUBLE_EQ(tree.nodes[unknown].inclusive[kWork], 0.5e6);

  // A spawned c and a called c are different contexts.
  const uint32_t spawned = Path(tree, {{"main", kCall}, {"c", kSpawn}});
  const uint32_t called = Path(tree, {{"main", kCall}, {"c", kCall}});
  EXPECT_NE(spawned, called);
  EXPECT_DOUBLE_EQ(tree.nodes[spawned].inclusive[kSamples], 4);
  EXPECT_DOUBLE_EQ(tree.nodes[called].inclusive[kSamples], 1);

  const uint32_t partial = Path(tree, {{"<partial unwind>", kCall}});
  EXPECT_EQ(tree.nodes[partial].kind, RowKind::kPartialUnwind);
  EXPECT_DOUBLE_EQ(tree.nodes[partial].inclusive[kSamples], 2);
  EXPECT_DOUBLE_EQ(tree.nodes[Path(tree, {{"<partial unwind>", kCall}, {"b", kCall}})].exclusive[kSamples], 2);
}

TEST(TopDown, InclusiveIsExclusivePlusChildrenEverywhere) {
  const ViewTree tree = TopDown(testing::SmallProfile());
  for (const ViewNode& node : tree.nodes) {
    for (size_t m = 0; m < 2; ++m) {
      double sum = node.exclusive[m];
      for (uint32_t c : node.children) sum += tree.nodes[c].inclusive[m];
      EXPECT_DOUBLE_EQ(node.inclusive[m], sum) << node.name;
    }
  }
}

TEST(BottomUp, FunctionsCarryTheirExclusiveCostAndExpandIntoCallers) {
  const ViewTree tree = BottomUpOf(testing::SmallProfile());
  EXPECT_DOUBLE_EQ(tree.nodes[0].inclusive[kWork], 13.5e6);
  // c: spawned (4) and called (1) merge at the top; its callers keep the edge.
  const uint32_t c = Path(tree, {{"c", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[c].exclusive[kSamples], 5);
  EXPECT_DOUBLE_EQ(tree.nodes[c].inclusive[kSamples], 5);
  EXPECT_DOUBLE_EQ(tree.nodes[Path(tree, {{"c", kCall}, {"main", kSpawn}})].exclusive[kSamples], 4);
  EXPECT_DOUBLE_EQ(tree.nodes[Path(tree, {{"c", kCall}, {"main", kCall}})].exclusive[kSamples], 1);
  // b: called through the inlined helper, and found under a partial unwind.
  const uint32_t b = Path(tree, {{"b", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[b].exclusive[kSamples], 5);
  EXPECT_DOUBLE_EQ(tree.nodes[b].inclusive[kSamples], 6);
  EXPECT_DOUBLE_EQ(tree.nodes[Path(tree, {{"b", kCall}, {"helper", kCall}, {"a", kCall}, {"main", kCall}})]
                       .exclusive[kSamples], 3);
  EXPECT_DOUBLE_EQ(tree.nodes[Path(tree, {{"b", kCall}, {"<partial unwind>", kCall}})].exclusive[kSamples], 2);
  // Exclusive values of the top-level functions add up to the program total.
  double sum = 0;
  for (uint32_t f : tree.nodes[0].children) sum += tree.nodes[f].exclusive[kWork];
  EXPECT_DOUBLE_EQ(sum, 13.5e6);
}

TEST(BottomUp, RecursionIsCountedOnce) {
  const ViewTree tree = BottomUpOf(testing::RecursiveProfile(5));
  const uint32_t f = Path(tree, {{"f(int)", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[f].exclusive[kSamples], 5);
  EXPECT_DOUBLE_EQ(tree.nodes[f].inclusive[kSamples], 5);
  // f called by f: the four inner contexts, counted once together.
  const uint32_t ff = Path(tree, {{"f(int)", kCall}, {"f(int)", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[ff].exclusive[kSamples], 4);
  EXPECT_DOUBLE_EQ(tree.nodes[ff].inclusive[kSamples], 4);
  const uint32_t main = Path(tree, {{"main", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[main].inclusive[kSamples], 5);
  EXPECT_DOUBLE_EQ(tree.nodes[main].exclusive[kSamples], 0);
}

TEST(Flat, GroupsByModuleFileFunctionLine) {
  const ViewTree tree = Flat(testing::SmallProfile());
  const uint32_t prog = Path(tree, {{"/bin/prog", kCall}});
  EXPECT_EQ(tree.nodes[prog].kind, RowKind::kModule);
  EXPECT_DOUBLE_EQ(tree.nodes[prog].exclusive[kWork], 13e6);
  EXPECT_DOUBLE_EQ(tree.nodes[prog].inclusive[kWork], 13.5e6);  // libm's sample runs under prog
  const uint32_t libm = Path(tree, {{"/lib/libm.so", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[libm].exclusive[kWork], 0.5e6);

  const uint32_t prog_c = Path(tree, {{"/bin/prog", kCall}, {"prog.c", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[prog_c].exclusive[kSamples], 11);
  const uint32_t util_h = Path(tree, {{"/bin/prog", kCall}, {"util.h", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[util_h].exclusive[kSamples], 2);

  // main's two lines: 10 holds its own sample; 11 only calls c.
  const uint32_t main = Path(tree, {{"/bin/prog", kCall}, {"prog.c", kCall}, {"main", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[main].exclusive[kSamples], 1);
  EXPECT_DOUBLE_EQ(tree.nodes[main].inclusive[kSamples], 12);
  ASSERT_EQ(tree.nodes[main].children.size(), 2u);
  for (uint32_t line : tree.nodes[main].children) {
    const ViewNode& row = tree.nodes[line];
    EXPECT_EQ(row.kind, RowKind::kLine);
    if (row.line == 10) {
      EXPECT_DOUBLE_EQ(row.exclusive[kSamples], 1);
      EXPECT_DOUBLE_EQ(row.inclusive[kSamples], 11);
    } else {
      EXPECT_EQ(row.line, 11u);
      EXPECT_DOUBLE_EQ(row.exclusive[kSamples], 0);
      EXPECT_DOUBLE_EQ(row.inclusive[kSamples], 1);
    }
  }
  // b is found with and without a full path: one row, both samples.
  const uint32_t b = Path(tree, {{"/bin/prog", kCall}, {"prog.c", kCall}, {"b", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[b].exclusive[kSamples], 5);
  EXPECT_DOUBLE_EQ(tree.nodes[b].inclusive[kSamples], 6);
  const uint32_t partial = Path(tree, {{"<partial unwind>", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[partial].inclusive[kSamples], 2);
}

TEST(Flat, RecursionIsCountedOnce) {
  const ViewTree tree = Flat(testing::RecursiveProfile(6));
  const uint32_t f = Path(tree, {{"/bin/prog", kCall}, {"prog.c", kCall}, {"f(int)", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[f].exclusive[kSamples], 6);
  EXPECT_DOUBLE_EQ(tree.nodes[f].inclusive[kSamples], 6);
}

TEST(TopDown, FoldingInlineChargesInlinedFramesToTheirCaller) {
  BuildOptions fold;
  fold.inline_mode = InlineMode::kFold;
  const ViewTree tree = TopDown(testing::SmallProfile(), fold);
  EXPECT_EQ(Child(tree, Path(tree, {{"main", kCall}, {"a", kCall}}), "helper"), -1);
  const uint32_t a = Path(tree, {{"main", kCall}, {"a", kCall}});
  EXPECT_DOUBLE_EQ(tree.nodes[a].exclusive[kSamples], 2);  // the inlined helper's samples
  EXPECT_DOUBLE_EQ(tree.nodes[a].inclusive[kSamples], 6);
  EXPECT_DOUBLE_EQ(tree.nodes[Path(tree, {{"main", kCall}, {"a", kCall}, {"b", kCall}})].inclusive[kSamples], 4);
  // The flat view puts the samples on a's line of the inlined call.
  const ViewTree flat = Flat(testing::SmallProfile(), fold);
  EXPECT_EQ(Child(flat, Path(flat, {{"/bin/prog", kCall}}), "util.h"), -1);
  EXPECT_DOUBLE_EQ(
      flat.nodes[Path(flat, {{"/bin/prog", kCall}, {"prog.c", kCall}, {"a", kCall}})].exclusive[kSamples], 2);
}

// A recursive function calling a leaf: the leaf's callers include the function, and
// the focus once merged those caller rows into the function's own (101% inclusive).
TEST(BottomUp, FocusRootsAtTheFunctionsOwnRow) {
  profile::Profile p = testing::RecursiveProfile(4);  // main > f > f > f > f, 1 sample each f
  const uint32_t leaf = static_cast<uint32_t>(p.locations_size());
  auto* location = p.add_locations();
  *location = p.locations(2);
  location->mutable_frames(0)->set_function("leaf");
  auto* node = p.add_nodes();
  node->set_parent(static_cast<uint32_t>(p.nodes_size() - 2));
  node->set_location(leaf);
  node->add_exclusive(3);
  node->add_exclusive(3e6);
  const RowTree top_down = BuildTopDown(p);
  BottomUp callers(top_down);
  ASSERT_TRUE(callers.Focus("f").ok());
  const ViewTree view = Materialize(callers);
  EXPECT_EQ(view.nodes[0].name, "f(int)");
  EXPECT_DOUBLE_EQ(view.nodes[0].inclusive[kSamples], 7);  // every sample is under f once
  EXPECT_DOUBLE_EQ(view.program_total[kSamples], 7);
  EXPECT_DOUBLE_EQ(view.nodes[0].exclusive[kSamples], 4);
}

TEST(Views, EmptyAndMalformedProfilesDoNotCrash) {
  profile::Profile empty;
  EXPECT_EQ(TopDown(empty).nodes.size(), 1u);
  EXPECT_EQ(Flat(empty).nodes.size(), 1u);
  EXPECT_EQ(BottomUpOf(empty).nodes.size(), 1u);
  profile::Profile odd = testing::SmallProfile();
  odd.mutable_nodes(2)->set_location(9999);  // out of range: shown as unknown code
  odd.mutable_nodes(3)->set_parent(77);      // a parent after the child: put under the root
  odd.mutable_locations(1)->clear_frames();
  const ViewTree tree = TopDown(odd);
  EXPECT_DOUBLE_EQ(tree.program_total[kSamples], 14);
  EXPECT_DOUBLE_EQ(Flat(odd).program_total[kSamples], 14);
  EXPECT_DOUBLE_EQ(BottomUpOf(odd).nodes[0].inclusive[kSamples], 14);
}

}  // namespace
}  // namespace cilkprof::views
