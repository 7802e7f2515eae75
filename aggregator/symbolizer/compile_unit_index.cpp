#include "compile_unit_index.h"

#include <dwarf.h>

#include <algorithm>

namespace cilkprof::aggregator::symbolizer_internal {

Dwarf_Die* CompileUnitIndex::Find(Dwarf_Addr address, Dwarf_Addr* bias) {
  if (Dwarf_Die* cu = dwfl_module_addrdie(module_, address, bias); cu != nullptr) return cu;
  if (!built_) Build();
  // Ranges of distinct CUs do not overlap in well-formed DWARF; when they do, any CU
  // that covers the address is as good an answer as libdw's own lookup would give.
  auto after = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                                [](Dwarf_Addr a, const Range& range) { return a < range.start; });
  for (auto it = after; it != ranges_.begin();) {
    --it;
    if (address < it->end) {
      *bias = it->bias;
      return it->cu;
    }
    if (after - it > 8) break;  // bounded walk back over overlapping neighbours
  }
  return nullptr;
}

void CompileUnitIndex::Build() {
  built_ = true;
  Dwarf_Addr bias = 0;
  for (Dwarf_Die* cu = dwfl_module_nextcu(module_, nullptr, &bias); cu != nullptr;
       cu = dwfl_module_nextcu(module_, cu, &bias)) {
    Dwarf_Addr base = 0, start = 0, end = 0;
    for (ptrdiff_t offset = dwarf_ranges(cu, 0, &base, &start, &end); offset > 0;
         offset = dwarf_ranges(cu, offset, &base, &start, &end)) {
      if (end > start) ranges_.push_back(Range{start + bias, end + bias, cu, bias});
    }
  }
  std::sort(ranges_.begin(), ranges_.end(),
            [](const Range& a, const Range& b) { return a.start < b.start; });
}

CompileUnitIndex::UnitFunctions& CompileUnitIndex::Unit(Dwarf_Die* cu) {
  auto [it, inserted] = functions_.try_emplace(dwarf_dieoffset(cu));
  UnitFunctions& unit = it->second;
  if (inserted) {
    CollectFunctions(cu, unit, 0, false);
    std::sort(unit.ranges.begin(), unit.ranges.end(),
              [](const FunctionRange& a, const FunctionRange& b) { return a.start < b.start; });
  }
  return unit;
}

const std::vector<CompileUnitIndex::FunctionRange>& CompileUnitIndex::Functions(Dwarf_Die* cu) {
  return Unit(cu).ranges;
}

std::vector<Dwarf_Die> CompileUnitIndex::FunctionsAt(Dwarf_Die* cu, Dwarf_Addr pc) {
  const UnitFunctions& unit = Unit(cu);
  std::vector<Dwarf_Die> found;
  auto after = std::upper_bound(
      unit.ranges.begin(), unit.ranges.end(), pc,
      [](Dwarf_Addr a, const FunctionRange& range) { return a < range.start; });
  // Every range starting more than `longest` before pc ends before it.
  for (auto range = after; range != unit.ranges.begin();) {
    --range;
    if (pc - range->start >= unit.longest) break;
    if (pc < range->end) found.push_back(range->function);
  }
  return found;
}

void CompileUnitIndex::CollectFunctions(Dwarf_Die* parent, UnitFunctions& unit, int depth,
                                        bool in_function) {
  Dwarf_Die child;
  if (depth > 64 || dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram) {
      Dwarf_Addr base = 0, start = 0, end = 0;
      for (ptrdiff_t offset = dwarf_ranges(&child, 0, &base, &start, &end); offset > 0;
           offset = dwarf_ranges(&child, offset, &base, &start, &end)) {
        if (end <= start) continue;
        unit.ranges.push_back(FunctionRange{start, end, child});
        unit.longest = std::max(unit.longest, end - start);
      }
      // g++ defines the members of local classes, lambdas' call operators among
      // them, inside the class, inside the function: code can sit there too.
      CollectFunctions(&child, unit, depth + 1, true);
    } else if (tag == DW_TAG_namespace) {
      CollectFunctions(&child, unit, depth + 1, in_function);
    } else if (in_function && (tag == DW_TAG_lexical_block || tag == DW_TAG_class_type ||
                               tag == DW_TAG_structure_type || tag == DW_TAG_union_type)) {
      // Classes at namespace level are not entered: their members' code is defined
      // outside them (DW_AT_specification), at unit or namespace level.
      CollectFunctions(&child, unit, depth + 1, true);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace cilkprof::aggregator::symbolizer_internal
