// Symbolization of data addresses (issue 14: the lock objects of lock blame) in one
// module: the variable holding the address, and where it is declared.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include <elfutils/libdwfl.h>

#include "cilkprof/profile.pb.h"

namespace cilkprof::aggregator::symbolizer_internal {

class DataObjects {
 public:
  explicit DataObjects(Dwfl_Module* module) : module_(module) {}

  // The frame of the data object containing Dwfl address `address`: function = the
  // ELF object symbol's name, demangled ("g_queue_mutex", "ns::Pool::mutex_",
  // "f()::m" for a function's static), with "+0x<n>" when the address lies n bytes
  // inside it (a mutex member of a global struct); file and line = the variable's
  // declaration (DW_AT_decl_file/decl_line, the definition's own or its in-class
  // declaration's) when the DWARF has a variable at the symbol's address. Nullopt when
  // no object symbol contains the address. The tables are read once, on first use.
  std::optional<profile::SourceFrame> At(Dwarf_Addr address);

 private:
  struct Symbol {
    Dwarf_Addr address;  // Dwfl address
    uint64_t size;
    const char* name;
    bool global;
  };
  void ReadSymbols();
  void ReadVariables();
  void CollectVariables(Dwarf_Die* parent, Dwarf_Addr bias, int depth);

  Dwfl_Module* module_;
  bool symbols_read_ = false, variables_read_ = false;
  std::vector<Symbol> symbols_;  // sorted by address, the preferred name first
  std::unordered_map<Dwarf_Addr, Dwarf_Die> variables_;  // by Dwfl address
};

}  // namespace cilkprof::aggregator::symbolizer_internal
