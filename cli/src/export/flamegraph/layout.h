// The frames of a flame graph: which rows of a view are drawn, where and how wide.
//
// A frame is a row of the top-down view (a calling context: its width is the row's
// inclusive value, its children stand on it) or, inverted, of the bottom-up view (a
// function, then its callers: widths are the rows' exclusive values, the time spent in
// the function at the top through that chain of callers). Children are laid out left
// to right from their parent's left edge, widest first, as the views sort them.
//
// Frames narrower than `min_fraction` of the total are not drawn, with everything on
// them (flamegraph.pl's --minwidth): the walk prunes them, so the bottom-up view is
// expanded only as deep as drawn frames reach. When more than `max_frames` remain, the
// narrowest go as well. A frame is never narrower than a frame standing on it, so
// both rules keep every drawn frame's parent drawn, and the file's size is bounded by
// max_frames whatever the profile's size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cilkprof/views/walk.h"

namespace cilkprof::cli::exporters::flamegraph {

struct Frame {
  // Point into the view's label table: valid while the view's tree lives.
  const std::string* name = nullptr;
  const std::string* module = nullptr;
  views::RowKind kind = views::RowKind::kContext;
  views::Edge edge = views::Edge::kCall;
  bool inlined = false;
  uint32_t parent = 0;  // index into Layout::frames; the root's is 0
  uint32_t depth = 0;   // 0: the root
  double x = 0;         // left edge, in metric units from the root's left edge
  double width = 0;     // the frame's value, in metric units
  double self = 0;      // top-down: the exclusive value; inverted: 0 (not shown)
};

struct LayoutOptions {
  size_t metric = 0;  // a metric column of the view (MetricColumns)
  bool inverted = false;
  double min_fraction = 0;  // of the total
  size_t max_frames = SIZE_MAX;
};

struct Layout {
  std::vector<Frame> frames;  // pre-order: a frame's parent comes before it
  uint32_t max_depth = 0;
  double total = 0;            // the root's width: the metric's program total
  double drawn_threshold = 0;  // the narrowest width drawn may be this (metric units)
  bool capped = false;         // max_frames removed frames above min_fraction
};

// `source` is the top-down tree, or (inverted) the bottom-up view over it.
Layout LayOut(const views::ViewSource& source, const LayoutOptions& options);

}  // namespace cilkprof::cli::exporters::flamegraph
