// The locks view (issue 14, lock blame shifting; docs/USER_GUIDE.md "view locks"):
// `cilkprof view locks PROFILE`, one row per lock some thread waited for
// (Profile.locks), hottest first, with the contexts its wait and its blame landed in.
//
//   wait       time threads spent waiting to acquire it (exact: measured at the
//              interposed lock calls, whatever the sampling clock)
//   blame      of that, the part charged to the holders at their releases; the rest is
//              the hand-off (from the last release to the acquisition) and timed waits
//              that gave up
//   holders    the contexts of the unlock calls that ended holds others waited through:
//              the tree's FRAME_LOCK nodes of this lock, by their lock_blame (sampled)
//   waiters    the contexts of the lock calls that waited: the same nodes by lock_wait
//
// A context is shown as its innermost user frames, "f (a.cc:12) <- g (a.cc:30)": the
// frames of the lock library (std::mutex, pthread_*), the C and C++ runtimes and the
// agent are skipped, so the first frame is the user's code that took or released it.
// Contexts that look the same merge.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"
#include "cilkprof/views/profile_nodes.h"

namespace cilkprof::views {

inline constexpr const char* kLockWaitMetric = "lock_wait";
inline constexpr const char* kLockBlameMetric = "lock_blame";

// What a lock location says about the lock object: the variable's name and its
// declaration file:line when the symbolizer found them (a global or static lock), else
// its address: "0x7f3a2c001040" for a lock on the heap or a stack (module 0),
// "libfoo.so+0x4020" for one in a module's data without a symbol.
struct LockIdentity {
  std::string name;
  std::string file;   // "" when unknown
  uint32_t line = 0;  // 0 when unknown
  bool named = false;  // name is a variable's, not an address
};
LockIdentity LockIdentityOf(const profile::Profile& profile, uint32_t location);
// The row a lock is shown as in the top-down view: "[lock NAME]".
std::string LockRowName(const std::string& name);

// A context some of a lock's wait or blame landed in.
struct LockContext {
  std::string function;  // the innermost user frame's function ("??" when unknown)
  std::string file;
  uint32_t line = 0;
  std::string frames;    // "f (a.cc:12) <- g (a.cc:30) <- h (a.cc:41)", innermost first
  double value = 0;      // ns of lock_blame (holders) or lock_wait (waiters)
  double share = 0;      // of the lock's sampled total of that metric, 0..1
};

struct LockRow {
  LockIdentity identity;
  std::string file;       // the declaration, else the innermost user frame of the largest waiter context
  uint32_t line = 0;
  std::string kind;       // "mutex", "rwlock", "spin"
  uint64_t contended = 0;
  uint64_t timeouts = 0;
  uint64_t acquisitions = 0;  // contended and uncontended, estimated (Profile.Lock); 0: unknown
  double wait_ns = 0, blame_ns = 0;
  double blame_share = 0;  // blame / wait, 0..1 (0 without wait)
  double wait_share = 0;   // of all locks' wait, 0..1
  std::vector<LockContext> holders, waiters;  // largest first
};

// Every lock of the profile, hottest (wait) first; fails with a message saying what to
// do when the profile has none.
Result<std::vector<LockRow>> LockRows(const profile::Profile& profile, const ProfileNodes& nodes);
Result<std::vector<LockRow>> LockRows(const profile::Profile& profile);

// Keeps the locks whose name, or the frames of one of whose contexts, `regex` matches
// (ECMAScript, anywhere in the text); fails on a malformed regex or when none match.
Status FocusLocks(std::vector<LockRow>* rows, const std::string& regex);
// Drops the locks under `percent` of all locks' wait.
void ThresholdLocks(std::vector<LockRow>* rows, double percent);

// Text: a table of the locks, then each lock's top `contexts` holders and waiters.
std::string RenderLocksText(const std::vector<LockRow>& rows, size_t contexts);
// An array of objects: lock, file, line, named, kind, contended, wait_ns, blame_ns,
// blame_percent, wait_percent, timeouts, acquisitions, holders and waiters ([{function, file, line,
// frames, value_ns, percent}], every context).
std::string RenderLocksJson(const std::vector<LockRow>& rows);
// One line per lock: lock,file,line,kind,contended,wait_ns,blame_ns,blame_percent,
// timeouts,top_holder,top_holder_blame_ns,top_waiter,top_waiter_wait_ns,acquisitions.
std::string RenderLocksCsv(const std::vector<LockRow>& rows);

}  // namespace cilkprof::views
