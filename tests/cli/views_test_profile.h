// A small profile built in memory for the view tests: an inlined frame, a spawn edge,
// a partial-unwind marker, unknown code in another module, and a function reached
// through two addresses that must merge.
//
// Samples (samples / work in ms) by address-level path:
//   main@10                                   1 / 1
//   main@10 > a@21{inlined helper@util.h:3}   2 / 2
//   ... > b@30                                3 / 3
//   ... > b@30 > ??[libm.so]                  1 / 0.5
//   main@10 >spawn> c@40                      4 / 4
//   main@11 > c@40                            1 / 1
//   <partial unwind> > b@30                   2 / 2
// Total: 14 samples, 13.5 ms of work.
#pragma once

#include "cilkprof/profile.pb.h"

namespace cilkprof::views::testing {

profile::Profile SmallProfile();

// A chain main > f > f > f ... (depth copies of f), one sample of 1 ms at each f, for
// recursion checks.
profile::Profile RecursiveProfile(int depth);

// OpenMP task edges (wire::EDGE_TASK, issue 17) beside a spawn and a call of the same
// function at the same site, which must stay three contexts. Samples / work in ms:
//   main@10                                   1 / 1
//   main@10 >task> c@40                       3 / 3
//   main@10 >spawn> c@40                      4 / 4
//   main@10 > c@40                            2 / 2
//   main@10 >task> c@40 >task> d@60           5 / 5
// Total: 15 samples, 15 ms of work.
profile::Profile TaskProfile();

}  // namespace cilkprof::views::testing

namespace cilkprof::views::testing {

// A profile of a program on a runtime (metrics samples, work, idleness, overhead; ms):
//   main > A   work 90, idleness  4, overhead  6   effectively parallel
//   main > B   work 80, idleness  4, overhead 16   coarsen (16% overhead)
//   main > C   work 70, idleness 24, overhead  6   refine (24% idle)
//   main > D   work 40, idleness 30, overhead 20
//   main > D > helper (inlined into D)  work 10: D's inclusive 50/30/20 is "change
//   the parallelization strategy"
// Totals: work 290, idleness 62, overhead 48, effort 400 (15.5% idle, 12% overhead:
// coarsen); idle workers measured 31 ms in 7 samples (--clock cpu).
profile::Profile BlameProfile();

// OpenMP programs built by clang (issue 17): compiler glue around the user's code
// (work, idleness in ms):
//   main >task> .omp_outlined.          nothing of its own
//            > E                        work 60, idleness 30
//   main >task> .omp_task_entry..3      work 1
//            > F                        work 40
//   main >task> G._omp_fn.0 (GCC's outlined region: the user's code)   work 50, idleness 10
profile::Profile OpenMpGlueProfile();

// A profile with lock blame (issue 14). Metrics samples, work, idleness, overhead,
// lock_wait, lock_blame (ms):
//   main@10                                          work 10
//   main > worker@31                                 work 100, idleness 20, overhead 15
//   main > worker > hold_long@22{inlined std::mutex::unlock()}
//                                                    work 50
//     > [lock g_mutex]                               lock_blame 60
//   main > worker > wait_here@41{inlined std::mutex::lock()}
//                                                    work 5
//     > pthread_mutex_lock [libc.so.6]
//       > [lock g_mutex]                             lock_wait 80
//   main > worker@32 > [lock 0x7f0000001000]         lock_wait 20 (a heap spinlock)
//   main@10 > [lock 0x7f0000001000]                  lock_blame 15
// Profile.locks: g_mutex (prog.cc:5, mutex): 40 contended, wait 80, blame 60;
// the heap spinlock: 10 contended, wait 20, blame 15, 2 timeouts. Totals: 1000
// acquisitions, 50 contended, wait 100, blame 75, unblamed 25, open 0.
// Effort 300 = work 165 + idleness 20 + overhead 15 + lock_wait 100: lock waits are
// 33.3% of it.
profile::Profile LockProfile();

}  // namespace cilkprof::views::testing
