// The views against an independent oracle: each row's values computed from the
// definitions, one sample (address node) at a time, on random profiles with deep
// recursion, spawn edges, inlined frames, two modules, partial unwinds and lock leaves.
//
//   top-down   a row is a function-level path from the root; a sample adds its
//              exclusive value to the row of its whole path and its inclusive value to
//              every prefix of it.
//   bottom-up  a row is a function followed by callers (with the edge each entered
//              the one below); a sample adds exclusive to the rows its own context
//              reaches and inclusive, once, to every row some context on its path
//              (itself or an ancestor) reaches.
//   flat       module > file > function > line; a sample adds exclusive to its
//              innermost frame's rows and inclusive, once, to every row of every frame
//              on its path.
//   focus      the path from the outermost frame of the function on; bottom-up: the
//              rows that start with the function.
//   locks      a FRAME_LOCK leaf is one more step "[lock NAME]" of its path in the
//              top-down view; bottom-up and flat take its parent's path (its values
//              are its caller's, as if it were not there).
// None of this shares code with the builders: no merging, no pre-order, no counters.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cilkprof/views/bottom_up.h"
#include "cilkprof/views/build.h"
#include "cilkprof/views/filter.h"
#include "cilkprof/views/view_tree.h"

namespace cilkprof::views {
namespace {

struct Values {
  double exclusive[2] = {0, 0};
  double inclusive[2] = {0, 0};
};
using Rows = std::map<std::string, Values>;

struct Frame {
  std::string function, file, module;
  uint32_t line = 0;
  bool inlined = false;
};

// A random profile and, per address node, its frames from the root (the path).
struct Generated {
  profile::Profile profile;
  std::vector<std::vector<Frame>> path;      // function frames from the root to the node
  std::vector<std::vector<std::string>> steps;  // the same as row keys "edge name"
  // The same for bottom-up and flat: a lock node's are its parent's.
  std::vector<std::vector<Frame>> folded_path;
  std::vector<std::vector<std::string>> folded_steps;
};

Generated Generate(uint32_t seed, int nodes) {
  std::mt19937 rng(seed);
  auto uniform = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  Generated g;
  profile::Profile& p = g.profile;
  for (const char* name : {"samples", "work"}) {
    auto* metric = p.add_metrics();
    metric->set_name(name);
    metric->set_unit(name == std::string("work") ? "ns" : "count");
  }
  p.add_modules();
  p.add_modules()->set_path("/bin/prog");
  p.add_modules()->set_path("/lib/libx.so");
  p.add_locations();
  // Locations: a real function, sometimes with one or two inlined frames inside it.
  const char* functions[] = {"main", "f", "g", "h", "k", "helper"};
  const char* files[] = {"a.c", "b.c", "inl.h"};
  const int location_count = 24;
  for (int l = 1; l <= location_count; ++l) {
    auto* location = p.add_locations();
    location->set_module(1 + static_cast<uint32_t>(uniform(2)));
    location->set_offset(static_cast<uint64_t>(l) * 16);
    const int frames = 1 + (uniform(3) == 0 ? 1 + uniform(2) : 0);
    for (int f = 0; f < frames; ++f) {
      auto* frame = location->add_frames();
      const int fn = uniform(6);
      frame->set_function(functions[fn]);
      frame->set_file(files[uniform(3)]);
      frame->set_line(10 + static_cast<uint32_t>(uniform(4)));
      frame->set_function_file(files[fn % 3]);
      frame->set_function_line(static_cast<uint32_t>(fn));
      frame->set_inlined(f > 0);
    }
  }
  // Lock objects: a global (named, in the program) and one on the heap (its address).
  const uint32_t global_lock = static_cast<uint32_t>(p.locations_size());
  auto* lock = p.add_locations();
  lock->set_module(1);
  lock->set_offset(0x4040);
  lock->add_frames()->set_function("g_lock");
  lock = p.add_locations();
  lock->set_module(0);
  lock->set_offset(0x7f00001000);
  lock->add_frames()->set_function("0x7f00001000");
  p.add_nodes();  // the root
  g.path.emplace_back();
  g.steps.emplace_back();
  g.folded_path.emplace_back();
  g.folded_steps.emplace_back();
  std::vector<bool> is_lock(1, false);
  for (int i = 1; i < nodes; ++i) {
    // Mostly deepen a recent node, so that paths get long and recurse.
    int parent = i < 3 || uniform(4) == 0 ? uniform(i) : i - 1 - uniform(std::min(i - 1, 3));
    if (is_lock[static_cast<size_t>(parent)]) parent = static_cast<int>(p.nodes(parent).parent());  // locks are leaves
    auto* node = p.add_nodes();
    node->set_parent(static_cast<uint32_t>(parent));
    std::vector<Frame> path = g.path[static_cast<size_t>(parent)];
    std::vector<std::string> steps = g.steps[static_cast<size_t>(parent)];
    g.folded_path.push_back(g.folded_path[static_cast<size_t>(parent)]);
    g.folded_steps.push_back(g.folded_steps[static_cast<size_t>(parent)]);
    is_lock.push_back(uniform(6) == 0);
    if (is_lock.back()) {
      const uint32_t location = global_lock + static_cast<uint32_t>(uniform(2));
      node->set_kind(wire::FRAME_LOCK);
      node->set_location(location);
      const std::string name = p.locations(static_cast<int>(location)).frames(0).function();
      const std::string module = location == global_lock ? "/bin/prog" : "";
      path.push_back({"[lock " + name + "]", "", module, 0, false});
      steps.push_back("call [lock " + name + "] @" + module);
    } else if (parent == 0 && uniform(10) == 0) {
      node->set_kind(wire::FRAME_PARTIAL_UNWIND);
      path.push_back({kPartialUnwindName, "", "", 0, false});
      steps.push_back("call " + std::string(kPartialUnwindName) + " @");
    } else {
      const uint32_t location = 1 + static_cast<uint32_t>(uniform(location_count));
      node->set_location(location);
      const bool spawn = uniform(5) == 0;
      node->set_edge(spawn ? wire::EDGE_SPAWN : wire::EDGE_CALL);
      const profile::Location& l = p.locations(static_cast<int>(location));
      for (int f = 0; f < l.frames_size(); ++f) {
        const profile::SourceFrame& s = l.frames(f);
        const std::string& module = p.modules(static_cast<int>(l.module())).path();
        path.push_back({s.function(), s.file(), module, s.line(), s.inlined()});
        steps.push_back(std::string(f == 0 && spawn ? "spawn " : "call ") + s.function() + " @" + module);
      }
    }
    if (uniform(3) != 0) {
      node->add_exclusive(1 + uniform(3));
      node->add_exclusive(1000.0 * (1 + uniform(7)));
    }
    if (!is_lock.back()) {
      g.folded_path.back() = path;
      g.folded_steps.back() = steps;
    }
    g.path.push_back(std::move(path));
    g.steps.push_back(std::move(steps));
  }
  return g;
}

double Exclusive(const profile::Profile& p, size_t node, int m) {
  const auto& values = p.nodes(static_cast<int>(node)).exclusive();
  return m < values.size() ? values[m] : 0.0;
}

void Add(double* to, const profile::Profile& p, size_t node) {
  for (int m = 0; m < 2; ++m) to[m] += Exclusive(p, node, m);
}

std::string Join(const std::vector<std::string>& steps, size_t from, size_t to) {
  std::string key;
  for (size_t i = from; i < to; ++i) key += steps[i] + "|";
  return key;
}

// The rows of a walked view, keyed like the oracle's; rows with no value left out.
Rows Collect(const ViewTree& tree, bool flat) {
  Rows rows;
  std::vector<std::string> key(tree.nodes.size());
  for (size_t i = 1; i < tree.nodes.size(); ++i) {
    const ViewNode& n = tree.nodes[i];
    std::string step;
    if (flat) {
      step = n.kind == RowKind::kLine ? n.name + ":" + std::to_string(n.line) : n.name;
    } else {
      step = std::string(n.edge == Edge::kSpawn ? "spawn " : "call ") + n.name + " @" + n.module;
    }
    key[i] = (n.parent == 0 ? std::string() : key[n.parent]) + step + "|";
    Values& v = rows[key[i]];
    for (int m = 0; m < 2; ++m) {
      v.exclusive[m] += n.exclusive[static_cast<size_t>(m)];
      v.inclusive[m] += n.inclusive[static_cast<size_t>(m)];
    }
  }
  std::erase_if(rows, [](const auto& row) { return row.second.inclusive[0] == 0 && row.second.inclusive[1] == 0; });
  return rows;
}

Rows Nonzero(Rows rows) {
  std::erase_if(rows, [](const auto& row) { return row.second.inclusive[0] == 0 && row.second.inclusive[1] == 0; });
  return rows;
}

Rows TopDownOracle(const Generated& g, size_t focus_from_function = SIZE_MAX, const std::string& focus = "") {
  Rows rows;
  for (size_t n = 1; n < g.path.size(); ++n) {
    const auto& steps = g.steps[n];
    size_t from = 0;
    if (focus_from_function != SIZE_MAX) {
      while (from < steps.size() && g.path[n][from].function != focus) ++from;
      if (from == steps.size()) continue;
    }
    if (steps.size() == from) continue;
    // The focused root's own row: the function whatever its edge.
    auto key = [&](size_t end) {
      std::string k = Join(steps, from, end);
      if (focus_from_function != SIZE_MAX) k = k.substr(k.find('|') + 1);
      return k;
    };
    Add(rows[key(steps.size())].exclusive, g.profile, n);
    for (size_t end = from + 1; end <= steps.size(); ++end) Add(rows[key(end)].inclusive, g.profile, n);
  }
  if (focus_from_function != SIZE_MAX) rows.erase("");
  return Nonzero(rows);
}

// Bottom-up row keys a context (path prefix ending at `end`) reaches: the function,
// then each caller with the edge by which it entered the row below.
std::vector<std::string> BottomUpKeys(const std::vector<std::string>& steps, size_t end) {
  std::vector<std::string> keys;
  auto name_of = [](const std::string& step) { return step.substr(step.find(' ') + 1); };
  std::string key = "call " + name_of(steps[end - 1]) + "|";
  keys.push_back(key);
  for (size_t below = end - 1; below-- > 0;) {
    const std::string edge = steps[below + 1].substr(0, steps[below + 1].find(' '));
    key += edge + " " + name_of(steps[below]) + "|";
    keys.push_back(key);
  }
  return keys;
}

// With `focus`, only the rows of contexts of that function (in any module: the focus
// merges them), keyed without their first step (the focused root).
Rows BottomUpOracle(const Generated& g, const std::string& focus = "") {
  auto keys = [&](const std::vector<std::string>& steps, size_t end) {
    std::vector<std::string> all = BottomUpKeys(steps, end);
    if (focus.empty()) return all;
    const std::string& step = steps[end - 1];
    const std::string name = step.substr(step.find(' ') + 1, step.find(" @") - step.find(' ') - 1);
    if (name != focus) return std::vector<std::string>{};
    std::vector<std::string> callers;
    for (size_t i = 1; i < all.size(); ++i) callers.push_back(all[i].substr(all[i].find('|') + 1));
    return callers;
  };
  Rows rows;
  for (size_t n = 1; n < g.path.size(); ++n) {
    const auto& steps = g.folded_steps[n];
    if (steps.empty()) continue;
    for (const std::string& key : keys(steps, steps.size())) Add(rows[key].exclusive, g.profile, n);
    std::set<std::string> reached;
    for (size_t end = 1; end <= steps.size(); ++end) {
      for (const std::string& key : keys(steps, end)) reached.insert(key);
    }
    for (const std::string& key : reached) Add(rows[key].inclusive, g.profile, n);
  }
  return Nonzero(rows);
}

Rows FlatOracle(const Generated& g) {
  Rows rows;
  auto keys_of = [](const Frame& f) {
    if (f.function == kPartialUnwindName) return std::vector<std::string>{std::string(kPartialUnwindName) + "|"};
    const std::string module = (f.module.empty() ? "<unknown module>" : f.module) + "|";
    const std::string file = module + (f.file.empty() ? "<unknown file>" : f.file) + "|";
    const std::string function = file + f.function + "|";
    return std::vector<std::string>{module, file, function, function + f.function + ":" + std::to_string(f.line) + "|"};
  };
  for (size_t n = 1; n < g.path.size(); ++n) {
    const auto& path = g.folded_path[n];
    if (path.empty()) continue;
    for (const std::string& key : keys_of(path.back())) Add(rows[key].exclusive, g.profile, n);
    std::set<std::string> reached;
    for (const Frame& f : path) {
      for (const std::string& key : keys_of(f)) reached.insert(key);
    }
    for (const std::string& key : reached) Add(rows[key].inclusive, g.profile, n);
  }
  return Nonzero(rows);
}

void ExpectSameRows(const Rows& actual, const Rows& expected, const std::string& what) {
  for (const auto& [key, v] : expected) {
    auto it = actual.find(key);
    ASSERT_NE(it, actual.end()) << what << ": missing row " << key;
    for (int m = 0; m < 2; ++m) {
      EXPECT_DOUBLE_EQ(it->second.exclusive[m], v.exclusive[m]) << what << " exclusive of " << key;
      EXPECT_DOUBLE_EQ(it->second.inclusive[m], v.inclusive[m]) << what << " inclusive of " << key;
    }
  }
  for (const auto& [key, v] : actual) EXPECT_TRUE(expected.count(key)) << what << ": extra row " << key;
}

// The bottom-up view's tree (as `view bottom-up` builds it): lock leaves folded.
BuildOptions FoldLocks() {
  BuildOptions options;
  options.lock_mode = LockMode::kFoldIntoCaller;
  return options;
}

class Oracle : public ::testing::TestWithParam<uint32_t> {};

TEST_P(Oracle, TopDownBottomUpAndFlatMatchTheDefinitions) {
  const Generated g = Generate(GetParam(), 400);
  const RowTree top_down = BuildTopDown(g.profile);
  ExpectSameRows(Collect(Materialize(top_down), false), TopDownOracle(g), "top-down");
  const RowTree folded = BuildTopDown(g.profile, FoldLocks());
  ExpectSameRows(Collect(Materialize(BottomUp(folded)), false), BottomUpOracle(g), "bottom-up");
  ExpectSameRows(Collect(Materialize(BuildFlat(g.profile)), true), FlatOracle(g), "flat");
}

TEST_P(Oracle, FocusMatchesTheDefinitions) {
  const Generated g = Generate(GetParam(), 400);
  const RowTree top_down = BuildTopDown(g.profile);
  for (const std::string function : {"f", "g", "helper"}) {
    auto focused = FocusOn(top_down, function);
    ASSERT_TRUE(focused.ok()) << focused.status().message();
    const Rows expected = TopDownOracle(g, 0, function);
    Rows actual = Collect(Materialize(*focused), false);
    // The focused view's root row itself is not a path below it.
    ExpectSameRows(actual, expected, "top-down focus " + function);
    const ViewTree view = Materialize(*focused);
    double root = 0;
    for (size_t n = 1; n < g.path.size(); ++n) {
      for (const Frame& f : g.path[n]) {
        if (f.function == function) {
          root += Exclusive(g.profile, n, 1);
          break;
        }
      }
    }
    EXPECT_DOUBLE_EQ(view.nodes[0].inclusive[1], root) << function;

    // Bottom-up focus: the function's own row and its callers, never more than 100%.
    const RowTree folded = BuildTopDown(g.profile, FoldLocks());
    BottomUp bottom_up(folded);
    ASSERT_TRUE(bottom_up.Focus(function).ok());
    const ViewTree callers = Materialize(bottom_up);
    EXPECT_DOUBLE_EQ(callers.nodes[0].inclusive[1], root) << function;
    EXPECT_LE(callers.nodes[0].inclusive[1], callers.program_total[1]);
    ExpectSameRows(Collect(callers, false), BottomUpOracle(g, function), "bottom-up focus " + function);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, Oracle, ::testing::Values(1u, 2u, 3u, 7u, 11u, 42u, 99u, 1234u));

}  // namespace
}  // namespace cilkprof::views
