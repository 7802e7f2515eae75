// A small profile with a recorded timeline (Profile.timeline), built in memory for the
// tests of the timeline's consumers (chrome-trace export, `view timeline`). Period 1 ms;
// times in ms since the process started.
//
// Nodes: 1 main; 2 compute(int) under main; 3 [spawn] leaf_work(int) under compute,
// whose address is in helper() inlined into leaf_work (its leaf function: helper).
//
// worker 0 (tid 101, thread index 0):
//   working in node 3 at 1 2 3 4        -> one slice [0, 4], 4 samples
//   working in node 2 at 5              -> [4, 5]
//   sync wait begins at 5.5, idle (no context) at 6 7, sync wait ends at 7.5
//                                       -> idle [5.5, 7]; sync wait [5.5, 7.5]
//   working in node 2 at 8              -> [7.5, 8] (starts at the sync boundary)
//   working in node 2 at 12             -> [11, 12] (4 ms after the last: a new slice)
// worker 1 (tid 102, thread index 1):
//   idle at 1 2                         -> [0, 2]
//   steals from worker 0 at 2.5         -> instant and flow worker 0 -> worker 1
//   working in node 3 at 3 4 5          -> [2.5, 5] (starts at the steal)
//   overhead in node 2 at 6             -> [5, 6]
//   lock wait in node 2 at 7 8          -> [6, 8]
// main (tid 100, thread index 2, ThreadInfo name "main", not a worker):
//   not a worker, node 1, at 1 .. 12    -> [0, 12]
// With 12 buckets of 1 ms the rows are
//   worker 0  "#####..#   #"
//   worker 1  "..###oLL    "
//   main      "------------"
//   steals    "  1         "
#pragma once

#include "cilkprof/profile.pb.h"

namespace cilkprof::timeline_testing {

profile::Profile TimelineProfile();

// The same profile without a timeline.
profile::Profile ProfileWithoutTimeline();

}  // namespace cilkprof::timeline_testing
