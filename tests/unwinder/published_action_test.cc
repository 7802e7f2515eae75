// PublishedAction (published_action.h): the lock-free signal action that the fault
// guard and the agent keep for the program. Every read is one whole action written by
// one writer, also when writers and readers run in signal handlers that interrupt
// other writers on the same thread; a compare-exchange fails once the version moved.
#include "cilkprof/unwinder/published_action.h"

#include <pthread.h>
#include <signal.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace cilkprof::unwinder {
namespace {

// Action number n: handler, flags and every mask word derived from n, so that an
// action put together from two writes is recognized.
struct sigaction Numbered(uintptr_t n) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = reinterpret_cast<void (*)(int)>(0x1000 + n);
  sa.sa_flags = static_cast<int>(n & 0x7fff);
  auto* words = reinterpret_cast<unsigned long*>(&sa.sa_mask);
  for (size_t i = 0; i < sizeof sa.sa_mask / sizeof *words; ++i) words[i] = n * 0x9E3779B97F4A7C15ull + i;
  return sa;
}

bool Same(const struct sigaction& a, const struct sigaction& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool Whole(const struct sigaction& sa) {
  if (sa.sa_handler == SIG_DFL) return sa.sa_flags == 0;  // never stored yet
  const uintptr_t n = reinterpret_cast<uintptr_t>(sa.sa_handler) - 0x1000;
  return Same(sa, Numbered(n));
}

TEST(PublishedAction, StartsAsTheDefaultActionAtVersionZero) {
  static PublishedAction action;  // constant-initialized, as a static
  struct sigaction sa;
  EXPECT_EQ(action.Load(&sa), PublishedAction::kNeverStored);
  EXPECT_EQ(sa.sa_handler, SIG_DFL);
  EXPECT_EQ(sa.sa_flags, 0);
}

TEST(PublishedAction, ExchangeReturnsThePreviousActionAndANewVersion) {
  PublishedAction action;
  struct sigaction previous;
  const uint64_t v1 = action.Exchange(Numbered(1), &previous);
  EXPECT_EQ(previous.sa_handler, SIG_DFL);
  const uint64_t v2 = action.Exchange(Numbered(2), &previous);
  EXPECT_NE(v1, v2);
  EXPECT_TRUE(Same(previous, Numbered(1)));
  struct sigaction now;
  EXPECT_EQ(action.Load(&now), v2);
  EXPECT_TRUE(Same(now, Numbered(2)));
}

TEST(PublishedAction, CompareExchangeOnlyFromTheExpectedVersion) {
  PublishedAction action;
  const uint64_t v1 = action.Exchange(Numbered(1), nullptr);
  const uint64_t v2 = action.Exchange(Numbered(2), nullptr);
  EXPECT_FALSE(action.CompareExchange(v1, Numbered(3)));  // moved on since v1
  struct sigaction now;
  action.Load(&now);
  EXPECT_TRUE(Same(now, Numbered(2)));
  EXPECT_TRUE(action.CompareExchange(v2, Numbered(4)));
  action.Load(&now);
  EXPECT_TRUE(Same(now, Numbered(4)));
}

// Writers and readers on four threads, each also interrupted by a signal whose
// handler writes and reads, from other threads, as fast as they can be sent.
PublishedAction g_shared;
std::atomic<uint64_t> g_torn{0};
std::atomic<uint64_t> g_in_handler{0};

void WriteAndRead(uintptr_t n) {
  struct sigaction previous, now;
  g_shared.Exchange(Numbered(n), &previous);
  if (!Whole(previous)) g_torn.fetch_add(1);
  g_shared.Load(&now);
  if (!Whole(now)) g_torn.fetch_add(1);
}

void Handler(int) {
  WriteAndRead(100000 + g_in_handler.fetch_add(1));
}

TEST(PublishedAction, NoReadIsTornUnderWritersInThreadsAndHandlers) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = Handler;
  sigemptyset(&sa.sa_mask);
  struct sigaction old;
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  constexpr int kThreads = 4;
  constexpr uintptr_t kRounds = 100000;
  std::atomic<int> done{0};
  std::atomic<bool> release{false};
  std::vector<std::thread> workers;
  std::vector<pthread_t> handles(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([t, &done, &release] {
      for (uintptr_t i = 0; i < kRounds; ++i) WriteAndRead(1 + t * kRounds + i);
      done.fetch_add(1);
      while (!release.load()) std::this_thread::yield();
    });
    handles[t] = workers.back().native_handle();
  }
  uint64_t sent = 0;
  while (done.load() < kThreads) {
    pthread_kill(handles[sent++ % kThreads], SIGUSR1);
  }
  release.store(true);
  for (std::thread& w : workers) w.join();
  sigaction(SIGUSR1, &old, nullptr);
  EXPECT_EQ(g_torn.load(), 0u);
  EXPECT_GT(g_in_handler.load(), 0u);
  struct sigaction last;
  g_shared.Load(&last);
  EXPECT_TRUE(Whole(last));
}

}  // namespace
}  // namespace cilkprof::unwinder
