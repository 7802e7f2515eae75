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

const char* LinkageName(Dwarf_Die* function) {
  const char* linkage = StringAttribute(function, DW_AT_linkage_name);
  return linkage != nullptr ? linkage : StringAttribute(function, DW_AT_MIPS_linkage_name);
}

bool IsMangled(const char* name) { return name != nullptr && std::strncmp(name, "_Z", 2) == 0; }

// Follows DW_AT_abstract_origin and DW_AT_specification to the DIE that declares the
// function: the one nested inside its namespace or class, shared by the function's
// out-of-line copies and inlined instances. Bounded, so that a malformed reference
// cycle cannot loop.
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

// A class defined outside the scope that declares it (DW_AT_specification) is named
// from its declaration.
Dwarf_Die DeclaredClass(Dwarf_Die* scope) {
  Dwarf_Attribute attribute;
  Dwarf_Die declaration;
  Dwarf_Attribute* reference = dwarf_attr(scope, DW_AT_specification, &attribute);
  if (reference != nullptr && dwarf_formref_die(reference, &declaration) != nullptr) {
    return declaration;
  }
  return *scope;
}

// The demangled name of an ELF symbol without its clone suffix (".cold", ".isra.0",
// ".constprop.0", ".part.0", ".localalias"), so that every copy of a function gets the
// name of the function the programmer wrote (mangled names never contain '.'). Empty
// when the demangler rejects it.
std::string DemangleWithoutClone(const char* mangled) {
  const char* dot = std::strchr(mangled, '.');
  const std::string base = dot != nullptr ? std::string(mangled, dot) : std::string(mangled);
  std::string demangled = Demangle(base.c_str());
  return demangled != base ? demangled : std::string();
}

// C and assembler units have no mangled names to look for.
bool MayHaveMangledNames(Dwarf_Die* cu) {
  switch (dwarf_srclang(cu)) {
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_C99:
    case DW_LANG_C11:
    case DW_LANG_Mips_Assembler:
      return false;
    default:
      return true;
  }
}

bool IsArtificial(Dwarf_Die* die) {
  Dwarf_Attribute attribute;
  bool flag = false;
  return dwarf_formflag(dwarf_attr(die, DW_AT_artificial, &attribute), &flag) == 0 && flag;
}

// c++filt's spelling of an unnamed class, without the number that only the mangled
// name knows: "{lambda()}" for a closure type (one with an operator()) whose call
// operator takes no parameters, "{lambda(...)}" when it takes some (their types are
// not spelled), "{unnamed type}" otherwise.
std::string UnnamedClassName(Dwarf_Die* scope) {
  Dwarf_Die member;
  if (dwarf_child(scope, &member) != 0) return "{unnamed type}";
  do {
    const char* name = dwarf_diename(&member);
    if (dwarf_tag(&member) != DW_TAG_subprogram || name == nullptr ||
        std::strncmp(name, "operator()", 10) != 0) {
      continue;
    }
    Dwarf_Die parameter;
    if (dwarf_child(&member, &parameter) == 0) {
      do {
        if (dwarf_tag(&parameter) == DW_TAG_formal_parameter && !IsArtificial(&parameter)) {
          return "{lambda(...)}";
        }
      } while (dwarf_siblingof(&parameter, &parameter) == 0);
    }
    return "{lambda()}";
  } while (dwarf_siblingof(&member, &member) == 0);
  return "{unnamed type}";
}

}  // namespace

std::string Demangle(const char* name) {
  if (name == nullptr) return {};
  if (!IsMangled(name)) return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled != nullptr ? std::string(demangled.get()) : std::string(name);
}

FunctionNames::FunctionNames(Dwfl_Module* module, CompileUnitIndex& compile_units)
    : module_(module), compile_units_(compile_units), symbols_(module) {}

const std::string& FunctionNames::Name(Dwarf_Die* function, Dwarf_Die* cu) {
  Dwarf_Die declaring = DeclaringDie(function);
  const Key key{cu->addr, declaring.addr};
  if (auto found = names_.find(key); found != names_.end()) return found->second;
  // Computed before inserting: naming a scope may name other functions first.
  std::string name = Compute(function, &declaring, cu);
  return names_.emplace(key, std::move(name)).first->second;
}

std::string FunctionNames::Compute(Dwarf_Die* function, Dwarf_Die* declaring, Dwarf_Die* cu) {
  const char* linkage = LinkageName(function);
  // A C++ linkage name demangles into the full signature. Any other linkage name is an
  // assembler label (glibc's "__GI_qsort" for qsort), not what the programmer wrote.
  if (IsMangled(linkage)) {
    std::string demangled = Demangle(linkage);
    if (demangled != linkage) return demangled;
  }
  if (linkage == nullptr) {
    if (const char* mangled = OutOfLineSymbol(declaring, cu); mangled != nullptr) {
      std::string demangled = DemangleWithoutClone(mangled);
      if (!demangled.empty()) return demangled;
    }
  }
  const char* name = StringAttribute(function, DW_AT_name);
  if (name != nullptr) return ScopePrefix(declaring, cu) + name;
  return linkage != nullptr ? std::string(linkage) : std::string();
}

// The unit's out-of-line functions without a linkage name are matched with the ELF
// symbols at their entries once, on the first question about the unit: an inlined
// instance is named by the copy that has a symbol, wherever that copy is.
const char* FunctionNames::OutOfLineSymbol(Dwarf_Die* declaring, Dwarf_Die* cu) {
  auto [it, inserted] = out_of_line_.try_emplace(cu->addr);
  MangledByDeclaration& mangled = it->second;
  if (inserted && MayHaveMangledNames(cu)) {
    Dwarf_Addr bias = 0;
    if (dwfl_module_getdwarf(module_, &bias) != nullptr) {
      for (const CompileUnitIndex::FunctionRange& range : compile_units_.Functions(cu)) {
        Dwarf_Die function = range.function;
        if (LinkageName(&function) != nullptr) continue;
        const char* symbol = symbols_.At(range.start + bias);
        if (symbol == nullptr) continue;
        // One function's ranges (a hot part and its ".cold" part) name the same
        // function once the clone suffix is removed: the first is as good as any.
        mangled.emplace(DeclaringDie(&function).addr, symbol);
      }
    }
  }
  auto found = mangled.find(declaring->addr);
  return found != mangled.end() ? found->second : nullptr;
}

std::string FunctionNames::ScopePrefix(Dwarf_Die* die, Dwarf_Die* cu) {
  Dwarf_Die parent;
  // Bounded: in malformed DWARF, following a function to its declaration could lead
  // back inside the function.
  if (scope_depth_ > 64 || !scopes_.Parent(die, &parent)) return {};
  ++scope_depth_;
  std::string prefix = ScopeName(&parent, cu) + "::";
  --scope_depth_;
  return prefix;
}

const std::string& FunctionNames::ScopeName(Dwarf_Die* scope, Dwarf_Die* cu) {
  // A local class is qualified by the full name of the function declaring it, as
  // c++filt does: "fib(int)::{lambda()#1}".
  if (dwarf_tag(scope) == DW_TAG_subprogram) return Name(scope, cu);
  const Key key{cu->addr, scope->addr};
  if (auto found = names_.find(key); found != names_.end()) return found->second;
  Dwarf_Die declared = DeclaredClass(scope);
  const char* own = dwarf_diename(&declared);
  std::string name = ScopePrefix(&declared, cu);
  if (own != nullptr) {
    name += own;
  } else if (dwarf_tag(&declared) == DW_TAG_namespace) {
    name += "(anonymous namespace)";
  } else {
    name += UnnamedClassName(&declared);
  }
  return names_.emplace(key, std::move(name)).first->second;
}

}  // namespace cilkprof::aggregator::symbolizer_internal
