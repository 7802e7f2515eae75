// How long the agent's sampling handler stops a program whose calling-context tree
// grows past a million nodes (issue 12, row 9a; docs/PERFORMANCE.md, "CCT growth").
//
// Random 100-deep recursion through 16 functions, so that almost every sample brings
// a new path of ~100 nodes; at the bottom, a loop reads the thread's CPU clock and
// keeps the largest steps between two reads. A step is the CPU time this thread spent
// between two reads: a few hundred ns normally, and the whole handler (signal delivery,
// unwinding, the CCT insert) when a sample lands in between. Time other processes took
// the core is not in it. Run it under the agent with a short period and room for 2M
// nodes:
//
//   CILKPROF_PERIOD_NS=100000 CILKPROF_MAX_NODES=2097152 LD_PRELOAD=... bench_cct_pause [LEAVES]
//
// Prints the 8 largest steps (us) and how many steps exceeded 1 ms, 250 us, 100 us.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DEPTH 100
#define LEAF_NS 50000

static uint64_t cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t g_top[8];
static uint64_t g_over_1ms, g_over_250us, g_over_100us;

static void note_step(uint64_t step) {
  if (step > 1000000) ++g_over_1ms;
  if (step > 250000) ++g_over_250us;
  if (step > 100000) ++g_over_100us;
  if (step <= g_top[7]) return;
  int i = 7;
  while (i > 0 && g_top[i - 1] < step) {
    g_top[i] = g_top[i - 1];
    --i;
  }
  g_top[i] = step;
}

__attribute__((noinline)) static uint64_t leaf(uint64_t x) {
  const uint64_t start = cpu_now();
  uint64_t last = start;
  while (last - start < LEAF_NS) {
    const uint64_t now = cpu_now();
    note_step(now - last);
    last = now;
    x = x * 6364136223846793005ull + 1442695040888963407ull;
  }
  return x;
}

typedef uint64_t (*level_fn)(int depth, uint64_t x);
static level_fn g_levels[16];

#define LEVEL(n)                                                                         \
  __attribute__((noinline)) static uint64_t level##n(int depth, uint64_t x) {          \
    if (depth == 0) return leaf(x) + n;                                                 \
    x = x * 2862933555777941757ull + 3037000493ull;                                     \
    return g_levels[(x >> 59) & 15](depth - 1, x) + n; /* + n: not a tail call */      \
  }
LEVEL(0) LEVEL(1) LEVEL(2) LEVEL(3) LEVEL(4) LEVEL(5) LEVEL(6) LEVEL(7)
LEVEL(8) LEVEL(9) LEVEL(10) LEVEL(11) LEVEL(12) LEVEL(13) LEVEL(14) LEVEL(15)

int main(int argc, char** argv) {
  const unsigned long leaves = argc > 1 ? strtoul(argv[1], NULL, 10) : 60000;
  level_fn levels[16] = {level0, level1, level2,  level3,  level4,  level5,  level6,  level7,
                         level8, level9, level10, level11, level12, level13, level14, level15};
  for (int i = 0; i < 16; ++i) g_levels[i] = levels[i];
  uint64_t x = 88172645463325252ull;
  volatile uint64_t sink = 0;
  for (unsigned long i = 0; i < leaves; ++i) sink += g_levels[i & 15](DEPTH, x + i * 7919);
  (void)sink;
  printf("largest steps (us):");
  for (int i = 0; i < 8; ++i) printf(" %.1f", g_top[i] / 1000.0);
  printf("\nsteps over 1 ms: %llu, over 250 us: %llu, over 100 us: %llu\n", (unsigned long long)g_over_1ms,
         (unsigned long long)g_over_250us, (unsigned long long)g_over_100us);
  return 0;
}
