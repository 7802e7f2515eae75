#include "control/injected_interposition.h"

#include <dlfcn.h>

#include <vector>

#include "got_patch.h"
#include "real_functions.h"

namespace cilkprof::agent {
namespace {

// A name the agent exports (exports.map) and the function its interposer ends in.
struct Interposed {
  const char* name;
  void* (*real)();
};

#define CILKPROF_INTERPOSED(fn) \
  Interposed { #fn, [] { return reinterpret_cast<void*>(real::fn()); } }

// pthread_create/pthread_exit (interpose.cc): threads started while attached register
// themselves. The lock functions: exactly the "locks" part of exports.map.
const Interposed kInterposed[] = {
    CILKPROF_INTERPOSED(pthread_create),
    CILKPROF_INTERPOSED(pthread_exit),
    CILKPROF_INTERPOSED(pthread_mutex_lock),
    CILKPROF_INTERPOSED(pthread_mutex_trylock),
    CILKPROF_INTERPOSED(pthread_mutex_timedlock),
    CILKPROF_INTERPOSED(pthread_mutex_clocklock),
    CILKPROF_INTERPOSED(pthread_mutex_unlock),
    CILKPROF_INTERPOSED(pthread_mutex_destroy),
    CILKPROF_INTERPOSED(pthread_rwlock_rdlock),
    CILKPROF_INTERPOSED(pthread_rwlock_wrlock),
    CILKPROF_INTERPOSED(pthread_rwlock_tryrdlock),
    CILKPROF_INTERPOSED(pthread_rwlock_trywrlock),
    CILKPROF_INTERPOSED(pthread_rwlock_timedrdlock),
    CILKPROF_INTERPOSED(pthread_rwlock_timedwrlock),
    CILKPROF_INTERPOSED(pthread_rwlock_clockrdlock),
    CILKPROF_INTERPOSED(pthread_rwlock_clockwrlock),
    CILKPROF_INTERPOSED(pthread_rwlock_unlock),
    CILKPROF_INTERPOSED(pthread_spin_lock),
    CILKPROF_INTERPOSED(pthread_spin_trylock),
    CILKPROF_INTERPOSED(pthread_spin_unlock),
    CILKPROF_INTERPOSED(pthread_cond_wait),
    CILKPROF_INTERPOSED(pthread_cond_timedwait),
    CILKPROF_INTERPOSED(pthread_cond_clockwait),
    CILKPROF_INTERPOSED(pthread_cond_signal),
    CILKPROF_INTERPOSED(pthread_cond_broadcast),
};

#undef CILKPROF_INTERPOSED

// Set up once, on the control thread; kept for the life of the process.
GotPatcher* g_patcher = nullptr;

uintptr_t ModuleOf(const void* address) {
  Dl_info info;
  if (dladdr(address, &info) == 0) return 0;
  return reinterpret_cast<uintptr_t>(info.dli_fbase);
}

// The redirections: each name to the agent's own definition, expected to be bound to
// the function that definition calls (RTLD_NEXT). Inside the agent, &pthread_mutex_lock
// would be whatever the loader bound the agent's own reference to (libc's, for a
// dlopen()ed agent), so the definitions are looked up in the agent's own handle.
bool BuildRedirects(std::vector<GotRedirect>* redirects, uintptr_t* agent_base, std::string* why) {
  Dl_info self;
  if (dladdr(reinterpret_cast<const void*>(&BuildRedirects), &self) == 0 || self.dli_fname == nullptr) {
    *why = "cannot find the agent's own file (dladdr)";
    return false;
  }
  *agent_base = reinterpret_cast<uintptr_t>(self.dli_fbase);
  void* handle = dlopen(self.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
  if (handle == nullptr) {
    *why = std::string("cannot open the agent's own handle: ") + dlerror();
    return false;
  }
  bool ok = true;
  for (const Interposed& f : kInterposed) {
    void* ours = dlsym(handle, f.name);
    void* real = f.real();
    if (ours == nullptr || ModuleOf(ours) != *agent_base) {
      *why = std::string("the agent does not define ") + f.name;
      ok = false;
      break;
    }
    // RTLD_NEXT from a dlopen()ed agent must reach past it; calling the agent's own
    // definition would recurse forever.
    if (real == ours || ModuleOf(real) == *agent_base) {
      *why = std::string("the real ") + f.name + " resolves to the agent itself";
      ok = false;
      break;
    }
    redirects->push_back(GotRedirect{f.name, reinterpret_cast<uintptr_t>(ours), reinterpret_cast<uintptr_t>(real)});
  }
  dlclose(handle);  // the agent is linked -z nodelete: this only drops the reference
  return ok;
}

}  // namespace

bool RedirectProgramCalls(std::string* why) {
  std::string local;
  std::string& reason = why != nullptr ? *why : local;
  if (g_patcher == nullptr) {
    std::vector<GotRedirect> redirects;
    uintptr_t agent_base = 0;
    if (!BuildRedirects(&redirects, &agent_base, &reason)) return false;
    GotPatchExclusions exclusions;
    exclusions.bases.push_back(agent_base);
    // libc's own calls are internal (hidden aliases) or the program's business in
    // libc; the loader's are not calls of the program.
    exclusions.names = {"libc.so.6", "ld-linux*"};
    g_patcher = new GotPatcher(std::move(redirects), std::move(exclusions));
  }
  GotPatchCounts counts;
  if (!g_patcher->Patch(&counts, &reason)) {
    g_patcher->Restore();
    reason = "cannot redirect the program's lock calls to the agent: " + reason;
    return false;
  }
  return true;
}

void RestoreProgramCalls() {
  if (g_patcher != nullptr) g_patcher->Restore();
}

}  // namespace cilkprof::agent
