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
// Locks (issue 14, locks/lock_calls.cc).
using MutexFn = int (*)(pthread_mutex_t*);
using MutexTimedFn = int (*)(pthread_mutex_t*, const struct timespec*);
using MutexClockFn = int (*)(pthread_mutex_t*, clockid_t, const struct timespec*);
using RwlockFn = int (*)(pthread_rwlock_t*);
using RwlockTimedFn = int (*)(pthread_rwlock_t*, const struct timespec*);
using RwlockClockFn = int (*)(pthread_rwlock_t*, clockid_t, const struct timespec*);
using SpinFn = int (*)(pthread_spinlock_t*);
using CondWaitFn = int (*)(pthread_cond_t*, pthread_mutex_t*);
using CondTimedWaitFn = int (*)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*);
using CondClockWaitFn = int (*)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const struct timespec*);
using CondFn = int (*)(pthread_cond_t*);

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
MutexFn pthread_mutex_lock();
MutexFn pthread_mutex_trylock();
MutexFn pthread_mutex_unlock();
MutexFn pthread_mutex_destroy();
MutexTimedFn pthread_mutex_timedlock();
MutexClockFn pthread_mutex_clocklock();
RwlockFn pthread_rwlock_rdlock();
RwlockFn pthread_rwlock_wrlock();
RwlockFn pthread_rwlock_tryrdlock();
RwlockFn pthread_rwlock_trywrlock();
RwlockFn pthread_rwlock_unlock();
RwlockTimedFn pthread_rwlock_timedrdlock();
RwlockTimedFn pthread_rwlock_timedwrlock();
RwlockClockFn pthread_rwlock_clockrdlock();
RwlockClockFn pthread_rwlock_clockwrlock();
SpinFn pthread_spin_lock();
SpinFn pthread_spin_trylock();
SpinFn pthread_spin_unlock();
// The condition variable functions of the current ABI (GLIBC_2.3.2; a plain dlsym may
// find the old compatibility versions).
CondWaitFn pthread_cond_wait();
CondTimedWaitFn pthread_cond_timedwait();
CondClockWaitFn pthread_cond_clockwait();
CondFn pthread_cond_signal();
CondFn pthread_cond_broadcast();

// Resolves all of them now (from the constructor, before other threads exist).
void ResolveAll();

}  // namespace cilkprof::agent::real
