// Probes at known logical paths of OpenMP tasks (issue 17; check_task_paths.py), on
// libomp with two threads. Every task is forced to run on the other thread than the
// one that created it: the creator spins until the task has started, so only the
// other thread can take it.
//
//   chain N      a parallel region opened under main -> run_chain -> open_region; its
//                single thread starts a chain of tasks: the task at depth d (1..N) was
//                created by the task at depth d - 1, which returns (completes) as soon
//                as its child started: a task outlives its creator. Each level probes
//                once: at depth d the probe's path is d task edges deep.
//   taskwait N   in a region, the single thread creates N tasks that each create one
//                child and wait for it (taskwait); every task probes.
//   tail N       in a region, the single thread calls spawn_tail N times, whose last
//                statement creates a task: compiled as a jump to __kmpc_omp_task (a
//                tail call), so spawn_tail has no frame when libomp reports the task;
//                every task probes. (Tasks are not forced onto the other thread here:
//                the creator must not run code after the task's creation.)
//
// Exit status 2 if a task ran on its creator's thread (the test would not test
// migration).
#include <omp.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cilkprof/cilkprof.h"

namespace {

std::atomic<int> g_same_thread{0};

__attribute__((noinline)) void probe_here() {
  CILKPROF_PROBE();
  asm volatile("" ::: "memory");
}

void chain(int depth, int max);

// The creation site of the next level: waits until the task started elsewhere.
__attribute__((noinline)) void spawn_next(int depth, int max) {
  std::atomic<bool> started{false};
  std::atomic<bool>* flag = &started;
  const int creator = omp_get_thread_num();
#pragma omp task firstprivate(flag, depth, max, creator)
  {
    if (omp_get_thread_num() == creator) g_same_thread.fetch_add(1);
    flag->store(true);  // the creator may return from here on: `flag` is gone
    chain(depth + 1, max);
  }
  while (!started.load()) {
  }
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void chain(int depth, int max) {
  probe_here();
  if (depth < max) spawn_next(depth, max);
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void open_region(int n) {
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    chain(0, n);
  }
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void run_chain(int n) {
  open_region(n);
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void waited_child() {
  probe_here();
  asm volatile("" ::: "memory");
}

// Creates one child and waits for it; the child may run here (inside the taskwait) or
// on the other thread: its path is the same.
__attribute__((noinline)) void wait_for_child() {
  probe_here();
#pragma omp task
  waited_child();
#pragma omp taskwait
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void create_waiters(int n) {
  for (int i = 0; i < n; ++i) {
    std::atomic<bool> started{false};
    std::atomic<bool>* flag = &started;
    const int creator = omp_get_thread_num();
#pragma omp task firstprivate(flag, creator)
    {
      if (omp_get_thread_num() == creator) g_same_thread.fetch_add(1);
      flag->store(true);
      wait_for_child();
    }
    while (!started.load()) {
    }
  }
#pragma omp taskwait
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void run_taskwait(int n) {
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    create_waiters(n);
  }
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void tail_task_body() {
  probe_here();
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void spawn_tail(int i) {
#pragma omp task firstprivate(i)
  tail_task_body();
}

__attribute__((noinline)) void create_tails(int n) {
  for (int i = 0; i < n; ++i) spawn_tail(i);
#pragma omp taskwait
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void run_tail(int n) {
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    create_tails(n);
  }
  asm volatile("" ::: "memory");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s chain|taskwait|tail N\n", argv[0]);
    return 1;
  }
  const int n = std::atoi(argv[2]);
  if (std::strcmp(argv[1], "chain") == 0) {
    run_chain(n);
  } else if (std::strcmp(argv[1], "taskwait") == 0) {
    run_taskwait(n);
  } else if (std::strcmp(argv[1], "tail") == 0) {
    run_tail(n);
  } else {
    std::fprintf(stderr, "unknown case %s\n", argv[1]);
    return 1;
  }
  if (g_same_thread.load() != 0) {
    std::fprintf(stderr, "%d tasks ran on their creator's thread\n", g_same_thread.load());
    return 2;
  }
  return 0;
}
