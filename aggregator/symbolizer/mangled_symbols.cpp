#include "mangled_symbols.h"

#include <algorithm>
#include <cstring>

namespace cilkprof::aggregator::symbolizer_internal {

const char* MangledSymbols::At(Dwarf_Addr address) {
  if (!built_) Build();
  auto it = std::lower_bound(symbols_.begin(), symbols_.end(), address,
                             [](const Symbol& symbol, Dwarf_Addr a) { return symbol.address < a; });
  return it != symbols_.end() && it->address == address ? it->name : nullptr;
}

void MangledSymbols::Build() {
  built_ = true;
  const int count = dwfl_module_getsymtab(module_);
  for (int i = 0; i < count; ++i) {
    GElf_Sym symbol;
    GElf_Addr address = 0;
    const char* name =
        dwfl_module_getsym_info(module_, i, &symbol, &address, nullptr, nullptr, nullptr);
    if (name == nullptr || std::strncmp(name, "_Z", 2) != 0) continue;
    if (GELF_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_shndx == SHN_UNDEF) continue;
    symbols_.push_back(Symbol{address, name});
  }
  // Deterministic whatever the table's order: per address, a name without a clone
  // suffix ("_Z3fooi" before "_Z3fooi.localalias"), then by name.
  std::sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
    if (a.address != b.address) return a.address < b.address;
    const bool a_clone = std::strchr(a.name, '.') != nullptr;
    const bool b_clone = std::strchr(b.name, '.') != nullptr;
    if (a_clone != b_clone) return b_clone;
    return std::strcmp(a.name, b.name) < 0;
  });
}

}  // namespace cilkprof::aggregator::symbolizer_internal
