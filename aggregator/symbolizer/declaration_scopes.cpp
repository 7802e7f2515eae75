#include "declaration_scopes.h"

#include <dwarf.h>

namespace cilkprof::aggregator::symbolizer_internal {
namespace {

bool IsNamedScope(int tag) {
  return tag == DW_TAG_subprogram || tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
         tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

}  // namespace

bool DeclarationScopes::Parent(Dwarf_Die* die, Dwarf_Die* parent) {
  Dwarf_Die unit;
  if (dwarf_diecu(die, &unit, nullptr, nullptr) == nullptr) return false;
  auto [it, inserted] = units_.try_emplace(unit.addr);
  if (inserted) Collect(&unit, nullptr, it->second, 0);
  auto found = it->second.find(die->addr);
  if (found == it->second.end()) return false;
  *parent = found->second;
  return true;
}

void DeclarationScopes::Collect(Dwarf_Die* node, const Dwarf_Die* enclosing, Parents& parents,
                                int depth) {
  Dwarf_Die child;
  if (depth > 64 || dwarf_child(node, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (IsNamedScope(tag)) {
      if (enclosing != nullptr) parents.emplace(child.addr, *enclosing);
      Collect(&child, &child, parents, depth + 1);
    } else if (tag == DW_TAG_lexical_block) {
      Collect(&child, enclosing, parents, depth + 1);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace cilkprof::aggregator::symbolizer_internal
