// Finding the compilation unit that contains an address, with or without .debug_aranges.
#pragma once

#include <vector>

#include <elfutils/libdwfl.h>

namespace cilkprof::aggregator::symbolizer_internal {

// libdw 0.188 finds a CU by address through .debug_aranges only, and clang (14 and
// later) does not emit that section by default: without help, every clang-built module
// would lose its DWARF. When dwfl_module_addrdie misses, this index falls back on the
// CUs' own address ranges (DW_AT_low_pc/high_pc/ranges), read once per module on the
// first miss.
class CompileUnitIndex {
 public:
  explicit CompileUnitIndex(Dwfl_Module* module) : module_(module) {}

  // The CU DIE containing Dwfl address `address`, and in *bias the difference between
  // Dwfl and DWARF addresses; null when no CU covers it.
  Dwarf_Die* Find(Dwarf_Addr address, Dwarf_Addr* bias);

 private:
  struct Range {
    Dwarf_Addr start;  // Dwfl addresses, [start, end)
    Dwarf_Addr end;
    Dwarf_Die* cu;     // owned by libdwfl, valid while the module lives
    Dwarf_Addr bias;
  };
  void Build();

  Dwfl_Module* module_;
  bool built_ = false;
  std::vector<Range> ranges_;  // sorted by start
};

}  // namespace cilkprof::aggregator::symbolizer_internal
