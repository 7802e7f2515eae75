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
}

}  // namespace cilkprof::agent::real
