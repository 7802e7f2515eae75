// Depth-first traversal shared by the view builders and the call-site columns.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "cilkprof/views/view_tree.h"

namespace cilkprof::views::internal {

// Depth-first traversal of a tree given as children lists (children[node] is a
// sequence of node indices), calling enter(node) before a node's children, in order,
// and leave(node) after them; enter returns false to skip a subtree (leave is then not
// called for it). Iterative, so deep trees cannot overflow the stack.
template <typename Children, typename Enter, typename Leave>
void DepthFirst(const Children& children, uint32_t root, Enter enter, Leave leave) {
  std::vector<std::pair<uint32_t, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [node, entered] = stack.back();
    stack.pop_back();
    if (entered) {
      leave(node);
      continue;
    }
    if (!enter(node)) continue;
    stack.push_back({node, true});
    const auto& kids = children[node];
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back({*it, false});
  }
}

// A ViewTree's children lists, for DepthFirst.
struct ChildrenOf {
  const ViewTree& tree;
  const std::vector<uint32_t>& operator[](uint32_t node) const { return tree.nodes[node].children; }
};

}  // namespace cilkprof::views::internal
