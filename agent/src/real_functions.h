// The libc/libpthread/libdl functions the agent interposes, as found with
// dlsym(RTLD_NEXT). The agent's own code calls these, never the interposed names, so
// its own threads, timers and handlers are never mistaken for the program's.
#pragma once

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

namespace cilkprof::agent::real {

using PthreadCreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using PthreadExitFn = void (*)(void*);
using ExitFn = void (*)(int);
using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);
using SignalFn = sighandler_t (*)(int, sighandler_t);
using ForkFn = pid_t (*)();
using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvFn = int (*)(const char*, char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);
using DlopenFn = void* (*)(const char*, int);
using DlcloseFn = int (*)(void*);
using SigmaskFn = int (*)(int, const sigset_t*, sigset_t*);
using BsdMaskFn = int (*)(int);
using SigwaitFn = int (*)(const sigset_t*, int*);
using SigwaitinfoFn = int (*)(const sigset_t*, siginfo_t*);
using SigtimedwaitFn = int (*)(const sigset_t*, siginfo_t*, const struct timespec*);
using SignalfdFn = int (*)(int, const sigset_t*, int);

// Each resolves lazily on first use; never null (aborts with a message otherwise,
// since the process could not run its own call either).
PthreadCreateFn pthread_create();
PthreadExitFn pthread_exit();
ExitFn underscore_exit();  // _exit
SigactionFn sigaction();
SignalFn signal();
SignalFn sysv_signal();
SignalFn bsd_signal();
ExecveFn execve();
ExecvFn execv();
ExecvFn execvp();
ExecveFn execvpe();
FexecveFn fexecve();
DlopenFn dlopen();
DlcloseFn dlclose();
SigmaskFn pthread_sigmask();
SigmaskFn sigprocmask();
BsdMaskFn sigblock();
BsdMaskFn sigsetmask();
SigwaitFn sigwait();
SigwaitinfoFn sigwaitinfo();
SigtimedwaitFn sigtimedwait();
SignalfdFn signalfd();

// Resolves all of them now (from the constructor, before other threads exist).
void ResolveAll();

}  // namespace cilkprof::agent::real
