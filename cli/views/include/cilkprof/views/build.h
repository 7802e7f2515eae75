// Folding a profile's address-level calling-context tree into the trees the views
// walk (row_tree.h).
//
// A profile node is one code address (or a "<partial unwind>" or elided-frames marker)
// under its parent; its location expands into source frames, outermost first (inlined
// calls). A FRAME_LOCK node (issue 14) is a lock object under the call that waited
// for it or released it: a leaf row "[lock NAME]" in the top-down view (LockMode::kLeaf);
// the bottom-up and flat views give its values to its parent frame, the lock call's
// function and line, as if it were not there (kFoldIntoCaller; the flat view always).
//   top-down   the function-level calling-context tree (hpcviewer's calling-context
//              view): every address node becomes its chain of frames, and siblings
//              merge by (function, module, edge). Inclusive = exclusive + children.
//   flat       load module > file > function > line (hpcviewer's flat view).
//              Exclusive: samples whose innermost frame is there; inclusive: samples
//              with that row anywhere on their call path, each counted once.
// The bottom-up view is expanded from the top-down tree as it is shown (bottom_up.h).
// Percentages everywhere divide by the whole-program total (the root's inclusive).
// With work/span data each builder also joins the call sites to its rows
// (callsite_columns.h): top-down at the row of each address node's outermost frame,
// shown at the top-most row of a path; flat at the line rows of the sites' file:line.
//
// Both cost time linear in the profile's nodes times their frames, and memory linear
// in the rows they make.
#pragma once

#include "cilkprof/profile.pb.h"
#include "cilkprof/views/profile_nodes.h"
#include "cilkprof/views/row_tree.h"

namespace cilkprof::views {

enum class InlineMode {
  kKeep,  // an inlined function is a row of its own, marked "(inline)"
  kFold,  // inline frames are charged to the function they were inlined into
};

enum class LockMode {
  kLeaf,            // top-down: a lock node is a row "[lock NAME]" under its caller
  kFoldIntoCaller,  // its values are its parent's (the bottom-up view's tree, the summary)
};

struct BuildOptions {
  InlineMode inline_mode = InlineMode::kKeep;
  LockMode lock_mode = LockMode::kLeaf;  // BuildTopDown only; BuildFlat always folds
};

// From the tables of `profile` and its nodes in columns (a file read with the
// streaming reader: `profile` then holds no nodes).
RowTree BuildTopDown(const profile::Profile& profile, const ProfileNodes& nodes, const BuildOptions& options = {});
RowTree BuildFlat(const profile::Profile& profile, const ProfileNodes& nodes, const BuildOptions& options = {});
// From a profile with its nodes (built in memory).
RowTree BuildTopDown(const profile::Profile& profile, const BuildOptions& options = {});
RowTree BuildFlat(const profile::Profile& profile, const BuildOptions& options = {});

}  // namespace cilkprof::views
