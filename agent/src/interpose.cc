// The functions libcilkprof_agent.so exports and so interposes (everything else in
// the library has hidden visibility). Each does the agent's part and then calls the
// real function found with dlsym(RTLD_NEXT); with the agent inactive each is a plain
// pass-through.
//
//   pthread_create        wrap the start routine: register the new thread (CCT, sample
//                         source) before it runs, unregister when it returns
//   pthread_exit          unregister first (a key destructor also covers cancellation)
//   sigaction, signal,    the program claiming the sampling signal moves the agent to
//   sysv_signal,          another one; SIGSEGV/SIGBUS go to the unwinder's fault guard
//   bsd_signal            as chained handlers so that the guard stays first; the other
//                         signals the program may die of keep the agent's handler in
//                         front of the program's, for the last flush (fatal_signals.h)
//   execve, execv, execvp, execvpe, execl, execlp, execle, fexecve
//                         flush and say Goodbye("exec") first: the image that is
//                         replaced keeps a complete profile; on failure, carry on
//   _exit, _Exit          the program ends without atexit handlers (a shell's `exit`,
//                         a child after fork, a signal handler): the flusher makes the
//                         final flush while the caller waits, boundedly (agent.cc)
//   dlclose               flush before the library is unmapped, so every pending node
//                         in it is resolved to (module, offset) while it still can be
//   pthread_sigmask, sigprocmask, sigblock, sigsetmask
//                         the sampling signal cannot be blocked, like SIGKILL: it is
//                         taken out of the sets the program blocks (and of its
//                         handlers' sa_mask, in sigaction), so no thread stops being
//                         sampled (signal_mask.h)
//   sigwait, sigwaitinfo, sigtimedwait, signalfd
//                         the sampling signal is taken out of the sets the program
//                         waits for, so it never receives a sample as its own signal
// fork is handled with pthread_atfork (agent.cc). dlopen is not interposed: glibc
// looks up the caller's RUNPATH, and the agent would become the caller; new libraries
// are noticed through the loader's load counters instead (module_table.h).
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "agent_state.h"
#include "fatal_signals.h"
#include "real_functions.h"
#include "signal_mask.h"

#define CILKPROF_EXPORT extern "C" __attribute__((visibility("default")))

using namespace cilkprof::agent;

namespace {

struct StartArgs {
  void* (*routine)(void*);
  void* arg;
  uint32_t thread_index;
};

void* ThreadTrampoline(void* opaque) {
  StartArgs args = *static_cast<StartArgs*>(opaque);
  free(opaque);
  RegisterCurrentThread(args.thread_index);
  void* result = args.routine(args.arg);
  UnregisterCurrentThread();
  return result;
}

// Runs `exec` with the agent's connection closed first; on failure, resumes profiling.
template <typename Exec>
int ExecWithAgent(Exec exec) {
  const bool stopped = PrepareForExec();
  const int rc = exec();
  const int saved_errno = errno;
  if (stopped) ResumeAfterFailedExec();
  errno = saved_errno;
  return rc;
}

// The program's sigaction, to whichever part of the agent owns the signal.
int ProgramSigaction(int signo, const struct sigaction* act, struct sigaction* old, const void* caller) {
  if (WatchesFatalSignal(signo) && !CalledFromAgent(caller)) return FatalSignalSigaction(signo, act, old);
  return InterposedSigaction(signo, act, old, caller);
}

bool RoutedThroughSigaction(int signo, const void* caller) {
  return AgentOwnsSignal(signo, caller) || (WatchesFatalSignal(signo) && !CalledFromAgent(caller));
}

sighandler_t SignalThroughSigaction(int signo, sighandler_t handler, int flags, bool mask_self,
                                    const void* caller) {
  struct sigaction sa = {}, old = {};
  sa.sa_handler = handler;
  sa.sa_flags = flags;
  sigemptyset(&sa.sa_mask);
  if (mask_self) sigaddset(&sa.sa_mask, signo);
  if (ProgramSigaction(signo, &sa, &old, caller) != 0) return SIG_ERR;
  return old.sa_handler;
}

// Collects the variadic arguments of execl* into an argv array on the stack.
#define CILKPROF_COLLECT_ARGV(first, argv, extra)                       \
  va_list ap;                                                           \
  va_start(ap, first);                                                  \
  size_t argc = 1;                                                      \
  {                                                                     \
    va_list count;                                                      \
    va_copy(count, ap);                                                 \
    while (va_arg(count, char*) != nullptr) ++argc;                     \
    va_end(count);                                                      \
  }                                                                     \
  char** argv = static_cast<char**>(alloca((argc + 1) * sizeof(char*))); \
  argv[0] = const_cast<char*>(first);                                   \
  for (size_t i = 1; i <= argc; ++i) argv[i] = va_arg(ap, char*);       \
  extra;                                                                \
  va_end(ap)

}  // namespace

CILKPROF_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                   void* (*routine)(void*), void* arg) {
  if (!AgentActive()) return real::pthread_create()(thread, attr, routine, arg);
  auto* args = static_cast<StartArgs*>(malloc(sizeof(StartArgs)));
  if (args == nullptr) return real::pthread_create()(thread, attr, routine, arg);
  *args = StartArgs{routine, arg, TakeThreadIndex()};
  const int rc = real::pthread_create()(thread, attr, ThreadTrampoline, args);
  if (rc != 0) free(args);
  return rc;
}

CILKPROF_EXPORT void pthread_exit(void* value) {
  UnregisterCurrentThread();
  real::pthread_exit()(value);
  __builtin_unreachable();
}

CILKPROF_EXPORT void _exit(int status) {
  FinishBeforeUnderscoreExit();
  real::underscore_exit()(status);
  __builtin_unreachable();
}

CILKPROF_EXPORT void _Exit(int status) {
  FinishBeforeUnderscoreExit();
  real::underscore_exit()(status);
  __builtin_unreachable();
}

CILKPROF_EXPORT int sigaction(int signo, const struct sigaction* act, struct sigaction* old) {
  return ProgramSigaction(signo, act, old, __builtin_return_address(0));
}

CILKPROF_EXPORT sighandler_t signal(int signo, sighandler_t handler) {
  if (!RoutedThroughSigaction(signo, __builtin_return_address(0))) return real::signal()(signo, handler);
  return SignalThroughSigaction(signo, handler, SA_RESTART, true, __builtin_return_address(0));  // BSD semantics
}

CILKPROF_EXPORT sighandler_t bsd_signal(int signo, sighandler_t handler) {
  if (!RoutedThroughSigaction(signo, __builtin_return_address(0))) return real::bsd_signal()(signo, handler);
  return SignalThroughSigaction(signo, handler, SA_RESTART, true, __builtin_return_address(0));
}

CILKPROF_EXPORT sighandler_t sysv_signal(int signo, sighandler_t handler) {
  if (!RoutedThroughSigaction(signo, __builtin_return_address(0))) return real::sysv_signal()(signo, handler);
  return SignalThroughSigaction(signo, handler, SA_RESETHAND | SA_NODEFER, false, __builtin_return_address(0));
}

CILKPROF_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  return ExecWithAgent([&] { return real::execve()(path, argv, envp); });
}

CILKPROF_EXPORT int execv(const char* path, char* const argv[]) {
  return ExecWithAgent([&] { return real::execv()(path, argv); });
}

CILKPROF_EXPORT int execvp(const char* file, char* const argv[]) {
  return ExecWithAgent([&] { return real::execvp()(file, argv); });
}

CILKPROF_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return ExecWithAgent([&] { return real::execvpe()(file, argv, envp); });
}

CILKPROF_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  return ExecWithAgent([&] { return real::fexecve()(fd, argv, envp); });
}

CILKPROF_EXPORT int execl(const char* path, const char* arg0, ...) {
  CILKPROF_COLLECT_ARGV(arg0, argv, (void)0);
  return execv(path, argv);
}

CILKPROF_EXPORT int execlp(const char* file, const char* arg0, ...) {
  CILKPROF_COLLECT_ARGV(arg0, argv, (void)0);
  return execvp(file, argv);
}

CILKPROF_EXPORT int execle(const char* path, const char* arg0, ...) {
  char* const* envp = nullptr;
  CILKPROF_COLLECT_ARGV(arg0, argv, envp = va_arg(ap, char* const*));
  return execve(path, argv, envp);
}

CILKPROF_EXPORT int dlclose(void* handle) {
  FlushForDlclose();
  tls_in_loader++;
  const int rc = real::dlclose()(handle);
  tls_in_loader--;
  AfterDlclose();
  return rc;
}

CILKPROF_EXPORT int pthread_sigmask(int how, const sigset_t* set, sigset_t* old) {
  sigset_t scratch;
  return real::pthread_sigmask()(how, ProgramMaskRequest(how, set, &scratch, __builtin_return_address(0)),
                                 old);
}

CILKPROF_EXPORT int sigprocmask(int how, const sigset_t* set, sigset_t* old) {
  sigset_t scratch;
  return real::sigprocmask()(how, ProgramMaskRequest(how, set, &scratch, __builtin_return_address(0)),
                             old);
}

CILKPROF_EXPORT int sigblock(int mask) {
  return real::sigblock()(ProgramBsdMask(mask, __builtin_return_address(0)));
}

CILKPROF_EXPORT int sigsetmask(int mask) {
  return real::sigsetmask()(ProgramBsdMask(mask, __builtin_return_address(0)));
}

CILKPROF_EXPORT int sigwait(const sigset_t* set, int* signo) {
  sigset_t scratch;
  return real::sigwait()(ProgramWaitSet(set, &scratch, __builtin_return_address(0)), signo);
}

CILKPROF_EXPORT int sigwaitinfo(const sigset_t* set, siginfo_t* info) {
  sigset_t scratch;
  return real::sigwaitinfo()(ProgramWaitSet(set, &scratch, __builtin_return_address(0)), info);
}

CILKPROF_EXPORT int sigtimedwait(const sigset_t* set, siginfo_t* info, const struct timespec* timeout) {
  sigset_t scratch;
  return real::sigtimedwait()(ProgramWaitSet(set, &scratch, __builtin_return_address(0)), info,
                              timeout);
}

CILKPROF_EXPORT int signalfd(int fd, const sigset_t* set, int flags) {
  sigset_t scratch;
  return real::signalfd()(fd, ProgramWaitSet(set, &scratch, __builtin_return_address(0)), flags);
}
