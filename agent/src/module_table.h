// The load modules (executable, shared libraries, vdso) of this process, for turning
// raw pcs into (module id, ELF virtual address) on the flusher thread.
//
// Built with dl_iterate_phdr: path (the main executable through /proc/self/exe, the
// vdso as "[vdso]"), GNU build-id read from the PT_NOTE segments in memory, load bias
// and the executable PT_LOAD ranges. Refresh() re-reads the list: modules that
// appeared get new ids (never reused, so a library loaded again after dlclose is a new
// module), modules that disappeared are marked unloaded. Resolve() refreshes by itself
// when a pc is in no known module, at most once per BeginCycle().
// Not signal-safe (dl_iterate_phdr takes the loader lock); flusher lock held.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "delta_builder.h"
#include "wire_messages.h"

namespace cilkprof::agent {

struct ModuleInfo {
  uint32_t id = 0;
  std::string path;
  std::string build_id;
  uint64_t load_bias = 0;
  uint64_t start = 0, end = 0;  // hull of the executable segments
  std::vector<std::pair<uint64_t, uint64_t>> exec_ranges;
  // The other PT_LOAD segments (.data, .bss: global and static lock objects, issue 14).
  std::vector<std::pair<uint64_t, uint64_t>> data_ranges;
  bool unloaded = false;
  bool announced = false;  // sent on the current connection in its present state
};

class ModuleTable : public PcResolver {
 public:
  void Refresh();
  // Refreshes only if a library was loaded or unloaded since the last look (the
  // loader's dlpi_adds / dlpi_subs counters): how dlopen and dlclose are noticed
  // without interposing dlopen (which would change whose RUNPATH the loader uses).
  void RefreshIfChanged();
  void BeginCycle() { refreshed_this_cycle_ = false; }
  ResolvedPc Resolve(uintptr_t pc) override;
  // A lock object's address: module-relative in a module's data segments, else absolute
  // (module 0). Never refreshes: heap addresses are the common case, and every flush
  // refreshes the table when a library came or went.
  ResolvedPc ResolveData(uintptr_t address) override;
  // The modules to announce in the next Delta (new, or unloaded since announced).
  std::vector<LoadModuleMsg> TakeChanges();
  // A new connection: announce every module again (unloaded ones are forgotten).
  void ResendAll();
  // Every module this table still holds, as announcements, for a receiver that has
  // none of them (a spill file started mid-connection). Changes no state.
  std::vector<LoadModuleMsg> Declarations() const;
  const ModuleInfo* Find(uintptr_t pc) const;
  const ModuleInfo* FindData(uintptr_t address) const;  // only reads: the crash path uses it
  const std::vector<ModuleInfo>& modules() const { return modules_; }

  // (range start, range end, index into modules_) of live modules, sorted by start.
  struct Range {
    uint64_t start, end;
    uint32_t module;
  };

 private:
  void RebuildIndex();

  std::vector<ModuleInfo> modules_;
  std::vector<Range> index_;
  std::vector<Range> data_index_;  // the same, of the data segments
  uint32_t next_id_ = 1;
  unsigned long long seen_adds_ = 0, seen_subs_ = 0;
  bool refreshed_this_cycle_ = false;
};

}  // namespace cilkprof::agent
