// The flame graph's script and style sheet (flamegraph.js, flamegraph.css in this
// folder), embedded at build time by embed.cmake: NUL-terminated, ready to be written
// into the SVG's CDATA sections.
#pragma once

namespace cilkprof::cli::exporters::flamegraph {

extern const char kFlameGraphScript[];
extern const char kFlameGraphStyle[];

}  // namespace cilkprof::cli::exporters::flamegraph
