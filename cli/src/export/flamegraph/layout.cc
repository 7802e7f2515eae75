// The frames of a flame graph (layout.h).
#include "export/flamegraph/layout.h"

#include <algorithm>
#include <functional>

namespace cilkprof::cli::exporters::flamegraph {
namespace {

// Collects the rows the walk shows as frames, each placed at the next free position
// on its parent.
class FrameCollector : public views::RowVisitor {
 public:
  FrameCollector(const LayoutOptions& options, Layout& layout) : options_(options), layout_(layout) {}

  void Begin(const views::WalkInfo& info) override {
    layout_.total = options_.metric < info.program_total.size() ? info.program_total[options_.metric] : 0.0;
  }

  void Enter(const views::RowView& row, uint32_t depth) override {
    Frame frame;
    frame.name = row.name;
    frame.module = row.module;
    frame.kind = row.kind;
    frame.edge = row.edge;
    frame.inlined = row.inlined;
    frame.depth = depth;
    frame.parent = depth == 0 ? 0 : path_[depth - 1];
    // The root is the program total in both views; below it, the top-down view's
    // rows stand on their parents with their inclusive value, the bottom-up view's
    // callers hold the part of the function's exclusive value they lead to.
    if (depth == 0) {
      frame.width = layout_.total;
    } else {
      frame.width = options_.inverted ? row.exclusive[options_.metric] : row.inclusive[options_.metric];
      if (!options_.inverted) frame.self = row.exclusive[options_.metric];
    }
    if (next_x_.size() < depth + 2) next_x_.resize(depth + 2, 0.0);
    frame.x = next_x_[depth];
    next_x_[depth] += frame.width;
    next_x_[depth + 1] = frame.x;  // its children start at its left edge
    if (path_.size() < depth + 1) path_.resize(depth + 1);
    path_[depth] = static_cast<uint32_t>(layout_.frames.size());
    layout_.max_depth = std::max(layout_.max_depth, depth);
    layout_.frames.push_back(frame);
  }

 private:
  const LayoutOptions& options_;
  Layout& layout_;
  std::vector<double> next_x_;   // per depth: where the next frame at that depth starts
  std::vector<uint32_t> path_;   // per depth: the frame last entered there
};

// Keeps the root and the frames `keep` accepts whose parent is kept, renumbering
// parents and the deepest level.
template <typename Keep>
void KeepFrames(Layout& layout, Keep keep) {
  std::vector<uint32_t> new_index(layout.frames.size(), UINT32_MAX);
  std::vector<Frame> kept;
  uint32_t max_depth = 0;
  for (uint32_t i = 0; i < layout.frames.size(); ++i) {
    Frame f = layout.frames[i];
    if (i != 0 && (new_index[f.parent] == UINT32_MAX || !keep(f))) continue;
    f.parent = i == 0 ? 0 : new_index[f.parent];
    new_index[i] = static_cast<uint32_t>(kept.size());
    max_depth = std::max(max_depth, f.depth);
    kept.push_back(f);
  }
  layout.frames = std::move(kept);
  layout.max_depth = max_depth;
}

// Keeps the max_frames widest frames (fewer on ties).
void Cap(Layout& layout, size_t max_frames) {
  if (layout.frames.size() <= max_frames) return;
  std::vector<double> widths;
  widths.reserve(layout.frames.size());
  for (const Frame& f : layout.frames) widths.push_back(f.width);
  std::nth_element(widths.begin(), widths.begin() + static_cast<ptrdiff_t>(max_frames), widths.end(),
                   std::greater<double>());
  const double cut = widths[max_frames];  // frames this wide or narrower go
  KeepFrames(layout, [cut](const Frame& f) { return f.width > cut; });
  layout.drawn_threshold = std::max(layout.drawn_threshold, cut);
  layout.capped = true;
}

}  // namespace

Layout LayOut(const views::ViewSource& source, const LayoutOptions& options) {
  Layout layout;
  views::ViewOptions walk;
  walk.metric = options.metric;
  walk.sort_key = options.inverted ? views::SortKey::kExclusive : views::SortKey::kInclusive;
  walk.threshold_percent = 100.0 * options.min_fraction;
  FrameCollector collector(options, layout);
  views::Walk(source, walk, collector);
  layout.drawn_threshold = options.min_fraction * layout.total;
  // Rows without any of the metric (zero wide) are not frames.
  KeepFrames(layout, [](const Frame& f) { return f.width > 0; });
  Cap(layout, options.max_frames);
  return layout;
}

}  // namespace cilkprof::cli::exporters::flamegraph
