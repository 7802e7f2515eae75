#include "data_objects.h"

#include <dwarf.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "function_names.h"
#include "source_frames.h"

namespace cilkprof::aggregator::symbolizer_internal {
namespace {

// How deep the walk for variables goes: namespaces, functions and their blocks nest;
// a limit keeps a corrupt DIE tree from recursing without end.
constexpr int kMaxDepth = 64;

// The address of a variable whose location is a static address (DW_OP_addr, or
// DW_OP_addrx / DW_OP_GNU_addr_index into .debug_addr); nullopt for anything else
// (registers, the stack, TLS).
std::optional<Dwarf_Addr> StaticAddress(Dwarf_Die* die) {
  Dwarf_Attribute location;
  if (dwarf_attr(die, DW_AT_location, &location) == nullptr) return std::nullopt;
  Dwarf_Op* expression = nullptr;
  size_t length = 0;
  if (dwarf_getlocation(&location, &expression, &length) != 0 || length != 1) return std::nullopt;
  const Dwarf_Op& op = expression[0];
  if (op.atom == DW_OP_addr) return op.number;
  if (op.atom == DW_OP_addrx || op.atom == DW_OP_GNU_addr_index) {
    Dwarf_Attribute address_attribute;
    Dwarf_Addr address = 0;
    if (dwarf_getlocation_attr(&location, &op, &address_attribute) == 0 &&
        dwarf_formaddr(&address_attribute, &address) == 0) {
      return address;
    }
  }
  return std::nullopt;
}

}  // namespace

void DataObjects::ReadSymbols() {
  symbols_read_ = true;
  const int count = dwfl_module_getsymtab(module_);
  for (int i = 0; i < count; ++i) {
    GElf_Sym symbol;
    GElf_Addr address = 0;
    const char* name = dwfl_module_getsym_info(module_, i, &symbol, &address, nullptr, nullptr, nullptr);
    if (name == nullptr || name[0] == '\0' || symbol.st_shndx == SHN_UNDEF) continue;
    const int type = GELF_ST_TYPE(symbol.st_info);
    // STT_COMMON only survives in relocatable objects; in linked modules common
    // symbols are objects. Thread-local (STT_TLS) values are not in the module's
    // segments at run time: such a lock is reported at its absolute address.
    if (type != STT_OBJECT && type != STT_COMMON) continue;
    symbols_.push_back(Symbol{address, symbol.st_size, name, GELF_ST_BIND(symbol.st_info) != STB_LOCAL});
  }
  // Deterministic whatever the table's order: per address, a global name before a
  // local alias, then the larger object (a struct before its first member's alias),
  // then by name.
  std::sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
    if (a.address != b.address) return a.address < b.address;
    if (a.global != b.global) return a.global;
    if (a.size != b.size) return a.size > b.size;
    return std::strcmp(a.name, b.name) < 0;
  });
}

void DataObjects::CollectVariables(Dwarf_Die* parent, Dwarf_Addr bias, int depth) {
  if (depth > kMaxDepth) return;
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    switch (dwarf_tag(&child)) {
      case DW_TAG_variable:
        if (std::optional<Dwarf_Addr> address = StaticAddress(&child)) {
          variables_.emplace(*address + bias, child);  // the first definition stays
        }
        break;
      // Scopes that may hold static variables: namespaces, functions (a function's
      // `static std::mutex m`) and their blocks.
      case DW_TAG_namespace:
      case DW_TAG_subprogram:
      case DW_TAG_lexical_block:
        CollectVariables(&child, bias, depth + 1);
        break;
      default:
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

void DataObjects::ReadVariables() {
  variables_read_ = true;
  Dwarf_Addr bias = 0;
  for (Dwarf_Die* cu = dwfl_module_nextcu(module_, nullptr, &bias); cu != nullptr;
       cu = dwfl_module_nextcu(module_, cu, &bias)) {
    CollectVariables(cu, bias, 0);
  }
}

std::optional<profile::SourceFrame> DataObjects::At(Dwarf_Addr address) {
  if (!symbols_read_) ReadSymbols();
  // The symbols starting at the greatest address at or before `address` (aliases,
  // preferred first); the first whose object holds the address. Objects do not
  // overlap otherwise.
  const auto upper = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                      [](Dwarf_Addr a, const Symbol& symbol) { return a < symbol.address; });
  if (upper == symbols_.begin()) return std::nullopt;
  const Dwarf_Addr start = std::prev(upper)->address;
  const Symbol* found = nullptr;
  for (auto s = std::lower_bound(symbols_.begin(), upper, start,
                                 [](const Symbol& symbol, Dwarf_Addr a) { return symbol.address < a; });
       s != upper && found == nullptr; ++s) {
    if (address == s->address || address - s->address < s->size) found = &*s;
  }
  if (found == nullptr) return std::nullopt;

  profile::SourceFrame frame;
  std::string name = Demangle(found->name);
  if (address != found->address) {
    char inside[24];
    std::snprintf(inside, sizeof inside, "+0x%" PRIx64, static_cast<uint64_t>(address - found->address));
    name += inside;
  }
  frame.set_function(std::move(name));
  if (!variables_read_) ReadVariables();
  if (auto v = variables_.find(found->address); v != variables_.end()) {
    Dwarf_Die* variable = &v->second;
    int line = 0;
    // dwarf_decl_file and dwarf_decl_line follow DW_AT_specification: a static member
    // defined without a line of its own has its in-class declaration's.
    frame.set_file(ResolvePath(variable, dwarf_decl_file(variable)));
    if (dwarf_decl_line(variable, &line) == 0 && line > 0) frame.set_line(static_cast<uint32_t>(line));
  }
  return frame;
}

}  // namespace cilkprof::aggregator::symbolizer_internal
