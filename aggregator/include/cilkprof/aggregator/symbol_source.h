// The symbolization step of profile building, behind a small interface so that the
// merging and file code can be tested with a fake and the libdw Symbolizer
// (symbolizer.h) plugged in where profiles are really built.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cilkprof/profile.pb.h"

namespace cilkprof::aggregator {

// Turns (module, offset) into source frames, outermost first (profile.proto
// SourceFrame). One instance serves one profile build on one thread: it is never
// called concurrently, and its Warnings() are copied into that profile's
// ProcessInfo.warnings. Implementations must not throw; a builder that catches an
// exception anyway records the location as unknown ("??").
class SymbolSource {
 public:
  virtual ~SymbolSource() = default;
  virtual std::vector<profile::SourceFrame> Symbolize(const std::string& module_path,
                                                      const std::string& build_id,
                                                      uint64_t offset) = 0;
  // The data object at (module, offset) (issue 14: a lock's address in a module's .data
  // or .bss): one frame whose function is the variable's name, demangled, with
  // "+0x<n>" when the address lies n bytes inside it (a mutex member of a global
  // struct), and its declaration's file and line when the debug information has them.
  // The default, for sources that know no data symbols: "<module basename>+0x<offset>",
  // the form of a module that cannot be read.
  virtual profile::SourceFrame SymbolizeData(const std::string& module_path,
                                             const std::string& build_id, uint64_t offset);
  // Problems the user should know about (a module missing or changed on disk).
  virtual std::vector<std::string> Warnings() const { return {}; }
};

// Makes a fresh SymbolSource for each profile, so warnings and caches belong to
// one profile. May be called from any aggregator thread, one call at a time.
using SymbolSourceFactory = std::function<std::unique_ptr<SymbolSource>()>;

// The libdw Symbolizer as a SymbolSourceFactory. Defined in cilkprof_aggregator (not
// in cilkprof_aggregator_core), which links cilkprof_symbolizer.
SymbolSourceFactory LibdwSymbolSourceFactory();

}  // namespace cilkprof::aggregator
