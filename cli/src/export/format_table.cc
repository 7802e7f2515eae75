// The formats of `cilkprof export` (exporters.h). One line per format.
#include "export/exporters.h"

namespace cilkprof::cli::exporters {

const std::vector<Format>& Formats() {
  static const std::vector<Format> formats = {
      {"cilkscale-csv", "Cilkscale's CSV of work and span per call site, for its plotting scripts", false,
       WriteCilkscaleCsv},
      {"svg", "an interactive flame graph (an icicle of callers with --inverted), one SVG file for a browser", false,
       WriteFlameGraphSvg},
      {"pprof", "pprof's profile.proto, gzipped (go tool pprof, Pyroscope, Parca, Grafana): every metric a sample type", true, WritePprof},
      {"folded", "collapsed stacks, one line per context weighed by --metric (flamegraph.pl, speedscope)", false, WriteFolded},
      {"chrome-trace", "the recorded timeline (run --timeline) in the Trace Event Format, for ui.perfetto.dev and chrome://tracing", false, WriteChromeTrace},
      {"speedscope", "speedscope's JSON (www.speedscope.app, npx speedscope): all threads, and each thread with a timeline", false, WriteSpeedscope},
  };
  return formats;
}

const Format* FindFormat(const std::string& name) {
  for (const Format& f : Formats()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace cilkprof::cli::exporters
