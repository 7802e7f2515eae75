#include "openmp_runtime.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "elf_needed.h"

namespace cilkprof::cli {
namespace {

bool IsFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

bool LinksLibgomp(const std::vector<std::string>& needed) {
  return std::any_of(needed.begin(), needed.end(),
                     [](const std::string& name) { return name.rfind("libgomp.so", 0) == 0; });
}

std::vector<std::string> DefaultLibompCandidates() {
  if (const char* chosen = std::getenv("CILKPROF_LIBOMP"); chosen && *chosen) return {chosen};
  std::vector<std::string> candidates;
#ifdef CILKPROF_BUILD_LIBOMP
  candidates.push_back(CILKPROF_BUILD_LIBOMP);
#endif
  candidates.push_back("/usr/lib/x86_64-linux-gnu/libomp.so.5");
  candidates.push_back("/usr/lib/aarch64-linux-gnu/libomp.so.5");
  // Any installed LLVM version, newest last in glob's order: reversed, newest first.
  glob_t found{};
  if (::glob("/usr/lib/llvm-*/lib/libomp.so.5", 0, nullptr, &found) == 0) {
    for (size_t i = found.gl_pathc; i > 0; --i) candidates.push_back(found.gl_pathv[i - 1]);
  }
  ::globfree(&found);
  return candidates;
}

OpenMpPlan PlanOpenMp(const std::string& mode, const std::string& program, const std::string& shown,
                      const std::string& private_dir, const std::vector<std::string>& libomp_candidates) {
  OpenMpPlan plan;
  if (mode == "off") return plan;
  if (mode == "auto") {
    if (LinksLibgomp(NeededLibraries(program))) {
      plan.warning = "'" + shown + "' runs on GCC's OpenMP runtime (libgomp), which has no tool interface (OMPT): "
                     "its OpenMP threads are profiled without task paths, idleness blame or work and span; "
                     "rerun with --openmp=libomp to run it on LLVM's libomp";
    }
    return plan;
  }
  // --openmp=libomp
  const auto libomp = std::find_if(libomp_candidates.begin(), libomp_candidates.end(), IsFile);
  if (libomp == libomp_candidates.end()) {
    if (libomp_candidates.size() == 1 && std::getenv("CILKPROF_LIBOMP")) {
      plan.error = "--openmp=libomp: CILKPROF_LIBOMP names " + libomp_candidates.front() +
                   ", which is not a file; point it at libomp.so.5 or unset it";
    } else {
      plan.error = "--openmp=libomp: LLVM's OpenMP runtime (libomp.so.5) is not installed; install it "
                   "(apt-get install libomp5-14) or run without --openmp=libomp";
    }
    return plan;
  }
  const std::string dir = private_dir + "/openmp";
  const std::string link = dir + "/libgomp.so.1";
  if (::mkdir(dir.c_str(), 0700) != 0 || ::symlink(libomp->c_str(), link.c_str()) != 0) {
    plan.error = "--openmp=libomp: cannot make " + link + ": " + std::strerror(errno);
    return plan;
  }
  plan.library_dir = dir;
  return plan;
}

}  // namespace cilkprof::cli
