#include "real_functions.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace cilkprof::agent::real {
namespace {

void* Lookup(const char* name) {
  void* fn = dlsym(RTLD_NEXT, name);
  if (fn == nullptr) {
    static const char kPrefix[] = "cilkprof: fatal: cannot find the real ";
    (void)!write(STDERR_FILENO, kPrefix, sizeof kPrefix - 1);
    (void)!write(STDERR_FILENO, name, std::strlen(name));
    (void)!write(STDERR_FILENO, "\n", 1);
    std::abort();
  }
  return fn;
}

// The current version of a symbol glibc also keeps old versions of.
void* LookupVersioned(const char* name, const char* version) {
  void* fn = dlvsym(RTLD_NEXT, name, version);
  return fn != nullptr ? fn : Lookup(name);
}

template <typename Fn>
Fn CachedVersioned(Fn* slot, const char* name, const char* version) {
  Fn fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (fn == nullptr) {
    fn = reinterpret_cast<Fn>(LookupVersioned(name, version));
    __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
  }
  return fn;
}

template <typename Fn>
Fn Cached(Fn* slot, const char* name) {
  Fn fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (fn == nullptr) {
    fn = reinterpret_cast<Fn>(Lookup(name));
    __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
  }
  return fn;
}

#define CILKPROF_REAL(Type, name)          \
  Type name() {                            \
    static Type slot = nullptr;            \
    return Cached(&slot, #name);           \
  }

#define CILKPROF_REAL_COND(Type, name)                     \
  Type name() {                                            \
    static Type slot = nullptr;                            \
    return CachedVersioned(&slot, #name, "GLIBC_2.3.2");   \
  }

}  // namespace

CILKPROF_REAL(PthreadCreateFn, pthread_create)
CILKPROF_REAL(PthreadExitFn, pthread_exit)
ExitFn underscore_exit() {
  static ExitFn slot = nullptr;
  return Cached(&slot, "_exit");
}
CILKPROF_REAL(SigactionFn, sigaction)
CILKPROF_REAL(SignalFn, signal)
CILKPROF_REAL(SignalFn, sysv_signal)
CILKPROF_REAL(SignalFn, bsd_signal)
CILKPROF_REAL(ExecveFn, execve)
CILKPROF_REAL(ExecvFn, execv)
CILKPROF_REAL(ExecvFn, execvp)
CILKPROF_REAL(ExecveFn, execvpe)
CILKPROF_REAL(FexecveFn, fexecve)
CILKPROF_REAL(DlopenFn, dlopen)
CILKPROF_REAL(DlcloseFn, dlclose)
CILKPROF_REAL(SigmaskFn, pthread_sigmask)
CILKPROF_REAL(SigmaskFn, sigprocmask)
CILKPROF_REAL(BsdMaskFn, sigblock)
CILKPROF_REAL(BsdMaskFn, sigsetmask)
CILKPROF_REAL(SigwaitFn, sigwait)
CILKPROF_REAL(SigwaitinfoFn, sigwaitinfo)
CILKPROF_REAL(SigtimedwaitFn, sigtimedwait)
CILKPROF_REAL(SignalfdFn, signalfd)
CILKPROF_REAL(MutexFn, pthread_mutex_lock)
CILKPROF_REAL(MutexFn, pthread_mutex_trylock)
CILKPROF_REAL(MutexFn, pthread_mutex_unlock)
CILKPROF_REAL(MutexFn, pthread_mutex_destroy)
CILKPROF_REAL(MutexTimedFn, pthread_mutex_timedlock)
CILKPROF_REAL(MutexClockFn, pthread_mutex_clocklock)
CILKPROF_REAL(RwlockFn, pthread_rwlock_rdlock)
CILKPROF_REAL(RwlockFn, pthread_rwlock_wrlock)
CILKPROF_REAL(RwlockFn, pthread_rwlock_tryrdlock)
CILKPROF_REAL(RwlockFn, pthread_rwlock_trywrlock)
CILKPROF_REAL(RwlockFn, pthread_rwlock_unlock)
CILKPROF_REAL(RwlockTimedFn, pthread_rwlock_timedrdlock)
CILKPROF_REAL(RwlockTimedFn, pthread_rwlock_timedwrlock)
CILKPROF_REAL(RwlockClockFn, pthread_rwlock_clockrdlock)
CILKPROF_REAL(RwlockClockFn, pthread_rwlock_clockwrlock)
CILKPROF_REAL(SpinFn, pthread_spin_lock)
CILKPROF_REAL(SpinFn, pthread_spin_trylock)
CILKPROF_REAL(SpinFn, pthread_spin_unlock)
CILKPROF_REAL_COND(CondWaitFn, pthread_cond_wait)
CILKPROF_REAL_COND(CondTimedWaitFn, pthread_cond_timedwait)
CILKPROF_REAL_COND(CondClockWaitFn, pthread_cond_clockwait)
CILKPROF_REAL_COND(CondFn, pthread_cond_signal)
CILKPROF_REAL_COND(CondFn, pthread_cond_broadcast)

void ResolveAll() {
  pthread_create();
  pthread_exit();
  underscore_exit();
  sigaction();
  signal();
  sysv_signal();
  bsd_signal();
  execve();
  execv();
  execvp();
  execvpe();
  fexecve();
  dlopen();
  dlclose();
  pthread_sigmask();
  sigprocmask();
  sigblock();
  sigsetmask();
  sigwait();
  sigwaitinfo();
  sigtimedwait();
  signalfd();
  pthread_mutex_lock();
  pthread_mutex_trylock();
  pthread_mutex_unlock();
  pthread_mutex_destroy();
  pthread_mutex_timedlock();
  pthread_mutex_clocklock();
  pthread_rwlock_rdlock();
  pthread_rwlock_wrlock();
  pthread_rwlock_tryrdlock();
  pthread_rwlock_trywrlock();
  pthread_rwlock_unlock();
  pthread_rwlock_timedrdlock();
  pthread_rwlock_timedwrlock();
  pthread_rwlock_clockrdlock();
  pthread_rwlock_clockwrlock();
  pthread_spin_lock();
  pthread_spin_trylock();
  pthread_spin_unlock();
  pthread_cond_wait();
  pthread_cond_timedwait();
  pthread_cond_clockwait();
  pthread_cond_signal();
  pthread_cond_broadcast();
}

}  // namespace cilkprof::agent::real
