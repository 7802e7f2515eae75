// Initialization of the unwinder, and Unwind(): the logical walk with no segment.
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <atomic>
#include <mutex>

#include "cilkprof/unwinder/cursor.h"
#include "cilkprof/unwinder/fault_guard.h"
#include "cilkprof/unwinder/logical.h"
#include "cilkprof/unwinder/unwinder.h"
#include "internal.h"

namespace cilkprof::unwinder {
namespace {

// Runs libunwind over the calling thread's own stack once, outside any signal handler,
// so that its lazy initialization (tdep_init, the local address space, the per-thread
// register-state cache and its memory) never happens inside one.
__attribute__((noinline)) void WarmUpLibunwind(void*) {
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0) return;
  if (unw_init_local(&cursor, &context) < 0) return;
  for (int i = 0; i < 64 && unw_step(&cursor) > 0; ++i) {
  }
}

// libunwind's own memory reader for the local address space. With its conservative
// checks it validates addresses during unw_step with mincore()/msync() and a pipe
// write: several system calls per frame. Inside the fault guard a bad address simply
// faults and is caught, so there the reader loads directly; everywhere else (a program
// that uses libunwind itself) the original, validating reader runs unchanged.
unw_accessors_t* g_local_accessors = nullptr;
int (*g_libunwind_access_mem)(unw_addr_space_t, unw_word_t, unw_word_t*, int, void*) = nullptr;

int GuardedAccessMem(unw_addr_space_t as, unw_word_t address, unw_word_t* value, int write,
                     void* arg) {
  if (write != 0 || !InsideGuard()) return g_libunwind_access_mem(as, address, value, write, arg);
  *value = *reinterpret_cast<const volatile unw_word_t*>(address);
  return 0;
}

bool InstallGuardedReader(const char** error) {
  unw_accessors_t* accessors = unw_get_accessors(unw_local_addr_space);
  if (accessors == nullptr || accessors->access_mem == nullptr) {
    *error = "libunwind has no accessors for the local address space (unw_get_accessors)";
    return false;
  }
  if (accessors->access_mem != GuardedAccessMem) {
    g_libunwind_access_mem = accessors->access_mem;
    g_local_accessors = accessors;
    accessors->access_mem = GuardedAccessMem;
  }
  return true;
}

}  // namespace

bool Initialize(const char** error) {
  static std::mutex once;
  std::lock_guard<std::mutex> lock(once);
  static const char* no_error = nullptr;
  if (error == nullptr) error = &no_error;
  // Per-thread caching where libunwind has it (>= 1.7: initial-exec TLS, no lock).
  // Debian 12's 1.6.2 silently keeps the global cache, whose lock blocks every signal
  // while held (two rt_sigprocmask calls a frame): safe in a handler, since no thread
  // can be interrupted holding it, but most of the DWARF cost (docs/UNWINDER.md,
  // "Signal safety").
  if (unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD) != 0) {
    *error = "libunwind refused the per-thread caching policy (unw_set_caching_policy failed)";
    return false;
  }
  if (!internal::InstallFaultGuard(error)) return false;
  RunGuarded(WarmUpLibunwind, nullptr);  // also runs libunwind's tdep_init
  if (!InstallGuardedReader(error)) return false;
  RunGuarded(WarmUpLibunwind, nullptr);
  return true;
}

void PrepareThread() {
  internal::RecordThreadStack();
  // A sample arriving during the warm-up finds the guard armed and is dropped as
  // re-entrant, so it never runs libunwind concurrently with it on this thread.
  RunGuarded(WarmUpLibunwind, nullptr);
}

// The physical walk is the logical one with no segment and nothing elided: one walk
// (loop checks, fault guard, frameless-leaf probe) serves both.
UnwindResult Unwind(Mode mode, const ucontext_t* context, Frame* frames, uint32_t max_frames) {
  LogicalRequest request;
  request.mode = mode;
  request.context = context;
  const LogicalResult logical = UnwindLogical(request, frames, max_frames);
  UnwindResult result;
  result.depth = logical.depth;
  result.partial = logical.partial;
  result.truncated = logical.truncated;
  return result;
}

}  // namespace cilkprof::unwinder
