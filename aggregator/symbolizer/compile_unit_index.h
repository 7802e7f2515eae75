// Address indexes over one module's DWARF: which compilation unit, and which
// top-level function of that unit, contains an address.
#pragma once

#include <cstdint>
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

  // One address range of a concrete (out-of-line) function.
  struct FunctionRange {
    Dwarf_Addr start;  // DWARF addresses, [start, end)
    Dwarf_Addr end;
    Dwarf_Die function;
  };

  // The concrete DW_TAG_subprogram DIEs of `cu` whose code contains DWARF address
  // `pc`; usually one. They sit at CU level, inside namespaces, and, where g++ puts
  // lambdas' call operators, inside classes local to functions. The unit's function
  // ranges are read once, on its first lookup, so that each later lookup is a binary
  // search instead of a walk over the unit's DIEs (milliseconds in large C++ units).
  std::vector<Dwarf_Die> FunctionsAt(Dwarf_Die* cu, Dwarf_Addr pc);

  // Every range of every concrete function of `cu`, sorted by start (read as above).
  const std::vector<FunctionRange>& Functions(Dwarf_Die* cu);

 private:
  struct UnitFunctions {
    std::vector<FunctionRange> ranges;  // sorted by start
    Dwarf_Addr longest = 0;             // bounds the walk back from a binary search
  };
  UnitFunctions& Unit(Dwarf_Die* cu);
  // `in_function`: `parent` is a function or lies inside one (local classes).
  static void CollectFunctions(Dwarf_Die* parent, UnitFunctions& unit, int depth,
                               bool in_function);

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
};

}  // namespace cilkprof::aggregator::symbolizer_internal
