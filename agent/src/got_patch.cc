#include "got_patch.h"

#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace cilkprof::agent {
namespace {

// One line of /proc/self/maps: its range and protection.
struct Mapping {
  uintptr_t start = 0;
  uintptr_t end = 0;
  int prot = 0;
};

std::vector<Mapping> ReadMappings() {
  std::vector<Mapping> maps;
  FILE* f = std::fopen("/proc/self/maps", "re");
  if (f == nullptr) return maps;
  char line[512];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long start = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s", &start, &end, perms) != 3) continue;
    Mapping m;
    m.start = start;
    m.end = end;
    m.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
             (perms[2] == 'x' ? PROT_EXEC : 0);
    maps.push_back(m);
  }
  std::fclose(f);
  return maps;
}

// The pages' protections, read once per walk and again when a slot lies outside them
// (a module mapped since).
class Protections {
 public:
  bool Find(uintptr_t address, int* prot) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!read_ || attempt == 1) {
        maps_ = ReadMappings();
        read_ = true;
      }
      for (const Mapping& m : maps_) {
        if (address >= m.start && address < m.end) {
          *prot = m.prot;
          return true;
        }
      }
    }
    return false;
  }

 private:
  bool read_ = false;
  std::vector<Mapping> maps_;
};

// One aligned 8-byte store into `slot`, the page made writable for it if it is not.
bool StoreSlot(uintptr_t slot, uintptr_t value, Protections* protections, std::string* why) {
  int prot = 0;
  if (!protections->Find(slot, &prot)) {
    char text[80];
    std::snprintf(text, sizeof text, "the GOT slot at %#lx is in no mapping", static_cast<unsigned long>(slot));
    *why = text;
    return false;
  }
  auto* word = reinterpret_cast<uintptr_t*>(slot);
  if ((prot & PROT_WRITE) != 0) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
    return true;
  }
  const auto page_size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  void* page = reinterpret_cast<void*>(slot & ~(page_size - 1));
  if (mprotect(page, page_size, prot | PROT_WRITE) != 0) {
    *why = std::string("cannot make a GOT page writable: mprotect: ") + std::strerror(errno);
    return false;
  }
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
  // Back to what it was (RELRO: read-only), so the program's protection is unchanged.
  mprotect(page, page_size, prot);
  return true;
}

// A pointer of the dynamic section: glibc relocates most of them in place (absolute
// addresses), other loaders (and the vdso) may not (offsets from the load address).
uintptr_t DynamicPointer(uintptr_t value, uintptr_t base) { return value < base ? base + value : value; }

const char* BaseName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

}  // namespace

struct GotPatcher::Walk {
  GotPatcher* self = nullptr;
  bool first = true;
  GotPatchCounts counts;
  Protections protections;
  bool failed = false;
  std::string why;
  size_t restored = 0;
};

GotPatcher::GotPatcher(std::vector<GotRedirect> redirects, GotPatchExclusions exclusions)
    : redirects_(std::move(redirects)), exclusions_(std::move(exclusions)) {}

bool GotPatcher::Excluded(const dl_phdr_info& info) const {
  const char* name = info.dlpi_name != nullptr ? info.dlpi_name : "";
  const char* base = BaseName(name);
  if (info.dlpi_addr == getauxval(AT_SYSINFO_EHDR) || std::strncmp(base, "linux-vdso", 10) == 0) return true;
  for (uintptr_t b : exclusions_.bases) {
    if (info.dlpi_addr == b) return true;
  }
  for (const std::string& pattern : exclusions_.names) {
    if (!pattern.empty() && pattern.back() == '*') {
      if (std::strncmp(base, pattern.c_str(), pattern.size() - 1) == 0) return true;
    } else if (pattern == base) {
      return true;
    }
  }
  return false;
}

const GotRedirect* GotPatcher::Find(const char* name) const {
  for (const GotRedirect& r : redirects_) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

int GotPatcher::PatchModule(dl_phdr_info* info, size_t, void* opaque) {
#if defined(__x86_64__)
  auto* walk = static_cast<Walk*>(opaque);
  GotPatcher* self = walk->self;
  if (walk->first) {
    // The loader's counts of loads and unloads: unchanged since the last walk, there
    // is no new module, and every slot of the old ones that matched is ours already.
    walk->first = false;
    const std::pair<unsigned long long, unsigned long long> loads{info->dlpi_adds, info->dlpi_subs};
    if (self->walked_ && loads == self->loads_) return 1;
    self->loads_ = loads;
  }
  if (self->Excluded(*info)) return 0;
  const uintptr_t base = info->dlpi_addr;
  const ElfW(Dyn)* dynamic = nullptr;
  uintptr_t low = UINTPTR_MAX, high = 0;  // the module's mapped range, for lazy slots
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(base + ph.p_vaddr);
    if (ph.p_type == PT_LOAD) {
      if (base + ph.p_vaddr < low) low = base + ph.p_vaddr;
      if (base + ph.p_vaddr + ph.p_memsz > high) high = base + ph.p_vaddr + ph.p_memsz;
    }
  }
  if (dynamic == nullptr) return 0;  // a static executable: nothing bound at run time
  uintptr_t symtab = 0, strtab = 0, jmprel = 0, pltrelsz = 0, rela = 0, relasz = 0;
  uintptr_t relaent = sizeof(ElfW(Rela));
  intptr_t pltrel = DT_RELA;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: symtab = DynamicPointer(d->d_un.d_ptr, base); break;
      case DT_STRTAB: strtab = DynamicPointer(d->d_un.d_ptr, base); break;
      case DT_JMPREL: jmprel = DynamicPointer(d->d_un.d_ptr, base); break;
      case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
      case DT_PLTREL: pltrel = static_cast<intptr_t>(d->d_un.d_val); break;
      case DT_RELA: rela = DynamicPointer(d->d_un.d_ptr, base); break;
      case DT_RELASZ: relasz = d->d_un.d_val; break;
      case DT_RELAENT: relaent = d->d_un.d_val; break;
      default: break;
    }
  }
  if (symtab == 0 || strtab == 0 || relaent < sizeof(ElfW(Rela))) return 0;
  const auto* symbols = reinterpret_cast<const ElfW(Sym)*>(symtab);
  const auto* strings = reinterpret_cast<const char*>(strtab);
  const char* module_name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  bool touched = false;

  // The PLT's relocations, then the others (GLOB_DAT: -fno-plt calls, taken addresses).
  const std::pair<uintptr_t, uintptr_t> tables[] = {
      {pltrel == DT_RELA ? jmprel : 0, pltrel == DT_RELA ? pltrelsz : 0}, {rela, relasz}};
  for (const auto& [start, size] : tables) {
    if (start == 0) continue;
    for (uintptr_t at = start; at + sizeof(ElfW(Rela)) <= start + size; at += relaent) {
      const auto* r = reinterpret_cast<const ElfW(Rela)*>(at);
      const auto type = ELF64_R_TYPE(r->r_info);
      if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
      const ElfW(Sym)& sym = symbols[ELF64_R_SYM(r->r_info)];
      const GotRedirect* redirect = self->Find(strings + sym.st_name);
      if (redirect == nullptr) continue;
      const uintptr_t slot = base + r->r_offset;
      const uintptr_t current = __atomic_load_n(reinterpret_cast<const uintptr_t*>(slot), __ATOMIC_ACQUIRE);
      if (current == redirect->replacement) continue;  // ours already
      // Not yet resolved: a PLT slot of an undefined symbol still points into its module.
      const bool lazy = type == R_X86_64_JUMP_SLOT && sym.st_shndx == SHN_UNDEF && current >= low && current < high;
      if (current != redirect->expected && !lazy) {
        ++walk->counts.foreign;
        continue;
      }
      if (!StoreSlot(slot, redirect->replacement, &walk->protections, &walk->why)) {
        walk->failed = true;
        return 1;
      }
      touched = true;
      ++walk->counts.slots;
      Slot* known = nullptr;
      for (Slot& s : self->slots_) {
        if (s.address == slot && s.module_base == base && s.module_name == module_name) known = &s;
      }
      if (known != nullptr) {
        known->old_value = current;  // the slot was bound anew since (lazy resolution)
      } else {
        self->slots_.push_back(Slot{slot, current, redirect->replacement, base, module_name});
      }
    }
  }
  if (touched) ++walk->counts.modules;
  return 0;
#else
  auto* walk = static_cast<Walk*>(opaque);
  (void)info;
  walk->failed = true;
  walk->why = "rewriting GOT slots is implemented for x86-64 only";
  return 1;
#endif
}

bool GotPatcher::Patch(GotPatchCounts* counts, std::string* why) {
  std::lock_guard<std::mutex> hold(mu_);
  Walk walk;
  walk.self = this;
  // dl_iterate_phdr holds the loader's lock: no module is unloaded while it is walked.
  dl_iterate_phdr(&GotPatcher::PatchModule, &walk);
  walked_ = !walk.failed;
  if (counts != nullptr) *counts = walk.counts;
  if (walk.failed && why != nullptr) *why = walk.why;
  return !walk.failed;
}

int GotPatcher::RestoreModule(dl_phdr_info* info, size_t, void* opaque) {
  auto* walk = static_cast<Walk*>(opaque);
  const char* module_name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  for (const Slot& s : walk->self->slots_) {
    if (s.module_base != info->dlpi_addr || s.module_name != module_name) continue;
    // Someone else's value since (a module reloaded at the same place): theirs stays.
    if (__atomic_load_n(reinterpret_cast<const uintptr_t*>(s.address), __ATOMIC_ACQUIRE) != s.new_value) continue;
    std::string ignored;
    if (StoreSlot(s.address, s.old_value, &walk->protections, &ignored)) ++walk->restored;
  }
  return 0;
}

size_t GotPatcher::Restore() {
  std::lock_guard<std::mutex> hold(mu_);
  walked_ = false;
  if (slots_.empty()) return 0;
  Walk walk;
  walk.self = this;
  // Only modules still loaded: an unloaded module's slots are gone with it.
  dl_iterate_phdr(&GotPatcher::RestoreModule, &walk);
  slots_.clear();
  return walk.restored;
}

size_t GotPatcher::patched_slots() const {
  std::lock_guard<std::mutex> hold(mu_);
  return slots_.size();
}

}  // namespace cilkprof::agent
