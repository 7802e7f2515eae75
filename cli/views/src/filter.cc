#include "cilkprof/views/filter.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>
#include <utility>

#include "cilkprof/views/callsite_columns.h"

namespace cilkprof::views {
namespace {

bool IsFunctionRow(const ViewNode& node) {
  return node.kind == RowKind::kContext || node.kind == RowKind::kFunction ||
         node.kind == RowKind::kPartialUnwind;
}

std::string Lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Outermost rows satisfying `match`: their subtrees are not searched further, so a
// recursive function contributes its outermost contexts only.
template <typename Match>
std::vector<uint32_t> OutermostMatches(const ViewTree& tree, Match match) {
  std::vector<uint32_t> found;
  std::vector<uint32_t> stack{0};
  while (!stack.empty()) {
    const uint32_t n = stack.back();
    stack.pop_back();
    if (n != 0 && match(tree.nodes[n])) {
      found.push_back(n);
      continue;
    }
    const auto& kids = tree.nodes[n].children;
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
  }
  return found;
}

void Add(std::vector<double>& to, const std::vector<double>& from) {
  for (size_t m = 0; m < to.size() && m < from.size(); ++m) to[m] += from[m];
}

// Adds the subtree below `src_node` of `src` into `dst` below `dst_node`.
void MergeChildren(const ViewTree& src, uint32_t src_node, ViewTree& dst, uint32_t dst_node) {
  std::vector<std::pair<uint32_t, uint32_t>> stack{{src_node, dst_node}};
  while (!stack.empty()) {
    auto [from, to] = stack.back();
    stack.pop_back();
    for (uint32_t child : src.nodes[from].children) {
      const uint32_t merged = dst.FindOrAddChild(to, src.nodes[child]);
      Add(dst.nodes[merged].inclusive, src.nodes[child].inclusive);
      Add(dst.nodes[merged].exclusive, src.nodes[child].exclusive);
      // A site reached through several merged contexts is still one site.
      UniteCallSites(&dst.nodes[merged].call_sites, src.nodes[child].call_sites);
      stack.push_back({child, merged});
    }
  }
}

double SortValue(const ViewTree& tree, uint32_t n, const ViewOptions& options) {
  const ViewNode& node = tree.nodes[n];
  if (n == 0 && node.kind == RowKind::kRoot) {
    return options.metric < tree.program_total.size() ? tree.program_total[options.metric] : 0.0;
  }
  const auto& values = options.sort_key == SortKey::kInclusive ? node.inclusive : node.exclusive;
  return options.metric < values.size() ? values[options.metric] : 0.0;
}

}  // namespace

std::string WithoutParameters(const std::string& function) {
  std::string name = function;
  // Trailing qualifiers of member functions.
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const char* suffix : {" const", " volatile", " &&", " &", "&&", "&"}) {
      const std::string s = suffix;
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
        name.resize(name.size() - s.size());
        stripped = true;
      }
    }
  }
  if (name.empty() || name.back() != ')') return name;
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) {
      return i == 0 ? function : name.substr(0, i);
    }
  }
  return function;
}

std::string UnqualifiedName(const std::string& function) {
  const std::string name = WithoutParameters(function);
  // The last "::" outside template arguments and parentheses separates the
  // qualifiers: "ns::C<a::b>::f" -> "f", "(anonymous namespace)::fib" -> "fib".
  int depth = 0;
  for (size_t i = name.size(); i-- > 1;) {
    const char c = name[i];
    if (c == '>' || c == ')') ++depth;
    if ((c == '<' || c == '(') && depth > 0) --depth;
    if (depth == 0 && c == ':' && name[i - 1] == ':') return name.substr(i + 1);
  }
  return name;
}

Result<size_t> ResolveMetric(const ViewTree& tree, const std::string& name) {
  if (tree.metrics.empty()) {
    return Status::Error("the profile has no metrics: it holds no samples to show");
  }
  const std::string wanted = name.empty() ? "work" : name;
  for (size_t m = 0; m < tree.metrics.size(); ++m) {
    if (tree.metrics[m].name == wanted) return m;
  }
  if (name.empty()) return size_t{0};
  std::string known;
  for (const auto& metric : tree.metrics) known += (known.empty() ? "" : ", ") + metric.name;
  return Status::Error("unknown metric '" + name + "'; this profile has: " + known);
}

Result<ViewTree> FocusOn(const ViewTree& tree, const std::string& function) {
  std::vector<uint32_t> matches = OutermostMatches(
      tree, [&](const ViewNode& n) { return IsFunctionRow(n) && n.name == function; });
  // Shorter spellings, most specific first: without the parameter list ("ns::f" for
  // "ns::f(int)"), then without the qualifiers too ("fib" for
  // "(anonymous namespace)::fib(int)"). A short name standing for several functions
  // is an error that lists them.
  for (auto shorten : {&WithoutParameters, &UnqualifiedName}) {
    if (!matches.empty()) break;
    matches = OutermostMatches(tree, [&](const ViewNode& n) {
      return IsFunctionRow(n) && shorten(n.name) == function;
    });
    std::set<std::string> distinct;
    for (uint32_t m : matches) distinct.insert(tree.nodes[m].name);
    if (distinct.size() > 1) {
      std::string list;
      for (const auto& name : distinct) list += "\n  " + name;
      return Status::Error("--focus '" + function + "' matches several functions; give one full name:" + list);
    }
  }
  if (matches.empty()) {
    std::set<std::string> similar;
    const std::string needle = Lowercase(function);
    for (const auto& node : tree.nodes) {
      if (IsFunctionRow(node) && Lowercase(node.name).find(needle) != std::string::npos) similar.insert(node.name);
    }
    std::string message = "--focus: no function named '" + function + "' in this profile";
    if (!similar.empty()) {
      message += "; similar names:";
      size_t shown = 0;
      for (const auto& name : similar) {
        if (shown++ == 8) { message += "\n  ..."; break; }
        message += "\n  " + name;
      }
    } else {
      message += " (see the names in 'cilkprof view bottom-up')";
    }
    return Status::Error(message);
  }
  ViewTree focused = ViewTree::EmptyLike(tree);
  ViewNode& root = focused.nodes[0];
  const ViewNode& first = tree.nodes[matches.front()];
  root.kind = first.kind;
  root.name = first.name;
  root.file = first.file;
  root.line = first.line;
  root.module = first.module;
  root.inlined = first.inlined;
  for (uint32_t m : matches) {
    UniteCallSites(&focused.nodes[0].call_sites, tree.nodes[m].call_sites);
    Add(focused.nodes[0].inclusive, tree.nodes[m].inclusive);
    Add(focused.nodes[0].exclusive, tree.nodes[m].exclusive);
    MergeChildren(tree, m, focused, 0);
  }
  return focused;
}

ViewTree Prune(const ViewTree& tree, const ViewOptions& options) {
  ViewTree pruned = ViewTree::EmptyLike(tree);
  ViewNode root = tree.nodes[0];
  root.children.clear();
  pruned.nodes[0] = root;

  const double total =
      options.metric < tree.program_total.size() ? tree.program_total[options.metric] : 0.0;
  // A row exactly at the threshold stays, even when PCT/100 * total rounds up a little.
  const double threshold = options.threshold_percent / 100.0 * total * (1 - 1e-9);

  auto sorted_children = [&](uint32_t n) {
    std::vector<uint32_t> kids = tree.nodes[n].children;
    std::sort(kids.begin(), kids.end(), [&](uint32_t a, uint32_t b) {
      const double va = SortValue(tree, a, options);
      const double vb = SortValue(tree, b, options);
      if (va != vb) return va > vb;
      const ViewNode& x = tree.nodes[a];
      const ViewNode& y = tree.nodes[b];
      return std::tie(x.name, x.file, x.line, x.module, x.edge, x.kind) <
             std::tie(y.name, y.file, y.line, y.module, y.edge, y.kind);
    });
    return kids;
  };

  struct Pending {
    uint32_t source;
    uint32_t target;
    uint32_t depth;
    bool hot;  // on the hot path (only meaningful with options.hot_path)
  };
  std::vector<Pending> stack{{0, 0, 0, true}};
  while (!stack.empty()) {
    const Pending at = stack.back();
    stack.pop_back();
    if (options.depth && at.depth >= *options.depth) continue;
    if (options.hot_path && !at.hot) continue;
    const double parent_value = SortValue(tree, at.source, options);
    std::vector<Pending> next;
    for (uint32_t child : sorted_children(at.source)) {
      const double value = SortValue(tree, child, options);
      if (value < threshold) continue;
      ViewNode copy = tree.nodes[child];
      const uint32_t target = pruned.AddChild(at.target, copy);
      pruned.nodes[target].inclusive = copy.inclusive;
      pruned.nodes[target].exclusive = copy.exclusive;
      const bool hot = value > 0 && value >= 0.5 * parent_value;
      next.push_back({child, target, at.depth + 1, hot});
    }
    for (auto it = next.rbegin(); it != next.rend(); ++it) stack.push_back(*it);
  }
  return pruned;
}

}  // namespace cilkprof::views
