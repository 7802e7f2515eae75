// Spawn/sync semantics. Built three times (tests/runtime/CMakeLists.txt): with the
// default scheduler, with CILK_FORCE_STEAL=1 (every continuation resumed by another
// worker) and with one worker (serial order). Results must equal the serial elision.
#include <cilk/cilk.hpp>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cfenv>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

// Sanitized builds run ~10-50x slower: shrink the big cases, keep the shapes.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr long kScale = 20;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
constexpr long kScale = 20;
#else
constexpr long kScale = 1;
#endif
#else
constexpr long kScale = 1;
#endif

long SerialFib(int n) { return n < 2 ? n : SerialFib(n - 1) + SerialFib(n - 2); }

long Fib(int n) {
  if (n < 2) return n;
  long x = 0;
  cilk::scope s;
  s.spawn([&] { x = Fib(n - 1); });
  const long y = Fib(n - 2);
  s.sync();
  return x + y;
}

int Workers() {
  const char* text = std::getenv("CILK_NWORKERS");
  return text != nullptr ? std::atoi(text) : 0;
}

TEST(CilkSemantics, FibEqualsSerialElision) {
  for (int n : {0, 1, 2, 10, 18}) EXPECT_EQ(cilk::run([n] { return Fib(n); }), SerialFib(n)) << n;
}

TEST(CilkSemantics, FirstScopeStartsRuntimeWithoutRun) {
  long x = 0, y = 0;
  {
    cilk::scope s;
    s.spawn([&] { x = Fib(12); });
    y = Fib(11);
  }  // destructor syncs
  EXPECT_EQ(x, 144);
  EXPECT_EQ(y, 89);
}

TEST(CilkSemantics, NestedScopesSyncOnlyTheirOwnChildren) {
  std::atomic<int> inner_done{0};
  int outer_result = 0;
  cilk::run([&] {
    cilk::scope outer;
    outer.spawn([&] { outer_result = static_cast<int>(Fib(15)); });
    for (int round = 0; round < 3; ++round) {
      cilk::scope inner;
      for (int i = 0; i < 8; ++i) inner.spawn([&] { Fib(8); inner_done.fetch_add(1); });
      inner.sync();
      EXPECT_EQ(inner_done.load(), 8 * (round + 1));
    }
    outer.sync();
    EXPECT_EQ(outer_result, 610);
  });
}

TEST(CilkSemantics, ScopeCanSpawnAgainAfterSync) {
  cilk::run([] {
    cilk::scope s;
    long a = 0, b = 0;
    s.spawn([&] { a = Fib(10); });
    s.sync();
    EXPECT_EQ(a, 55);
    s.spawn([&] { b = Fib(11); });
    s.sync();
    EXPECT_EQ(b, 89);
  });
}

TEST(CilkSemantics, ChildExceptionIsRethrownAtSync) {
  bool continuation_ran = false;
  EXPECT_THROW(cilk::run([&] {
                 cilk::scope s;
                 s.spawn([] { throw std::runtime_error("child failed"); });
                 continuation_ran = true;
                 s.sync();
               }),
               std::runtime_error);
  EXPECT_TRUE(continuation_ran);
}

TEST(CilkSemantics, DestructorRethrowsChildException) {
  try {
    cilk::run([] {
      cilk::scope s;
      s.spawn([] { Fib(5); });
      s.spawn([] { throw std::invalid_argument("from a child"); });
    });
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "from a child");
  }
}

TEST(CilkSemantics, ExceptionDeepInTheTreeReachesTheRoot) {
  auto thrower = [](auto& self, int depth) -> void {
    cilk::scope s;
    if (depth == 0) throw std::out_of_range("leaf");
    s.spawn([&] { self(self, depth - 1); });
    s.spawn([] { Fib(6); });
    s.sync();
  };
  EXPECT_THROW(cilk::run([&] { thrower(thrower, 6); }), std::out_of_range);
  // The runtime is still usable afterwards.
  EXPECT_EQ(cilk::run([] { return Fib(15); }), 610);
}

TEST(CilkSemantics, EnteringThreadContinuesAfterOutermostSync) {
  const std::thread::id me = std::this_thread::get_id();
  for (int i = 0; i < 20; ++i) {
    cilk::run([&] {
      cilk::scope s;
      s.spawn([] { Fib(12); });
      Fib(12);
      s.sync();
    });
    EXPECT_EQ(std::this_thread::get_id(), me);
  }
  {
    cilk::scope s;
    s.spawn([] { Fib(12); });
    Fib(12);
    s.sync();
    EXPECT_EQ(std::this_thread::get_id(), me);
  }
}

TEST(CilkSemantics, RepeatedRun) {
  for (int i = 0; i < 200 / kScale + 5; ++i) ASSERT_EQ(cilk::run([] { return Fib(10); }), 55) << i;
}

TEST(CilkSemantics, RunInsideRuntimeJustCalls) {
  EXPECT_EQ(cilk::run([] { return cilk::run([] { return Fib(12); }); }), 144);
}

TEST(CilkSemantics, LvalueAndFunctionPointerCallables) {
  static std::atomic<int> calls{0};
  struct Counter {
    void operator()() const { calls.fetch_add(1); }
  };
  cilk::run([] {
    Counter counter;
    cilk::scope s;
    s.spawn(counter);  // copied
    s.spawn(+[] { calls.fetch_add(10); });
    s.spawn([v = std::vector<int>(100, 1)] { calls.fetch_add(std::accumulate(v.begin(), v.end(), 0)); });
  });
  EXPECT_EQ(calls.load(), 111);
}

// A callable whose copy throws: the child does not run, the sync rethrows, and the
// scope's other children are unaffected.
TEST(CilkSemantics, CallableWhoseCopyThrowsIsNotRun) {
  static std::atomic<int> runs{0};
  struct CopyThrows {
    CopyThrows() = default;
    CopyThrows(const CopyThrows&) { throw std::length_error("copy"); }
    void operator()() const { runs.fetch_add(1); }
  };
  std::atomic<int> others{0};
  EXPECT_THROW(cilk::run([&] {
                 const CopyThrows callable;
                 cilk::scope s;
                 s.spawn([&] { others.fetch_add(1); });
                 s.spawn(callable);  // copied: throws on the child's fiber
                 s.spawn([&] { others.fetch_add(1); });
                 s.sync();
               }),
               std::length_error);
  EXPECT_EQ(runs.load(), 0);
  EXPECT_EQ(others.load(), 2);
}

// A callable whose destructor throws: the child ran, the sync rethrows.
TEST(CilkSemantics, CallableWhoseDestructorThrowsIsRethrownAtSync) {
  static std::atomic<int> runs{0};
  struct DestructorThrows {
    DestructorThrows() = default;
    DestructorThrows(DestructorThrows&& other) noexcept : armed(other.armed) { other.armed = false; }
    ~DestructorThrows() noexcept(false) {
      if (armed) throw std::domain_error("destructor");
    }
    void operator()() const { runs.fetch_add(1); }
    bool armed = true;
  };
  EXPECT_THROW(cilk::run([] {
                 cilk::scope s;
                 s.spawn([] { runs.fetch_add(10); });
                 s.spawn(DestructorThrows{});  // moved into the child, whose copy throws at its end
                 s.sync();
               }),
               std::domain_error);
  EXPECT_EQ(runs.load(), 11);
}

// Callables the entry frame cannot keep in its fixed buffer: large (copied to the
// heap) and over-aligned ones. Each child checks its own copy.
TEST(CilkSemantics, LargeAndOverAlignedCallables) {
  struct alignas(64) Aligned {
    long value;
  };
  std::atomic<long> sum{0};
  std::atomic<int> misaligned{0};
  cilk::run([&] {
    for (int round = 0; round < 20; ++round) {
      cilk::scope s;
      std::array<long, 40> big{};
      big.fill(round);
      s.spawn([big, &sum] { sum.fetch_add(std::accumulate(big.begin(), big.end(), 0L)); });
      const Aligned aligned{round};
      s.spawn([aligned, &sum, &misaligned] {
        if (reinterpret_cast<std::uintptr_t>(&aligned) % 64 != 0) misaligned.fetch_add(1);
        sum.fetch_add(aligned.value);
      });
      s.sync();
    }
  });
  EXPECT_EQ(sum.load(), 41L * (19 * 20 / 2));
  EXPECT_EQ(misaligned.load(), 0);
}

// The floating-point control state (here the rounding mode) the entering thread had
// is the one stolen work runs with, although the pool threads started with another.
TEST(CilkSemantics, StolenWorkRunsWithTheEnteringThreadsRoundingMode) {
  cilk::run([] {});  // the pool threads exist, with the default rounding mode
  const int saved = std::fegetround();
  ASSERT_EQ(std::fesetround(FE_UPWARD), 0);
  std::atomic<int> wrong{0};
  const auto check = [&wrong] {
    if (std::fegetround() != FE_UPWARD) wrong.fetch_add(1);
  };
  cilk::run([&] {
    for (int round = 0; round < 50; ++round) {
      cilk::scope s;
      s.spawn(check);
      check();  // the continuation: resumed by the other worker under CILK_FORCE_STEAL
      s.sync();
      check();
    }
    cilk::parallel_for(0, 1000, 1, [&](long) { check(); });
  });
  std::fesetround(saved);
  EXPECT_EQ(wrong.load(), 0);
}

// Deep ordinary recursion inside a spawned child runs on the fiber's stack.
int DeepRecursion(int depth) {
  volatile char pad[64];
  pad[0] = static_cast<char>(depth);
  if (depth == 0) return pad[0];
  return DeepRecursion(depth - 1) + 1 + pad[0] * 0;
}

TEST(CilkSemantics, DeepRecursionInsideFibers) {
  int a = 0, b = 0;
  cilk::run([&] {
    cilk::scope s;
    s.spawn([&] { a = DeepRecursion(3000); });
    b = DeepRecursion(3000);
  });
  EXPECT_EQ(a, 3000);
  EXPECT_EQ(b, 3000);
}

// Deep spawn nesting: stack memory follows workers x depth, not the spawn count.
long SpawnChain(int depth) {
  if (depth == 0) return 0;
  long below = 0;
  cilk::scope s;
  s.spawn([&] { below = SpawnChain(depth - 1); });
  s.sync();
  return below + 1;
}

TEST(CilkSemantics, DeepSpawnNesting) {
  const int depth = static_cast<int>(2000 / kScale);
  EXPECT_EQ(cilk::run([depth] { return SpawnChain(depth); }), depth);
}

// A spawn chain deeper than the stack pool keeps (per worker 64, shared 64 x workers
// + 64): releasing it unmaps stacks whose loops were suspended with frames on them,
// and the next chain maps stacks again, typically at the same addresses. Each round
// must run on clean stacks (under ASan: no redzones left over from those frames).
TEST(CilkSemantics, StacksUnmappedAndMappedAgain) {
  constexpr int kDepth = 400;  // > 64 x 2 + (64 x 2 + 64) with two workers
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(cilk::run([] { return SpawnChain(kDepth); }), kDepth) << "round " << round;
  }
}

void CheckVisitsEachIndexOnce(long begin, long end, long grain) {
  const long n = end > begin ? end - begin : 0;
  std::vector<std::atomic<int>> visits(static_cast<std::size_t>(n));
  for (auto& v : visits) v.store(0, std::memory_order_relaxed);
  std::atomic<long> outside{0};
  auto body = [&](long i) {
    if (i < begin || i >= end) {
      outside.fetch_add(1);
      return;
    }
    visits[static_cast<std::size_t>(i - begin)].fetch_add(1, std::memory_order_relaxed);
  };
  if (grain == 0) {
    cilk::parallel_for(begin, end, body);
  } else {
    cilk::parallel_for(begin, end, grain, body);
  }
  EXPECT_EQ(outside.load(), 0);
  for (long i = 0; i < n; ++i) {
    ASSERT_EQ(visits[static_cast<std::size_t>(i)].load(), 1)
        << "index " << begin + i << " of [" << begin << "," << end << ") grain " << grain;
  }
}

TEST(CilkParallelFor, EveryIndexExactlyOnce) {
  const long ranges[][2] = {{0, 0}, {5, 5}, {7, 3}, {0, 1}, {0, 2}, {0, 3}, {-5, 6}, {0, 1001}, {13, 9970}, {-100000 / kScale, 100001 / kScale}};
  for (const auto& r : ranges) {
    for (long grain : {0L, 1L, 2L, 3L, 7L, 64L, 1000L, 1L << 20}) CheckVisitsEachIndexOnce(r[0], r[1], grain);
  }
}

TEST(CilkParallelFor, HugeRange) { CheckVisitsEachIndexOnce(1L << 40, (1L << 40) + 3'000'000 / kScale, 0); }

TEST(CilkParallelFor, NestedInsideSpawns) {
  std::atomic<long> sum{0};
  cilk::run([&] {
    cilk::scope s;
    for (int k = 0; k < 4; ++k) {
      s.spawn([&] { cilk::parallel_for(0, 1000, [&](long i) { sum.fetch_add(i, std::memory_order_relaxed); }); });
    }
  });
  EXPECT_EQ(sum.load(), 4L * 999 * 1000 / 2);
}

// With one worker the program runs in exactly the order of its serial elision.
TEST(CilkSemantics, OneWorkerRunsInSerialOrder) {
  if (Workers() != 1) GTEST_SKIP() << "needs CILK_NWORKERS=1";
  std::vector<int> order;
  auto tree = [&](auto& self, int depth, int id) -> void {
    order.push_back(id);
    if (depth == 0) return;
    cilk::scope s;
    s.spawn([&] { self(self, depth - 1, id * 2); });
    order.push_back(-id);
    s.spawn([&] { self(self, depth - 1, id * 2 + 1); });
    s.sync();
    order.push_back(1000 + id);
  };
  std::vector<int> expected;
  auto serial = [&](auto& self, int depth, int id) -> void {
    expected.push_back(id);
    if (depth == 0) return;
    self(self, depth - 1, id * 2);
    expected.push_back(-id);
    self(self, depth - 1, id * 2 + 1);
    expected.push_back(1000 + id);
  };
  cilk::run([&] { tree(tree, 6, 1); });
  serial(serial, 6, 1);
  EXPECT_EQ(order, expected);
}

}  // namespace
