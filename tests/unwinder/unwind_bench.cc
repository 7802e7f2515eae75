// ns per Unwind() of a 30-deep stack, both modes. The context comes from getcontext()
// at the bottom of the recursion (Unwind treats it like a signal context).
//   build/<dir>/bin/unwinder_bench
#include <ucontext.h>

#include <benchmark/benchmark.h>

#include "cilkprof/unwinder/unwinder.h"

namespace {

using cilkprof::unwinder::Frame;
using cilkprof::unwinder::Mode;
using cilkprof::unwinder::Unwind;

__attribute__((noinline)) int Recurse(int depth, benchmark::State& state, Mode mode) {
  if (depth > 0) {
    const int result = Recurse(depth - 1, state, mode) + 1;
    benchmark::DoNotOptimize(result);
    return result;
  }
  ucontext_t context;
  getcontext(&context);
  Frame frames[128];
  uint32_t frames_seen = 0;
  for (auto _ : state) {
    const auto result = Unwind(mode, &context, frames, 128);
    frames_seen = result.depth;
    benchmark::DoNotOptimize(frames);
  }
  state.counters["frames"] = frames_seen;
  return 0;
}

void BM_Unwind(benchmark::State& state) {
  static const bool initialized = [] {
    const char* error = nullptr;
    const bool ok = cilkprof::unwinder::Initialize(&error);
    cilkprof::unwinder::PrepareThread();
    return ok;
  }();
  if (!initialized) {
    state.SkipWithError("unwinder initialization failed");
    return;
  }
  Recurse(30, state, static_cast<Mode>(state.range(0)));
}
BENCHMARK(BM_Unwind)
    ->Arg(static_cast<int>(Mode::kDwarf))
    ->Arg(static_cast<int>(Mode::kFramePointer))
    ->ArgName("mode(0=dwarf,1=fp)");

}  // namespace

BENCHMARK_MAIN();
