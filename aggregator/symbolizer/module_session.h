// One load module opened for symbolization: its own offline Dwfl session.
//
// The agent records code locations as (module path, build-id, ELF virtual address).
// A ModuleSession opens the file named by the path, checks that it is the very file
// the profiled program had mapped (same GNU build-id), and reports it to libdw so that
// Dwfl addresses can be derived from ELF virtual addresses by adding `bias()`.
// Separate debug info is found by Dwfl's standard offline callbacks: the build-id
// directory /usr/lib/debug/.build-id/xx/yyyy.debug, then .gnu_debuglink next to the
// file, in its .debug/ subdirectory, and under /usr/lib/debug (and debuginfod when the
// user has set DEBUGINFOD_URLS, as every elfutils tool does).
//
// The vDSO has no file on disk. Its image is the same in every process of the running
// kernel, so a module named like the vDSO is symbolized from this process's own copy
// when its build-id matches the recorded one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <elfutils/libdwfl.h>

#include "cilkprof/common/status.h"

namespace cilkprof::aggregator::symbolizer_internal {

class ModuleSession {
 public:
  // Opens `path` (or, for a vDSO name, this process's vDSO) and verifies its build-id
  // against `expected_build_id` (raw bytes as in wire.LoadModule.build_id; empty means
  // "not recorded", which skips the check). The error message names the module, says
  // what was wrong and what to do.
  static Result<std::unique_ptr<ModuleSession>> Open(const std::string& path,
                                                     const std::string& expected_build_id);

  ~ModuleSession();
  ModuleSession(const ModuleSession&) = delete;
  ModuleSession& operator=(const ModuleSession&) = delete;

  Dwfl_Module* module() const { return module_; }
  // Dwfl address = ELF virtual address + bias() (0 for files reported at base 0).
  uint64_t bias() const { return bias_; }

 private:
  ModuleSession() = default;
  static Result<std::unique_ptr<ModuleSession>> OpenFile(const std::string& path);
  static Result<std::unique_ptr<ModuleSession>> OpenVdso(const std::string& path);
  Status Finish(const std::string& path, const std::string& expected_build_id);

  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* module_ = nullptr;
  uint64_t bias_ = 0;
  std::vector<char> image_;  // the vDSO's bytes; libelf reads them in place
};

// Lower-case hexadecimal of raw bytes ("" for none).
std::string HexBytes(const std::string& bytes);

// True for the names the vDSO goes by in link maps and /proc/PID/maps.
bool IsVdsoName(const std::string& path);

}  // namespace cilkprof::aggregator::symbolizer_internal
