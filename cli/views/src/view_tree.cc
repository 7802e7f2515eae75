#include "cilkprof/views/view_tree.h"

#include <utility>

namespace cilkprof::views {
namespace {

bool KeyHasFileAndLine(RowKind kind) {
  return kind == RowKind::kFile || kind == RowKind::kFunction || kind == RowKind::kLine;
}

std::string MergeKey(uint32_t parent, const ViewNode& node, Edge edge) {
  std::string key = std::to_string(parent);
  key += '\x1f';
  key += std::to_string(static_cast<int>(node.kind));
  key += '\x1f';
  key += node.name;
  key += '\x1f';
  key += node.module;
  key += '\x1f';
  key += edge == Edge::kSpawn ? 's' : 'c';
  if (KeyHasFileAndLine(node.kind)) {
    key += '\x1f';
    key += node.file;
    key += '\x1f';
    key += node.kind == RowKind::kLine ? std::to_string(node.line) : std::string();
  }
  return key;
}

std::string MergeKey(uint32_t parent, const ViewNode& node) { return MergeKey(parent, node, node.edge); }

}  // namespace

bool SameMergeKey(const ViewNode& a, const ViewNode& b) {
  return MergeKey(0, a) == MergeKey(0, b);
}

uint32_t ViewTree::AddChild(uint32_t parent, ViewNode node) {
  const auto index = static_cast<uint32_t>(nodes.size());
  node.parent = parent;
  node.children.clear();
  node.inclusive.assign(metrics.size(), 0.0);
  node.exclusive.assign(metrics.size(), 0.0);
  child_index_.emplace(MergeKey(parent, node), index);
  nodes.push_back(std::move(node));
  nodes[parent].children.push_back(index);
  return index;
}

uint32_t ViewTree::FindOrAddChild(uint32_t parent, const ViewNode& probe) {
  auto it = child_index_.find(MergeKey(parent, probe));
  if (it != child_index_.end()) {
    // A merged row is inlined only if everything folded into it was.
    nodes[it->second].inlined = nodes[it->second].inlined && probe.inlined;
    return it->second;
  }
  return AddChild(parent, probe);
}

uint32_t ViewTree::FindOrAddChildLike(uint32_t parent, const ViewNode& source, Edge edge) {
  auto it = child_index_.find(MergeKey(parent, source, edge));
  if (it != child_index_.end()) {
    nodes[it->second].inlined = nodes[it->second].inlined && source.inlined;
    return it->second;
  }
  ViewNode node;
  node.kind = source.kind;
  node.name = source.name;
  node.file = source.file;
  node.line = source.line;
  node.module = source.module;
  node.edge = edge;
  node.inlined = source.inlined;
  return AddChild(parent, std::move(node));
}

void ViewTree::ComputeInclusiveFromExclusive() {
  for (auto& node : nodes) node.inclusive = node.exclusive;
  for (size_t i = nodes.size(); i-- > 1;) {
    auto& parent = nodes[nodes[i].parent].inclusive;
    for (size_t m = 0; m < parent.size(); ++m) parent[m] += nodes[i].inclusive[m];
  }
}

ViewTree ViewTree::EmptyLike(const ViewTree& like) {
  ViewTree tree;
  tree.metrics = like.metrics;
  tree.program_total = like.program_total;
  tree.call_sites = like.call_sites;
  ViewNode root;
  root.kind = RowKind::kRoot;
  root.name = kProgramRootName;
  root.inclusive.assign(like.metrics.size(), 0.0);
  root.exclusive.assign(like.metrics.size(), 0.0);
  tree.nodes.push_back(std::move(root));
  return tree;
}

}  // namespace cilkprof::views
