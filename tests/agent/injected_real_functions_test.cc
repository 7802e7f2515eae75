// An agent dlopen()ed into a process (as `cilkprof attach` injects it: RTLD_NOW, not
// global) must reach libc's functions from its interposers: real_functions.h looks
// them up with dlsym(RTLD_NEXT), and were that to find the agent's own definitions,
// every redirected call (control/injected_interposition.h) would recurse until the
// stack ran out. Each interposer of the redirected list is called here through the
// agent's own handle, with the agent inactive, and must behave as libc's function.
#include <dlfcn.h>
#include <errno.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <time.h>

#include <string>

namespace {

class InjectedAgent : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    handle_ = dlopen(CILKPROF_AGENT_PATH, RTLD_NOW);
    ASSERT_NE(handle_, nullptr) << dlerror();
    Dl_info info;
    ASSERT_NE(dladdr(dlsym(handle_, "cilkprof_agent_start_injected"), &info), 0);
    agent_base_ = info.dli_fbase;
  }

  // The agent's own definition of `name` (not libc's: the handle's lookup starts with
  // the agent itself).
  template <typename Fn>
  static Fn Ours(const char* name) {
    void* fn = dlsym(handle_, name);
    EXPECT_NE(fn, nullptr) << name;
    Dl_info info;
    EXPECT_NE(dladdr(fn, &info), 0);
    EXPECT_EQ(info.dli_fbase, agent_base_) << name << " is not the agent's";
    EXPECT_NE(fn, dlsym(RTLD_DEFAULT, name)) << name;
    return reinterpret_cast<Fn>(fn);
  }

  static void* handle_;
  static void* agent_base_;
};

void* InjectedAgent::handle_ = nullptr;
void* InjectedAgent::agent_base_ = nullptr;

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
using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using ExitFn = void (*)(void*);

struct timespec Past() { return timespec{1, 0}; }

TEST_F(InjectedAgent, MutexInterposersReachLibc) {
  auto lock = Ours<MutexFn>("pthread_mutex_lock");
  auto trylock = Ours<MutexFn>("pthread_mutex_trylock");
  auto timedlock = Ours<MutexTimedFn>("pthread_mutex_timedlock");
  auto clocklock = Ours<MutexClockFn>("pthread_mutex_clocklock");
  auto unlock = Ours<MutexFn>("pthread_mutex_unlock");
  auto destroy = Ours<MutexFn>("pthread_mutex_destroy");
  pthread_mutex_t m;
  pthread_mutex_init(&m, nullptr);
  EXPECT_EQ(lock(&m), 0);
  EXPECT_EQ(trylock(&m), EBUSY);
  const struct timespec past = Past();
  EXPECT_EQ(timedlock(&m, &past), ETIMEDOUT);  // held: the contended path, then a timeout
  EXPECT_EQ(clocklock(&m, CLOCK_MONOTONIC, &past), ETIMEDOUT);
  EXPECT_EQ(unlock(&m), 0);
  EXPECT_EQ(trylock(&m), 0);
  EXPECT_EQ(unlock(&m), 0);
  EXPECT_EQ(timedlock(&m, &past), 0);
  EXPECT_EQ(unlock(&m), 0);
  EXPECT_EQ(destroy(&m), 0);
}

TEST_F(InjectedAgent, RwlockInterposersReachLibc) {
  auto rdlock = Ours<RwlockFn>("pthread_rwlock_rdlock");
  auto wrlock = Ours<RwlockFn>("pthread_rwlock_wrlock");
  auto tryrdlock = Ours<RwlockFn>("pthread_rwlock_tryrdlock");
  auto trywrlock = Ours<RwlockFn>("pthread_rwlock_trywrlock");
  auto timedrdlock = Ours<RwlockTimedFn>("pthread_rwlock_timedrdlock");
  auto timedwrlock = Ours<RwlockTimedFn>("pthread_rwlock_timedwrlock");
  auto clockrdlock = Ours<RwlockClockFn>("pthread_rwlock_clockrdlock");
  auto clockwrlock = Ours<RwlockClockFn>("pthread_rwlock_clockwrlock");
  auto unlock = Ours<RwlockFn>("pthread_rwlock_unlock");
  pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
  const struct timespec past = Past();
  EXPECT_EQ(rdlock(&l), 0);
  EXPECT_EQ(tryrdlock(&l), 0);
  EXPECT_EQ(trywrlock(&l), EBUSY);
  EXPECT_EQ(timedwrlock(&l, &past), ETIMEDOUT);
  EXPECT_EQ(clockwrlock(&l, CLOCK_MONOTONIC, &past), ETIMEDOUT);
  EXPECT_EQ(unlock(&l), 0);
  EXPECT_EQ(unlock(&l), 0);
  EXPECT_EQ(wrlock(&l), 0);
  // glibc's answer to a read lock by the writer itself.
  EXPECT_EQ(timedrdlock(&l, &past), EDEADLK);
  EXPECT_EQ(clockrdlock(&l, CLOCK_MONOTONIC, &past), EDEADLK);
  EXPECT_EQ(unlock(&l), 0);
  EXPECT_EQ(timedrdlock(&l, &past), 0);
  EXPECT_EQ(unlock(&l), 0);
  EXPECT_EQ(clockwrlock(&l, CLOCK_MONOTONIC, &past), 0);
  EXPECT_EQ(unlock(&l), 0);
}

TEST_F(InjectedAgent, SpinInterposersReachLibc) {
  auto lock = Ours<SpinFn>("pthread_spin_lock");
  auto trylock = Ours<SpinFn>("pthread_spin_trylock");
  auto unlock = Ours<SpinFn>("pthread_spin_unlock");
  pthread_spinlock_t s;
  pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
  EXPECT_EQ(lock(&s), 0);
  EXPECT_EQ(trylock(&s), EBUSY);
  EXPECT_EQ(unlock(&s), 0);
  EXPECT_EQ(trylock(&s), 0);
  EXPECT_EQ(unlock(&s), 0);
  pthread_spin_destroy(&s);
}

struct Handshake {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
  bool ready = false;
  MutexFn lock, unlock;
  CondFn signal, broadcast;
  ExitFn exit;
};

void* Signaller(void* opaque) {
  auto* h = static_cast<Handshake*>(opaque);
  h->lock(&h->mu);
  h->ready = true;
  h->signal(&h->cv);
  h->broadcast(&h->cv);
  h->unlock(&h->mu);
  h->exit(opaque);  // the agent's pthread_exit, with the agent inactive
  return nullptr;
}

TEST_F(InjectedAgent, CondAndThreadInterposersReachLibc) {
  Handshake h;
  h.lock = Ours<MutexFn>("pthread_mutex_lock");
  h.unlock = Ours<MutexFn>("pthread_mutex_unlock");
  h.signal = Ours<CondFn>("pthread_cond_signal");
  h.broadcast = Ours<CondFn>("pthread_cond_broadcast");
  h.exit = Ours<ExitFn>("pthread_exit");
  auto wait = Ours<CondWaitFn>("pthread_cond_wait");
  auto timedwait = Ours<CondTimedWaitFn>("pthread_cond_timedwait");
  auto clockwait = Ours<CondClockWaitFn>("pthread_cond_clockwait");
  auto create = Ours<CreateFn>("pthread_create");
  const struct timespec past = Past();
  h.lock(&h.mu);
  EXPECT_EQ(timedwait(&h.cv, &h.mu, &past), ETIMEDOUT);
  EXPECT_EQ(clockwait(&h.cv, &h.mu, CLOCK_MONOTONIC, &past), ETIMEDOUT);
  pthread_t thread;
  ASSERT_EQ(create(&thread, nullptr, Signaller, &h), 0);
  while (!h.ready) ASSERT_EQ(wait(&h.cv, &h.mu), 0);
  h.unlock(&h.mu);
  void* result = nullptr;
  ASSERT_EQ(pthread_join(thread, &result), 0);
  EXPECT_EQ(result, &h);
}

}  // namespace
