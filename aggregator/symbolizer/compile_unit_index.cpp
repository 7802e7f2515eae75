#include "compile_unit_index.h"

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

}  // namespace cilkprof::aggregator::symbolizer_internal
