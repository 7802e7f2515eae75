// Choosing what a view shows: the sort metric and key, focus, depth, threshold and
// hot path. The result is a pruned copy of the tree, children in display order, that
// every renderer walks as is. Values are never changed by pruning: a row keeps its
// inclusive value even when some of its children are hidden.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cilkprof/common/status.h"
#include "cilkprof/views/view_tree.h"

namespace cilkprof::views {

enum class SortKey { kInclusive, kExclusive };

struct ViewOptions {
  size_t metric = 0;                      // index into ViewTree::metrics: sort and threshold
  SortKey sort_key = SortKey::kInclusive; // top-down: inclusive; bottom-up, flat: exclusive
  std::optional<uint32_t> depth;          // levels shown below the view's root
  double threshold_percent = 0;           // hide rows below this % of the program total
  bool hot_path = false;                  // expand only while a child holds >= half its parent
};

// The index of metric `name`; "" picks the default: "work" when present, else the
// first. Errors list the metrics the profile has.
Result<size_t> ResolveMetric(const ViewTree& tree, const std::string& name);

// A tree rooted at `function`, merging every context of it (only the outermost one
// under recursion, so nothing is counted twice). `function` is a full demangled name
// or a name without its parameter list ("fib" for "fib(int)"), or without its
// qualifiers either ("fib" for "(anonymous namespace)::fib(int)"). Errors when no row has
// that name, or when a short name stands for several functions (the message lists
// them so the user can pick one).
Result<ViewTree> FocusOn(const ViewTree& tree, const std::string& function);

// Sorts (by the metric descending, then name, file, line, module, edge) and prunes.
// The root is always kept.
ViewTree Prune(const ViewTree& tree, const ViewOptions& options);

// The function name without its parameter list and trailing qualifiers:
// "ns::f<int>(int, char) const" -> "ns::f<int>".
std::string WithoutParameters(const std::string& function);

// The name without parameters and without namespace or class qualifiers:
// "ns::C<a::b>::f(int) const" -> "f".
std::string UnqualifiedName(const std::string& function);

}  // namespace cilkprof::views
