// The speedup-bounds plot of `cilkprof plot --speedup` (Cilkscale's plot): a
// self-contained SVG, x = processors P on a log2 axis, y = speedup; the upper bound
// min(P, parallelism) and the lower bound (burdened span) of views::WholeProgram's
// speedup table, and the measured speedups of runs with several worker counts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cilkprof/views/workspan.h"

namespace cilkprof::cli {

struct MeasuredSpeedup {
  uint32_t workers = 0;
  double speedup = 0;       // T1 / TP
  std::string source;       // the profile's path, for the point's tooltip
};

struct SpeedupPlot {
  std::string title;                   // "fib 30"
  views::WorkSpanFigures figures;      // bounds: figures.speedup, at P = 1, 2, 4, ...
  std::vector<MeasuredSpeedup> measured;  // any order; empty: the bounds only
  std::string measured_note;           // what T1 and TP are, for the legend
};

// The SVG document. Elements tests look for: polyline#upper-bound, polyline#lower-bound,
// circle.measured (with data-workers and data-speedup) inside g#measured.
std::string RenderSpeedupSvg(const SpeedupPlot& plot);

}  // namespace cilkprof::cli
