// Symbolization of (module, offset) to source frames with libdw: function names
// (demangled), file and line, inlined frames. Not thread-safe; one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cilkprof/profile.pb.h"

namespace cilkprof::aggregator {

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // Frames for the code at ELF virtual address `offset` of the module, outermost
  // first (see profile.proto SourceFrame). Never fails: unknown code yields one frame
  // named "??" (or the nearest ELF symbol when there is no DWARF), and a module that
  // cannot be opened, or whose build-id no longer matches the file on disk, yields
  // frames named "<module basename>+0x<offset>".
  std::vector<profile::SourceFrame> Symbolize(const std::string& module_path,
                                              const std::string& build_id,
                                              uint64_t offset);

  // The data object at ELF virtual address `offset` of the module (issue 14: a lock):
  // one frame, see SymbolSource::SymbolizeData. Never fails: an address no object
  // symbol holds, or a module that cannot be opened or no longer matches, yields
  // "<module basename>+0x<offset>".
  profile::SourceFrame SymbolizeData(const std::string& module_path, const std::string& build_id,
                                     uint64_t offset);

  // One message per module that could not be symbolized properly (file missing or
  // unreadable, not ELF, build-id mismatch with the profiled program), in the order
  // the modules were first seen; each says what was wrong and what to do. Callers
  // log them or copy them into ProcessInfo.warnings. Modules that merely lack DWARF
  // (stripped system libraries) are not warned about: they still get ELF symbols.
  std::vector<std::string> Warnings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cilkprof::aggregator
