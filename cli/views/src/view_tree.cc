#include "cilkprof/views/view_tree.h"

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>

namespace cilkprof::views {
namespace {

bool KeyHasFileAndLine(RowKind kind) {
  return kind == RowKind::kFile || kind == RowKind::kFunction || kind == RowKind::kLine;
}

// The merge key of a row (see view_tree.h): its parent, kind, function, module and
// edge, and for flat file, function and line rows the file (and the line).
uint64_t KeyHash(uint32_t parent, const ViewNode& node, Edge edge) {
  uint64_t h = std::hash<std::string_view>{}(node.name);
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001B3ull + (h >> 29); };
  mix(parent);
  mix(static_cast<uint64_t>(node.kind));
  mix(std::hash<std::string_view>{}(node.module));
  mix(edge == Edge::kSpawn ? 1 : 2);
  if (KeyHasFileAndLine(node.kind)) {
    mix(std::hash<std::string_view>{}(node.file));
    if (node.kind == RowKind::kLine) mix(node.line);
  }
  return h;
}

bool SameKey(const ViewNode& row, const ViewNode& probe, Edge edge) {
  if (row.kind != probe.kind || row.edge != edge || row.name != probe.name || row.module != probe.module) return false;
  if (!KeyHasFileAndLine(probe.kind)) return true;
  return row.file == probe.file && (probe.kind != RowKind::kLine || row.line == probe.line);
}

}  // namespace

bool SameMergeKey(const ViewNode& a, const ViewNode& b) { return SameKey(a, b, b.edge); }

uint32_t ViewTree::FindChild(uint32_t parent, const ViewNode& probe, Edge edge) const {
  // The first row added wins when several share the key (AddChild does not merge).
  uint32_t found = UINT32_MAX;
  const auto [first, last] = child_index_.equal_range(KeyHash(parent, probe, edge));
  for (auto it = first; it != last; ++it) {
    const ViewNode& row = nodes[it->second];
    if (it->second < found && row.parent == parent && SameKey(row, probe, edge)) found = it->second;
  }
  return found;
}

uint32_t ViewTree::AddChild(uint32_t parent, ViewNode node) {
  const auto index = static_cast<uint32_t>(nodes.size());
  node.parent = parent;
  node.children.clear();
  node.inclusive.assign(metrics.size(), 0.0);
  node.exclusive.assign(metrics.size(), 0.0);
  child_index_.emplace(KeyHash(parent, node, node.edge), index);
  nodes.push_back(std::move(node));
  nodes[parent].children.push_back(index);
  return index;
}

uint32_t ViewTree::FindOrAddChild(uint32_t parent, const ViewNode& probe) {
  const uint32_t found = FindChild(parent, probe, probe.edge);
  if (found != UINT32_MAX) {
    // A merged row is inlined only if everything folded into it was.
    nodes[found].inlined = nodes[found].inlined && probe.inlined;
    return found;
  }
  return AddChild(parent, probe);
}

uint32_t ViewTree::FindOrAddChildLike(uint32_t parent, const ViewNode& source, Edge edge) {
  const uint32_t found = FindChild(parent, source, edge);
  if (found != UINT32_MAX) {
    nodes[found].inlined = nodes[found].inlined && source.inlined;
    return found;
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
