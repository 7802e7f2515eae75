// ns per Unwind() of a 30-deep stack, both modes. The context comes from getcontext()
// at the bottom of the recursion (Unwind treats it like a signal context).
//  - BM_Unwind: on the benchmark's own thread, below main and libbenchmark's frames
//    (built without frame pointers: fp mode steps them with CFI);
//  - BM_UnwindFramedThread: a thread whose every frame has a record, as the workers of
//    a program built with frame pointers (the fp walk never needs CFI there).
//   build/<dir>/bin/unwinder_bench
#include <pthread.h>
#include <ucontext.h>

#include <benchmark/benchmark.h>

#include <condition_variable>
#include <mutex>

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

// The framed thread parks at the bottom of its recursion with its context published,
// until the benchmark has unwound it.
struct ParkedThread {
  std::mutex mu;
  std::condition_variable cv;
  ucontext_t context;
  bool parked = false;
  bool release = false;
};

__attribute__((noinline)) int RecurseAndPark(int depth, ParkedThread* parked) {
  if (depth > 0) {
    const int result = RecurseAndPark(depth - 1, parked) + 1;
    benchmark::DoNotOptimize(result);
    return result;
  }
  getcontext(&parked->context);
  std::unique_lock<std::mutex> lock(parked->mu);
  parked->parked = true;
  parked->cv.notify_all();
  parked->cv.wait(lock, [parked] { return parked->release; });
  return 0;
}

__attribute__((noinline)) void* ParkedThreadMain(void* arg) {
  RecurseAndPark(30, static_cast<ParkedThread*>(arg));
  return nullptr;
}

void BM_UnwindFramedThread(benchmark::State& state) {
  const char* error = nullptr;
  if (!cilkprof::unwinder::Initialize(&error)) {
    state.SkipWithError("unwinder initialization failed");
    return;
  }
  ParkedThread parked;
  pthread_t thread;
  if (pthread_create(&thread, nullptr, ParkedThreadMain, &parked) != 0) {
    state.SkipWithError("pthread_create failed");
    return;
  }
  {
    std::unique_lock<std::mutex> lock(parked.mu);
    parked.cv.wait(lock, [&parked] { return parked.parked; });
  }
  const auto mode = static_cast<Mode>(state.range(0));
  Frame frames[128];
  uint32_t frames_seen = 0;
  for (auto _ : state) {
    const auto result = Unwind(mode, &parked.context, frames, 128);
    frames_seen = result.depth;
    benchmark::DoNotOptimize(frames);
  }
  state.counters["frames"] = frames_seen;
  {
    std::lock_guard<std::mutex> lock(parked.mu);
    parked.release = true;
  }
  parked.cv.notify_all();
  pthread_join(thread, nullptr);
}
BENCHMARK(BM_UnwindFramedThread)
    ->Arg(static_cast<int>(Mode::kDwarf))
    ->Arg(static_cast<int>(Mode::kFramePointer))
    ->ArgName("mode(0=dwarf,1=fp)");

}  // namespace

BENCHMARK_MAIN();
