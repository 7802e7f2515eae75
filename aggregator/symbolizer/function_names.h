// Human-readable function names from DWARF and ELF symbols.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>

#include <elfutils/libdwfl.h>

#include "compile_unit_index.h"
#include "declaration_scopes.h"
#include "mangled_symbols.h"

namespace cilkprof::aggregator::symbolizer_internal {

// abi::__cxa_demangle of an Itanium C++ ABI name ("_Z..."); any other name (C,
// assembly, or a mangled name the demangler rejects) comes back unchanged. Clone
// suffixes are kept, as c++filt keeps them ("f() [clone .cold]").
std::string Demangle(const char* name);

// The names of one module's functions, the same for every address of a function,
// inlined or not, since views merge rows by name.
class FunctionNames {
 public:
  // `module` and `compile_units` (which indexes it) must outlive this object.
  FunctionNames(Dwfl_Module* module, CompileUnitIndex& compile_units);

  // The name of the DW_TAG_subprogram or DW_TAG_inlined_subroutine DIE `function`
  // found in the code of unit `cu` (the unit holding the address, which is where
  // `function` was inlined). Following DW_AT_abstract_origin and DW_AT_specification,
  // the first that exists of:
  //  1. its C++ DW_AT_linkage_name, demangled: "ns::Box<int>::twice(int) const";
  //  2. the mangled ELF symbol of an out-of-line copy of the same function in `cu`
  //     (g++ writes no linkage name for functions without external linkage), clone
  //     suffix removed, demangled: "fib(int)::{lambda()#1}::operator()() const",
  //     "(anonymous namespace)::helper(int)";
  //  3. DW_AT_name qualified by its enclosing namespaces, classes and functions, the
  //     unnamed ones spelled as c++filt does but without its numbering:
  //     "(anonymous namespace)::helper", "fib(int)::{lambda()}::operator()"; plain
  //     "qsort" for C, even when an assembler label gave it the linkage name
  //     "__GI_qsort";
  //  4. the raw linkage name.
  // Empty when the DIE has none of them.
  const std::string& Name(Dwarf_Die* function, Dwarf_Die* cu);

 private:
  struct Key {
    const void* unit;  // Dwarf_Die::addr of the unit whose code is resolved
    const void* die;   // Dwarf_Die::addr of the declaring DIE or scope
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const {
      return std::hash<const void*>()(key.unit) * 31 + std::hash<const void*>()(key.die);
    }
  };
  using MangledByDeclaration = std::unordered_map<const void*, const char*>;

  std::string Compute(Dwarf_Die* function, Dwarf_Die* declaring, Dwarf_Die* cu);
  const char* OutOfLineSymbol(Dwarf_Die* declaring, Dwarf_Die* cu);
  std::string ScopePrefix(Dwarf_Die* die, Dwarf_Die* cu);
  const std::string& ScopeName(Dwarf_Die* scope, Dwarf_Die* cu);

  Dwfl_Module* module_;
  CompileUnitIndex& compile_units_;
  DeclarationScopes scopes_;
  MangledSymbols symbols_;
  std::unordered_map<Key, std::string, KeyHash> names_;  // functions and scopes
  std::unordered_map<const void*, MangledByDeclaration> out_of_line_;  // by unit DIE address
  int scope_depth_ = 0;  // ScopePrefix recursion
};

}  // namespace cilkprof::aggregator::symbolizer_internal
