// The cost of one spawn and what it is made of, and the cost of a hook site with
// no tool. Prints one line per measurement: "<what> <ns per operation>". Run with
// CILK_NWORKERS=1: every measurement is the calling thread's CPU time, so time the
// thread spent waiting for a CPU on a busy machine is left out.
#include <boost/context/detail/fcontext.hpp>
#include <cilk/cilk.hpp>
#include <cilkprof/runtime_abi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_common.hpp"

namespace bctx = boost::context::detail;

__attribute__((noinline)) void Empty() { __asm__ volatile(""); }

// One scope, one spawn of an empty child, one sync: the whole per-spawn cost.
double SpawnSyncNs(long iterations) {
  return cilk::run([&] {
           return ThreadCpuSeconds([&] {
             for (long i = 0; i < iterations; ++i) {
               cilk::scope s;
               s.spawn([] { Empty(); });
             }
           });
         }) * 1e9 / iterations;
}

// A scope with no spawn: scope_enter + sync + scope_leave.
double ScopeOnlyNs(long iterations) {
  return cilk::run([&] {
           return ThreadCpuSeconds([&] {
             for (long i = 0; i < iterations; ++i) {
               cilk::scope s;
               Empty();
             }
           });
         }) * 1e9 / iterations;
}

// Two Boost.Context switches (there and back): the floor of a fiber-based spawn.
void PingPong(bctx::transfer_t t) {
  for (;;) t = bctx::jump_fcontext(t.fctx, nullptr);
}
double SwitchPairNs(long iterations) {
  std::vector<char> stack(64 * 1024);
  bctx::fcontext_t ctx = bctx::make_fcontext(stack.data() + stack.size(), stack.size(), &PingPong);
  return ThreadCpuSeconds([&] {
           for (long i = 0; i < iterations; ++i) ctx = bctx::jump_fcontext(ctx, nullptr).fctx;
         }) * 1e9 / iterations;
}

// A sequentially consistent store (an xchg on x86-64): what the THE pop's
// store-load fence would cost every spawn without the membarrier scheme.
double SeqCstStoreNs(long iterations) {
  static std::atomic<long> word{0};
  return ThreadCpuSeconds([&] {
           for (long i = 0; i < iterations; ++i) {
             word.store(i, std::memory_order_seq_cst);
             (void)word.load(std::memory_order_relaxed);
           }
         }) * 1e9 / iterations;
}

// A hook site with no tool: one load of the global pointer and a branch.
const cilkprof_hooks_t* volatile g_no_tool = nullptr;
cilkprof_frame_t g_frame;
double HookSiteNs(long iterations, bool with_hook) {
  return ThreadCpuSeconds([&] {
           for (long i = 0; i < iterations; ++i) {
             if (with_hook) CILKPROF_HOOK(g_no_tool, sync_end, &g_frame);
             __asm__ volatile("" ::: "memory");
           }
         }) * 1e9 / iterations;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 2'000'000;
  SpawnSyncNs(n / 10);  // warm the stack pool
  std::printf("spawn+sync %.1f\n", SpawnSyncNs(n));
  std::printf("scope_without_spawn %.1f\n", ScopeOnlyNs(n));
  std::printf("fcontext_switch_pair %.1f\n", SwitchPairNs(n));
  std::printf("seq_cst_store %.1f\n", SeqCstStoreNs(n));
  std::printf("hook_site_no_tool %.2f\n", HookSiteNs(n * 10, true) - HookSiteNs(n * 10, false));
  return 0;
}
