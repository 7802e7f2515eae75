#include "function_names.h"

#include <cxxabi.h>
#include <dwarf.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace cilkprof::aggregator::symbolizer_internal {
namespace {

const char* StringAttribute(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attribute;
  return dwarf_formstring(dwarf_attr_integrate(die, name, &attribute));
}

// Follows DW_AT_abstract_origin and DW_AT_specification to the DIE that declares the
// function: the one nested inside its namespace or class. Bounded, so a malformed
// reference cycle cannot loop.
Dwarf_Die DeclaringDie(Dwarf_Die* function) {
  Dwarf_Die current = *function;
  for (int hops = 0; hops < 16; ++hops) {
    Dwarf_Attribute attribute;
    Dwarf_Die next;
    Dwarf_Attribute* reference = dwarf_attr(&current, DW_AT_abstract_origin, &attribute);
    if (reference == nullptr) reference = dwarf_attr(&current, DW_AT_specification, &attribute);
    if (reference == nullptr || dwarf_formref_die(reference, &next) == nullptr) break;
    current = next;
  }
  return current;
}

}  // namespace

std::string Demangle(const char* name) {
  if (name == nullptr) return {};
  if (std::strncmp(name, "_Z", 2) != 0) return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled != nullptr ? std::string(demangled.get()) : std::string(name);
}

std::string DwarfFunctionName(Dwarf_Die* function, CompileUnitIndex& index) {
  const char* linkage = StringAttribute(function, DW_AT_linkage_name);
  if (linkage == nullptr) linkage = StringAttribute(function, DW_AT_MIPS_linkage_name);
  // A C++ linkage name demangles into the full signature. Any other linkage name is an
  // assembler label (glibc's "__GI_qsort" for qsort), not what the programmer wrote.
  if (linkage != nullptr && std::strncmp(linkage, "_Z", 2) == 0) {
    std::string demangled = Demangle(linkage);
    if (demangled != linkage) return demangled;
  }
  const char* name = StringAttribute(function, DW_AT_name);
  if (name != nullptr) {
    Dwarf_Die declaring = DeclaringDie(function);
    return index.EnclosingScopes(&declaring) + name;
  }
  return linkage != nullptr ? std::string(linkage) : std::string();
}

}  // namespace cilkprof::aggregator::symbolizer_internal
