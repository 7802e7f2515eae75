#include "runtime_view.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

namespace cilkprof::agent {
namespace {

pthread_mutex_t g_view_mu = PTHREAD_MUTEX_INITIALIZER;
const cilkprof_runtime_t* g_runtime = nullptr;  // atomic accesses
unwinder::CodeRange g_elided[kMaxElidedRanges];
uint32_t g_elided_count = 0;  // atomic accesses; ranges below it are complete

struct ModuleSearch {
  uintptr_t address;
  unwinder::CodeRange ranges[8];
  uint32_t count;
};

int CollectExecutableSegments(struct dl_phdr_info* info, size_t, void* arg) {
  auto* search = static_cast<ModuleSearch*>(arg);
  bool holds = false;
  uint32_t count = 0;
  unwinder::CodeRange ranges[8];
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    const uintptr_t hi = lo + ph.p_memsz;
    if (search->address >= lo && search->address < hi) holds = true;
    if (count < 8) ranges[count++] = unwinder::CodeRange{lo, hi};
  }
  if (!holds) return 0;
  for (uint32_t i = 0; i < count; ++i) search->ranges[i] = ranges[i];
  search->count = count;
  return 1;
}

bool AlreadyElided(const unwinder::CodeRange& range) {
  for (uint32_t i = 0; i < g_elided_count; ++i) {
    if (g_elided[i].lo == range.lo && g_elided[i].hi == range.hi) return true;
  }
  return false;
}

}  // namespace

const cilkprof_runtime_t* AttachedRuntime() { return __atomic_load_n(&g_runtime, __ATOMIC_ACQUIRE); }

std::string AttachedRuntimeName() {
  const cilkprof_runtime_t* runtime = AttachedRuntime();
  return runtime != nullptr && runtime->name != nullptr ? runtime->name : "";
}

const unwinder::CodeRange* ElidedRanges(uint32_t* count) {
  *count = __atomic_load_n(&g_elided_count, __ATOMIC_ACQUIRE);
  return g_elided;
}

bool ElideModuleOf(const void* address) {
  if (address == nullptr) return false;
  ModuleSearch search{reinterpret_cast<uintptr_t>(address), {}, 0};
  dl_iterate_phdr(CollectExecutableSegments, &search);
  if (search.count == 0) return false;
  pthread_mutex_lock(&g_view_mu);
  for (uint32_t i = 0; i < search.count && g_elided_count < kMaxElidedRanges; ++i) {
    if (AlreadyElided(search.ranges[i])) continue;
    g_elided[g_elided_count] = search.ranges[i];
    __atomic_store_n(&g_elided_count, g_elided_count + 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_view_mu);
  return true;
}

void AttachRuntime(const cilkprof_runtime_t* runtime) {
  if (runtime == nullptr) return;
  ElideModuleOf(reinterpret_cast<const void*>(runtime->current_worker));
  // Boost.Context's code (jump_fcontext, make_fcontext's start trampoline) runs inside
  // context switches of a fiber-based runtime; it is never user code there.
  ElideModuleOf(dlsym(RTLD_DEFAULT, "jump_fcontext"));
  __atomic_store_n(&g_runtime, runtime, __ATOMIC_RELEASE);
}

}  // namespace cilkprof::agent
