#include "code_range.h"

#include <link.h>

namespace cilkprof::agent {
namespace {

struct Query {
  uintptr_t address;
  CodeRange found;
};

int FindSegment(struct dl_phdr_info* info, size_t, void* opaque) {
  auto* query = static_cast<Query*>(opaque);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
    if (query->address >= lo && query->address < hi) {
      query->found = CodeRange{lo, hi};
      return 1;
    }
  }
  return 0;
}

}  // namespace

CodeRange TextSegmentOf(const void* address) {
  Query query{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(FindSegment, &query);
  return query.found;
}

}  // namespace cilkprof::agent
