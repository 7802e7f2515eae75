#include "cilkprof/views/profile_nodes.h"

#include <algorithm>

namespace cilkprof::views {

ProfileNodes ProfileNodes::Of(const profile::Profile& profile) {
  ProfileNodes nodes;
  nodes.parent_.reserve(static_cast<size_t>(profile.nodes_size()));
  for (const profile::Node& node : profile.nodes()) nodes.Add(node);
  return nodes;
}

void ProfileNodes::Add(const profile::Node& node) {
  parent_.push_back(node.parent());
  location_.push_back(node.location());
  flags_.push_back(static_cast<uint8_t>((node.kind() == wire::FRAME_PARTIAL_UNWIND ? kPartialFlag : 0) |
                                        (node.kind() == wire::FRAME_ELIDED ? kElidedFlag : 0) |
                                        (node.kind() == wire::FRAME_LOCK ? kLockFlag : 0) |
                                        static_cast<uint8_t>(EdgeOf(node.edge())) << kEdgeShift));
  const auto& values = node.exclusive();
  // Trailing zeros are not kept; a node without any value keeps nothing.
  int kept = values.size();
  while (kept > 0 && values[kept - 1] == 0.0) --kept;
  values_.insert(values_.end(), values.begin(), values.begin() + kept);
  first_.push_back(static_cast<uint32_t>(values_.size()));
}

void ProfileNodes::Exclusive(uint32_t n, size_t count, double* out) const {
  const size_t begin = first_[n], end = first_[n + 1];
  const size_t stored = std::min(count, end - begin);
  std::copy_n(values_.begin() + static_cast<std::ptrdiff_t>(begin), stored, out);
  std::fill(out + stored, out + count, 0.0);
}

}  // namespace cilkprof::views
