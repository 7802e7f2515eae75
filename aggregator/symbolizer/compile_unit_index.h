// Address indexes over one module's DWARF: which compilation unit, and which
// top-level function of that unit, contains an address.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
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

  // The concrete DW_TAG_subprogram DIEs of `cu` (at CU level or inside namespaces)
  // whose code contains DWARF address `pc`; usually one. The unit's function ranges
  // are read once, on its first lookup, so that each later lookup is a binary search
  // instead of a walk over the unit's DIEs (milliseconds in large C++ units).
  std::vector<Dwarf_Die> FunctionsAt(Dwarf_Die* cu, Dwarf_Addr pc);

  // The namespaces, classes, structs and unions enclosing the subprogram DIE `die`, as
  // a qualifying prefix ("ns::Box<int>::", "(anonymous namespace)::", "" at CU level).
  // Each unit's prefixes are computed in one walk, on the first question about it.
  std::string EnclosingScopes(Dwarf_Die* die);

 private:
  struct FunctionRange {
    Dwarf_Addr start;  // DWARF addresses, [start, end)
    Dwarf_Addr end;
    Dwarf_Die function;
  };
  struct UnitFunctions {
    std::vector<FunctionRange> ranges;  // sorted by start
    Dwarf_Addr longest = 0;             // bounds the walk back from a binary search
  };
  static void CollectFunctions(Dwarf_Die* parent, UnitFunctions& unit, int depth);
  using ScopePrefixes = std::unordered_map<uint64_t, std::string>;  // by subprogram DIE offset
  static void CollectScopePrefixes(Dwarf_Die* parent, const std::string& prefix,
                                   ScopePrefixes& prefixes, int depth);

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
  std::unordered_map<uint64_t, UnitFunctions> functions_;  // by CU DIE offset
  std::unordered_map<uint64_t, ScopePrefixes> scope_prefixes_;  // by CU DIE offset
};

}  // namespace cilkprof::aggregator::symbolizer_internal
