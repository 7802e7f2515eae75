#include "inject/elf_symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace cilkprof::cli::inject {
namespace {

constexpr GElf_Versym kVersymHidden = 0x8000;  // a non-default version (name@VERSION)

// Closes what it opened, whatever path returns.
struct ElfFile {
  int fd = -1;
  Elf* elf = nullptr;
  ~ElfFile() {
    if (elf) elf_end(elf);
    if (fd >= 0) ::close(fd);
  }
};

// The lowest page-aligned PT_LOAD address: what the mapping at file offset 0 maps.
std::optional<std::uint64_t> FirstLoadAddress(Elf* elf) {
  size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0) return std::nullopt;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) && phdr.p_type == PT_LOAD) {
      std::uint64_t align = phdr.p_align > 1 ? phdr.p_align : 1;
      return (phdr.p_vaddr - phdr.p_offset) & ~(align - 1);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<LoadedObject> FindLoadedObject(pid_t pid, const std::vector<Mapping>& mappings,
                                             const std::function<bool(const std::string&)>& matches) {
  for (const Mapping& mapping : mappings) {
    if (mapping.offset != 0 || mapping.path.empty() || mapping.path[0] != '/') continue;
    if (!matches(MappingBasename(mapping))) continue;
    LoadedObject object;
    object.path_in_target = mapping.path;
    object.first_map_start = mapping.start;
    static const std::string kDeleted = " (deleted)";
    if (mapping.path.size() > kDeleted.size() &&
        mapping.path.compare(mapping.path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
      // Replaced on disk since it was loaded (a libc upgrade): read the mapped file itself.
      char name[64];
      std::snprintf(name, sizeof name, "%" PRIx64 "-%" PRIx64, mapping.start, mapping.end);
      object.readable_path = "/proc/" + std::to_string(pid) + "/map_files/" + name;
    } else {
      object.readable_path = "/proc/" + std::to_string(pid) + "/root" + mapping.path;
    }
    return object;
  }
  return std::nullopt;
}

Result<std::map<std::string, std::uint64_t>> LookUpFunctions(const LoadedObject& object,
                                                             const std::vector<std::string>& names) {
  auto unreadable = [&](const std::string& why) {
    return Status::Error("cannot read the symbols of " + object.path_in_target + " in the target (" +
                         object.readable_path + "): " + why);
  };
  elf_version(EV_CURRENT);
  ElfFile file;
  file.fd = ::open(object.readable_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) return unreadable(std::strerror(errno));
  file.elf = elf_begin(file.fd, ELF_C_READ_MMAP, nullptr);
  if (!file.elf || elf_kind(file.elf) != ELF_K_ELF) return unreadable("not an ELF file");
  std::optional<std::uint64_t> first_load = FirstLoadAddress(file.elf);
  if (!first_load) return unreadable("no loadable segment");
  const std::uint64_t bias = object.first_map_start - *first_load;

  Elf_Scn* dynsym = nullptr;
  Elf_Scn* versym = nullptr;
  GElf_Shdr dynsym_header{};
  for (Elf_Scn* scn = elf_nextscn(file.elf, nullptr); scn; scn = elf_nextscn(file.elf, scn)) {
    GElf_Shdr header;
    if (!gelf_getshdr(scn, &header)) continue;
    if (header.sh_type == SHT_DYNSYM) {
      dynsym = scn;
      dynsym_header = header;
    } else if (header.sh_type == SHT_GNU_versym) {
      versym = scn;
    }
  }
  if (!dynsym) return unreadable("no dynamic symbol table");
  Elf_Data* symbols = elf_getdata(dynsym, nullptr);
  Elf_Data* versions = versym ? elf_getdata(versym, nullptr) : nullptr;
  if (!symbols || dynsym_header.sh_entsize == 0) return unreadable("an empty dynamic symbol table");

  std::map<std::string, std::uint64_t> found;
  std::map<std::string, bool> found_default;
  const size_t count = dynsym_header.sh_size / dynsym_header.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym symbol;
    if (!gelf_getsym(symbols, static_cast<int>(i), &symbol)) continue;
    // Functions only: an IFUNC's symbol is its resolver, not the function.
    if (symbol.st_shndx == SHN_UNDEF || GELF_ST_TYPE(symbol.st_info) != STT_FUNC) continue;
    const char* name = elf_strptr(file.elf, dynsym_header.sh_link, symbol.st_name);
    if (!name) continue;
    bool wanted = false;
    for (const std::string& candidate : names) wanted = wanted || candidate == name;
    if (!wanted) continue;
    GElf_Versym version = 0;
    if (versions) gelf_getversym(versions, static_cast<int>(i), &version);
    const bool is_default = (version & kVersymHidden) == 0;
    if (found.count(name) && (found_default[name] || !is_default)) continue;
    found[name] = bias + symbol.st_value;
    found_default[name] = is_default;
  }
  return found;
}

}  // namespace cilkprof::cli::inject
