// A profile that is hard for the analysis side: two threads, each recursing 60 deep
// through four mutually recursive functions chosen at random at every level, so that
// almost every sample has a calling context of its own (the third case of the
// analysis benchmark, bench/analysis/run.sh).
//
//   bench_mutual_recursion [SECONDS]   (default 3)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

constexpr int kDepth = 60;

struct Rng {
  uint64_t state;
  uint64_t operator()() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};

volatile uint64_t g_sink;

__attribute__((noinline)) void Leaf(Rng& rng) {
  uint64_t x = rng();
  for (int i = 0; i < 20000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  g_sink = x;
}

extern volatile uint64_t g_calls[4];
void F0(int depth, Rng& rng);
void F1(int depth, Rng& rng);
void F2(int depth, Rng& rng);
void F3(int depth, Rng& rng);

// The next frame: one of the four, at random; the barrier keeps the call a call (no
// tail call), so every level is a frame of its own.
inline void Next(int depth, Rng& rng) {
  if (depth == 0) {
    Leaf(rng);
    return;
  }
  switch (rng() & 3) {
    case 0: F0(depth - 1, rng); break;
    case 1: F1(depth - 1, rng); break;
    case 2: F2(depth - 1, rng); break;
    default: F3(depth - 1, rng); break;
  }
  asm volatile("" ::: "memory");
}

// Each counts its calls in a counter of its own: identical bodies would be folded into
// one function by the compiler (identical code folding), and the paths with them.
volatile uint64_t g_calls[4];

__attribute__((noinline)) void F0(int depth, Rng& rng) { g_calls[0] = g_calls[0] + 1; Next(depth, rng); }
__attribute__((noinline)) void F1(int depth, Rng& rng) { g_calls[1] = g_calls[1] + 1; Next(depth, rng); }
__attribute__((noinline)) void F2(int depth, Rng& rng) { g_calls[2] = g_calls[2] + 1; Next(depth, rng); }
__attribute__((noinline)) void F3(int depth, Rng& rng) { g_calls[3] = g_calls[3] + 1; Next(depth, rng); }

void Work(uint64_t seed, std::chrono::steady_clock::time_point end) {
  Rng rng{seed};
  while (std::chrono::steady_clock::now() < end) F0(kDepth, rng);
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                            std::chrono::duration<double>(seconds));
  std::thread other(Work, 0x9E3779B97F4A7C15ull, end);
  Work(0xD1B54A32D192ED03ull, end);
  other.join();
  std::printf("mutual recursion: %.1f s on 2 threads, %d deep\n", seconds, kDepth);
  return 0;
}
