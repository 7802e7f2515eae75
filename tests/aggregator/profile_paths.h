// Flattens a profile's tree into "path -> exclusive values" for exact comparisons.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cilkprof/profile.pb.h"

namespace cilkprof::aggregator::testing {

// Path of node i: the innermost frame's function of each location from the root down,
// joined by " > "; "<partial unwind>" and "<elided>" for the markers; "spawn:" before
// spawned nodes; "lock:" before a lock object's name (FRAME_LOCK).
inline std::string NodePath(const profile::Profile& p, int i) {
  if (i == 0) return "<root>";
  const profile::Node& node = p.nodes(i);
  std::string name;
  if (node.kind() == wire::FRAME_PARTIAL_UNWIND) {
    name = "<partial unwind>";
  } else if (node.kind() == wire::FRAME_ELIDED) {
    name = "<elided>";
  } else {
    const auto& frames = p.locations(static_cast<int>(node.location())).frames();
    name = frames.empty() ? "?" : frames.rbegin()->function();
  }
  if (node.kind() == wire::FRAME_LOCK) name = "lock:" + name;
  if (node.edge() == wire::EDGE_SPAWN) name = "spawn:" + name;
  return NodePath(p, static_cast<int>(node.parent())) + " > " + name;
}

inline std::map<std::string, std::vector<double>> PathsOf(const profile::Profile& p) {
  std::map<std::string, std::vector<double>> out;
  for (int i = 0; i < p.nodes_size(); ++i) {
    std::vector<double> values(p.nodes(i).exclusive().begin(), p.nodes(i).exclusive().end());
    out[NodePath(p, i)] = values;
  }
  return out;
}

}  // namespace cilkprof::aggregator::testing
