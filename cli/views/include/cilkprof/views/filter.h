// Choosing what a view shows: the sort metric and key, focus, depth, threshold and
// hot path. Sorting and pruning happen as the view is walked (walk.h); values are
// never changed by pruning: a row keeps its inclusive value even when some of its
// children are hidden.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"
#include "cilkprof/views/row_tree.h"

namespace cilkprof::views {

enum class SortKey { kInclusive, kExclusive };

struct ViewOptions {
  size_t metric = 0;                      // index into the metric columns: sort and threshold
  SortKey sort_key = SortKey::kInclusive; // top-down: inclusive; bottom-up, flat: exclusive
  std::optional<uint32_t> depth;          // levels shown below the view's root
  double threshold_percent = 0;           // hide rows below this % of the program total
  bool hot_path = false;                  // expand only while a child holds >= half its parent
};

// The labels among `candidates` (function rows: contexts, flat functions, partial
// unwinds) that `function` names: a full demangled name, or a name without its
// parameter list ("fib" for "fib(int)"), or without its qualifiers either ("fib" for
// "(anonymous namespace)::fib(int)"). Errors when nothing has that name, or when a
// short name stands for several functions (the message lists them so the user can
// pick one).
Result<std::vector<LabelId>> MatchFunction(const LabelTable& labels, std::span<const LabelId> candidates,
                                           const std::string& function);

// A tree rooted at `function`, merging every context of it (only the outermost one
// under recursion, so nothing is counted twice). Works on top-down and flat trees;
// the bottom-up view focuses with BottomUp::Focus.
Result<RowTree> FocusOn(const RowTree& tree, const std::string& function);

// The function name without its parameter list and trailing qualifiers:
// "ns::f<int>(int, char) const" -> "ns::f<int>".
std::string WithoutParameters(const std::string& function);

// The name without parameters and without namespace or class qualifiers:
// "ns::C<a::b>::f(int) const" -> "f".
std::string UnqualifiedName(const std::string& function);

}  // namespace cilkprof::views
