// Which OpenMP runtime a program runs on under `cilkprof run --openmp=MODE`
// (docs/OPENMP.md "Running g++ -fopenmp programs").
//
// The agent sees OpenMP tasks through OMPT, which LLVM's libomp implements and GCC's
// libgomp does not. libomp also implements libgomp's ABI (the GOMP_* entry points that
// g++ -fopenmp emits), and reports what goes through it to OMPT like its own entry
// points: a program linked with libgomp.so.1 runs on libomp when the loader finds
// libomp under that name first. --openmp=libomp does that with a private directory
// holding `libgomp.so.1 -> libomp.so.5`, put first in the program's LD_LIBRARY_PATH.
#pragma once

#include <string>
#include <vector>

namespace cilkprof::cli {

struct OpenMpPlan {
  std::string library_dir;  // prepend to LD_LIBRARY_PATH ("" = leave it)
  std::string warning;      // print once before the program runs ("" = none)
  std::string error;        // cannot do what was asked: the run stops with this message
};

// `mode`: auto (the program's own runtime; a warning when that is libgomp), libomp
// (run on libomp) or off (the program's own runtime, no warning). `program` is the
// resolved executable, `shown` its name for messages, `private_dir` a directory that
// lives as long as the program runs (the link is made there). `libomp_candidates`:
// where to look for libomp.so.5, first found wins (DefaultLibompCandidates()).
OpenMpPlan PlanOpenMp(const std::string& mode, const std::string& program, const std::string& shown,
                      const std::string& private_dir, const std::vector<std::string>& libomp_candidates);

// $CILKPROF_LIBOMP when set (and only it: a wrong setting is an error, not a
// fallback), else the libomp this build found, then Debian's places for libomp5-14 and
// other LLVM versions.
std::vector<std::string> DefaultLibompCandidates();

// True when `needed` (DT_NEEDED names) includes GCC's OpenMP runtime.
bool LinksLibgomp(const std::vector<std::string>& needed);

}  // namespace cilkprof::cli
