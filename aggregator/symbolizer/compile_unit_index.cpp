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

std::vector<Dwarf_Die> CompileUnitIndex::FunctionsAt(Dwarf_Die* cu, Dwarf_Addr pc) {
  auto [it, inserted] = functions_.try_emplace(dwarf_dieoffset(cu));
  UnitFunctions& unit = it->second;
  if (inserted) {
    CollectFunctions(cu, unit, 0);
    std::sort(unit.ranges.begin(), unit.ranges.end(),
              [](const FunctionRange& a, const FunctionRange& b) { return a.start < b.start; });
  }
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

void CompileUnitIndex::CollectFunctions(Dwarf_Die* parent, UnitFunctions& unit, int depth) {
  Dwarf_Die child;
  if (depth > 64 || dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_namespace) {
      CollectFunctions(&child, unit, depth + 1);
    } else if (tag == DW_TAG_subprogram) {
      Dwarf_Addr base = 0, start = 0, end = 0;
      for (ptrdiff_t offset = dwarf_ranges(&child, 0, &base, &start, &end); offset > 0;
           offset = dwarf_ranges(&child, offset, &base, &start, &end)) {
        if (end <= start) continue;
        unit.ranges.push_back(FunctionRange{start, end, child});
        unit.longest = std::max(unit.longest, end - start);
      }
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

std::string CompileUnitIndex::EnclosingScopes(Dwarf_Die* die) {
  Dwarf_Die cu;
  if (dwarf_diecu(die, &cu, nullptr, nullptr) == nullptr) return {};
  auto [it, inserted] = scope_prefixes_.try_emplace(dwarf_dieoffset(&cu));
  if (inserted) CollectScopePrefixes(&cu, "", it->second, 0);
  auto prefix = it->second.find(dwarf_dieoffset(die));
  return prefix != it->second.end() ? prefix->second : std::string();
}

void CompileUnitIndex::CollectScopePrefixes(Dwarf_Die* parent, const std::string& prefix,
                                            ScopePrefixes& prefixes, int depth) {
  Dwarf_Die child;
  if (depth > 64 || dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram) {
      if (!prefix.empty()) prefixes.emplace(dwarf_dieoffset(&child), prefix);
      // Local classes (lambda closures among them) are declared inside functions.
      CollectScopePrefixes(&child, prefix, prefixes, depth + 1);
    } else if (tag == DW_TAG_lexical_block) {
      CollectScopePrefixes(&child, prefix, prefixes, depth + 1);
    } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
               tag == DW_TAG_structure_type || tag == DW_TAG_union_type) {
      const char* name = dwarf_diename(&child);
      const std::string scope = name != nullptr             ? name
                                : tag == DW_TAG_namespace ? "(anonymous namespace)"
                                                          : "(anonymous)";
      CollectScopePrefixes(&child, prefix + scope + "::", prefixes, depth + 1);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace cilkprof::aggregator::symbolizer_internal
