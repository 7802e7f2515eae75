// Which namespace, class or function declares a DIE: the tree a qualified name is
// spelled from when a function has no linkage name.
#pragma once

#include <unordered_map>

#include <elfutils/libdw.h>

namespace cilkprof::aggregator::symbolizer_internal {

class DeclarationScopes {
 public:
  // The innermost DW_TAG_namespace, class, struct, union or subprogram enclosing the
  // subprogram, namespace, class, struct or union DIE `die` (lexical blocks are looked
  // through: a lambda's closure type declared in a block belongs to the function).
  // False at unit level. Each unit is read in one walk, on the first question about it.
  bool Parent(Dwarf_Die* die, Dwarf_Die* parent);

 private:
  // Keyed by Dwarf_Die::addr, the DIE's place in its mapped section: unlike DIE
  // offsets, unique across a module's file and its dwz supplementary file.
  using Parents = std::unordered_map<const void*, Dwarf_Die>;
  static void Collect(Dwarf_Die* node, const Dwarf_Die* enclosing, Parents& parents, int depth);

  std::unordered_map<const void*, Parents> units_;  // by unit DIE address
};

}  // namespace cilkprof::aggregator::symbolizer_internal
