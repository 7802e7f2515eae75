#include "elf_needed.h"

#include <elf.h>

#include <cstring>
#include <fstream>

namespace cilkprof::cli {
namespace {

template <class T>
bool ReadAt(std::ifstream& file, uint64_t offset, T* out) {
  file.clear();
  file.seekg(static_cast<std::streamoff>(offset));
  return static_cast<bool>(file.read(reinterpret_cast<char*>(out), sizeof(T)));
}

// The file offset of virtual address `vaddr` (DT_STRTAB holds an address), through the
// PT_LOAD segment that maps it; 0 when none does.
uint64_t FileOffsetOf(const std::vector<Elf64_Phdr>& loads, uint64_t vaddr) {
  for (const Elf64_Phdr& load : loads) {
    if (vaddr >= load.p_vaddr && vaddr < load.p_vaddr + load.p_filesz) return vaddr - load.p_vaddr + load.p_offset;
  }
  return 0;
}

}  // namespace

std::vector<std::string> NeededLibraries(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  Elf64_Ehdr header{};
  if (!file || !ReadAt(file, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_phentsize < sizeof(Elf64_Phdr)) {
    return {};
  }
  std::vector<Elf64_Phdr> loads;
  Elf64_Phdr dynamic{};
  bool has_dynamic = false;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr phdr{};
    if (!ReadAt(file, header.e_phoff + static_cast<uint64_t>(i) * header.e_phentsize, &phdr)) return {};
    if (phdr.p_type == PT_LOAD) loads.push_back(phdr);
    if (phdr.p_type == PT_DYNAMIC) {
      dynamic = phdr;
      has_dynamic = true;
    }
  }
  if (!has_dynamic) return {};

  std::vector<uint64_t> needed_offsets;
  uint64_t strtab = 0;
  uint64_t strsz = 0;
  for (uint64_t at = 0; at + sizeof(Elf64_Dyn) <= dynamic.p_filesz; at += sizeof(Elf64_Dyn)) {
    Elf64_Dyn entry{};
    if (!ReadAt(file, dynamic.p_offset + at, &entry) || entry.d_tag == DT_NULL) break;
    if (entry.d_tag == DT_NEEDED) needed_offsets.push_back(entry.d_un.d_val);
    if (entry.d_tag == DT_STRTAB) strtab = entry.d_un.d_ptr;
    if (entry.d_tag == DT_STRSZ) strsz = entry.d_un.d_val;
  }
  const uint64_t strtab_offset = FileOffsetOf(loads, strtab);
  if (strtab_offset == 0 || strsz == 0) return {};

  std::vector<std::string> names;
  for (const uint64_t offset : needed_offsets) {
    if (offset >= strsz) continue;
    file.clear();
    file.seekg(static_cast<std::streamoff>(strtab_offset + offset));
    std::string name;
    if (std::getline(file, name, '\0') && !name.empty()) names.push_back(name);
  }
  return names;
}

}  // namespace cilkprof::cli
