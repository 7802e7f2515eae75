// The C++ function symbols of one module's ELF symbol table, by address.
#pragma once

#include <vector>

#include <elfutils/libdwfl.h>

namespace cilkprof::aggregator::symbolizer_internal {

// g++ gives no DW_AT_linkage_name to functions without external linkage (in anonymous
// namespaces, static, lambdas' call operators, templates instantiated over local
// types); their ELF symbols still carry the mangled name, which is the only place the
// lambda numbering of `{lambda()#2}` is written down. This index finds the mangled
// symbol that starts at a function's code.
class MangledSymbols {
 public:
  explicit MangledSymbols(Dwfl_Module* module) : module_(module) {}

  // The mangled ("_Z...") name of a function symbol starting exactly at Dwfl address
  // `address`, clone suffixes included ("_ZL3fooi.constprop.0"); null when none. When
  // several start there, one without a clone suffix wins, else the first by name. The
  // table is read once, on the first call; the strings live as long as the module.
  const char* At(Dwarf_Addr address);

 private:
  struct Symbol {
    Dwarf_Addr address;
    const char* name;
  };
  void Build();

  Dwfl_Module* module_;
  bool built_ = false;
  std::vector<Symbol> symbols_;  // sorted by address, then preference
};

}  // namespace cilkprof::aggregator::symbolizer_internal
