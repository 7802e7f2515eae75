// Resolution of one code address of one module into source frames.
#pragma once

#include <string>
#include <vector>

#include <elfutils/libdwfl.h>

#include "cilkprof/profile.pb.h"
#include "compile_unit_index.h"
#include "function_names.h"

namespace cilkprof::aggregator::symbolizer_internal {

// A DWARF file name of `die`'s unit as a path: absolute names as they are, relative
// ones under the unit's DW_AT_comp_dir; "" for null.
std::string ResolvePath(Dwarf_Die* die, const char* file);

// The source frames of the code at Dwfl address `address` of `module`, outermost
// first, with profile.proto's SourceFrame semantics:
//  - with DWARF: the function containing the address and each function inlined into
//    it down to the innermost one; outer frames carry the line of the inlined call
//    (DW_AT_call_file/DW_AT_call_line), the innermost the address's own line; every
//    frame carries its function's DW_AT_decl_file/DW_AT_decl_line;
//  - without DWARF for the address: one frame named by the ELF symbol table (line 0);
//  - empty when neither knows the address (the caller reports "??").
// File paths are absolute when the DWARF gives enough to make them so.
// `compile_units` indexes `module` and `names` names its functions.
std::vector<profile::SourceFrame> ResolveSourceFrames(Dwfl_Module* module,
                                                      CompileUnitIndex& compile_units,
                                                      FunctionNames& names, Dwarf_Addr address);

}  // namespace cilkprof::aggregator::symbolizer_internal
