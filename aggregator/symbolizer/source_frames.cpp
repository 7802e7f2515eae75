#include "source_frames.h"

#include <dwarf.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

namespace cilkprof::aggregator::symbolizer_internal {

std::string ResolvePath(Dwarf_Die* die, const char* file) {
  if (file == nullptr) return {};
  std::filesystem::path path(file);
  if (path.is_relative()) {
    Dwarf_Die cu;
    Dwarf_Attribute attribute;
    const char* comp_dir =
        dwarf_diecu(die, &cu, nullptr, nullptr) != nullptr
            ? dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attribute))
            : nullptr;
    if (comp_dir != nullptr) path = std::filesystem::path(comp_dir) / path;
  }
  return path.lexically_normal().string();
}

namespace {

using ScopeArray = std::unique_ptr<Dwarf_Die, decltype(&std::free)>;

bool IsFunction(Dwarf_Die* die) {
  const int tag = dwarf_tag(die);
  return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

uint32_t UnsignedAttribute(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attribute;
  Dwarf_Word value = 0;
  if (dwarf_formudata(dwarf_attr(die, name, &attribute), &value) != 0) return 0;
  return static_cast<uint32_t>(value);
}

// The file and line from which `inlined` (a DW_TAG_inlined_subroutine) was called.
void SetCallSite(Dwarf_Die* inlined, profile::SourceFrame* frame) {
  frame->set_line(UnsignedAttribute(inlined, DW_AT_call_line));
  Dwarf_Attribute attribute;
  Dwarf_Word file_index = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attribute), &file_index) != 0) return;
  Dwarf_Die cu;
  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  if (dwarf_diecu(inlined, &cu, nullptr, nullptr) == nullptr ||
      dwarf_getsrcfiles(&cu, &files, &file_count) != 0 || file_index >= file_count) {
    return;
  }
  frame->set_file(ResolvePath(&cu, dwarf_filesrc(files, file_index, nullptr, nullptr)));
}

// The line-table row for `pc`: the innermost frame's own file and line.
void SetAddressLine(Dwarf_Die* cudie, Dwarf_Addr pc, profile::SourceFrame* frame) {
  Dwarf_Line* line = dwarf_getsrc_die(cudie, pc);
  if (line == nullptr) return;
  int number = 0;
  if (dwarf_lineno(line, &number) == 0 && number > 0) frame->set_line(static_cast<uint32_t>(number));
  frame->set_file(ResolvePath(cudie, dwarf_linesrc(line, nullptr, nullptr)));
}

void SetDeclaration(Dwarf_Die* function, profile::SourceFrame* frame) {
  frame->set_function_file(ResolvePath(function, dwarf_decl_file(function)));
  int line = 0;
  if (dwarf_decl_line(function, &line) == 0 && line > 0) {
    frame->set_function_line(static_cast<uint32_t>(line));
  }
}

bool IsScopeWithCode(int tag) {
  return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
         tag == DW_TAG_lexical_block || tag == DW_TAG_try_block || tag == DW_TAG_catch_block;
}

// Appends to `path` the chain of code scopes under `parent` (a function found by the
// index) that contain `pc`, outermost first, reading only that function's DIEs.
// dwarf_getscopes would walk the whole CU, twice for inlined code, which costs
// milliseconds per address in large C++ units.
bool FindCodeScopes(Dwarf_Die* parent, Dwarf_Addr pc, std::vector<Dwarf_Die>& path, int depth) {
  Dwarf_Die child;
  if (depth > 256 || dwarf_child(parent, &child) != 0) return false;
  do {
    const int tag = dwarf_tag(&child);
    if (IsScopeWithCode(tag)) {
      if (dwarf_haspc(&child, pc) == 1) {
        path.push_back(child);
        FindCodeScopes(&child, pc, path, depth + 1);
        return true;
      }
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

// The same chain as FindCodeScopes, from libdw's general (slower) search, for DWARF
// that puts code where FindCodeScopes does not look. dwarf_getscopes continues past
// an inlined instance into the scopes of its abstract definition (for name lookup),
// so the concrete callers of an inlined instance come from dwarf_getscopes_die, as
// eu-addr2line -i does. Returned outermost first.
std::vector<Dwarf_Die> LibdwCodeScopes(Dwarf_Die* cudie, Dwarf_Addr pc) {
  std::vector<Dwarf_Die> path;
  Dwarf_Die* raw = nullptr;
  const int count = dwarf_getscopes(cudie, pc, &raw);
  ScopeArray scopes(raw, &std::free);
  int innermost = 0;
  while (innermost < count && !IsFunction(&raw[innermost])) ++innermost;
  if (innermost >= count) return path;
  Dwarf_Die* raw_outer = nullptr;
  const int outer_count = dwarf_tag(&raw[innermost]) == DW_TAG_inlined_subroutine
                              ? dwarf_getscopes_die(&raw[innermost], &raw_outer)
                              : 0;
  ScopeArray outer(raw_outer, &std::free);
  if (outer_count <= 0) {
    path.push_back(raw[innermost]);
    return path;
  }
  for (int i = outer_count - 1; i >= 0; --i) path.push_back(raw_outer[i]);
  return path;
}

// The function DIEs containing `pc`, innermost first, ending with the concrete
// DW_TAG_subprogram (nested subprograms end the chain at the innermost one).
std::vector<Dwarf_Die> FunctionChain(CompileUnitIndex& compile_units, Dwarf_Die* cudie,
                                     Dwarf_Addr pc) {
  std::vector<Dwarf_Die> path;
  for (Dwarf_Die& function : compile_units.FunctionsAt(cudie, pc)) {
    if (dwarf_haspc(&function, pc) != 1) continue;
    path.push_back(function);
    FindCodeScopes(&function, pc, path, 0);
    break;
  }
  if (path.empty()) path = LibdwCodeScopes(cudie, pc);
  std::vector<Dwarf_Die> chain;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if (!IsFunction(&*it)) continue;
    chain.push_back(*it);
    if (dwarf_tag(&*it) == DW_TAG_subprogram) break;
  }
  return chain;
}

std::string SymbolTableName(Dwfl_Module* module, Dwarf_Addr address) {
  GElf_Off offset = 0;
  GElf_Sym symbol;
  const char* name =
      dwfl_module_addrinfo(module, address, &offset, &symbol, nullptr, nullptr, nullptr);
  return name != nullptr && name[0] != '\0' ? Demangle(name) : std::string();
}

}  // namespace

std::vector<profile::SourceFrame> ResolveSourceFrames(Dwfl_Module* module,
                                                      CompileUnitIndex& compile_units,
                                                      FunctionNames& names, Dwarf_Addr address) {
  std::vector<profile::SourceFrame> frames;
  Dwarf_Addr dwarf_bias = 0;
  Dwarf_Die* cudie = compile_units.Find(address, &dwarf_bias);
  const Dwarf_Addr pc = address - dwarf_bias;

  std::vector<Dwarf_Die> chain;
  if (cudie != nullptr) chain = FunctionChain(compile_units, cudie, pc);
  if (!chain.empty()) {
    frames.resize(chain.size());
    // chain is innermost first; frames are outermost first.
    for (size_t i = 0; i < chain.size(); ++i) {
      Dwarf_Die* function = &chain[i];
      profile::SourceFrame& frame = frames[chain.size() - 1 - i];
      frame.set_function(names.Name(function, cudie));
      frame.set_inlined(dwarf_tag(function) == DW_TAG_inlined_subroutine &&
                        i + 1 < chain.size());
      SetDeclaration(function, &frame);
      if (i == 0) {
        SetAddressLine(cudie, pc, &frame);
      } else {
        SetCallSite(&chain[i - 1], &frame);
      }
    }
    if (frames.front().function().empty()) frames.front().set_function(SymbolTableName(module, address));
    for (profile::SourceFrame& frame : frames) {
      if (frame.function().empty()) frame.set_function("??");
    }
    return frames;
  }

  // No DWARF function here (stripped code, assembly, a CU without subprograms): the
  // ELF symbol table names it; the line table may still know the line.
  std::string name = SymbolTableName(module, address);
  if (name.empty()) return frames;
  profile::SourceFrame& frame = frames.emplace_back();
  frame.set_function(std::move(name));
  if (cudie != nullptr) SetAddressLine(cudie, pc, &frame);
  return frames;
}

}  // namespace cilkprof::aggregator::symbolizer_internal
