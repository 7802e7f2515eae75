// Human-readable function names from DWARF and ELF symbols.
#pragma once

#include <string>

#include <elfutils/libdw.h>

#include "compile_unit_index.h"

namespace cilkprof::aggregator::symbolizer_internal {

// abi::__cxa_demangle of an Itanium C++ ABI name ("_Z..."); any other name (C,
// assembly, or a mangled name the demangler rejects) comes back unchanged.
std::string Demangle(const char* name);

// The name of a DW_TAG_subprogram or DW_TAG_inlined_subroutine DIE, following
// DW_AT_abstract_origin and DW_AT_specification: the demangled C++ DW_AT_linkage_name
// when there is one ("ns::Box<int>::twice(int) const"), else DW_AT_name qualified by
// its enclosing namespaces, classes, structs and unions ("(anonymous
// namespace)::helper"; plain "qsort" for C, even when an assembler label gave it the
// linkage name "__GI_qsort"), else the raw linkage name. Empty when the DIE has none.
// `index` covers the module of `function` and supplies the enclosing scopes.
std::string DwarfFunctionName(Dwarf_Die* function, CompileUnitIndex& index);

}  // namespace cilkprof::aggregator::symbolizer_internal
