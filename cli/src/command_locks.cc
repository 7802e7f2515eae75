// `cilkprof view locks PROFILE [--focus REGEX] [--threshold PCT] [--format text|json|csv]`
// (issue 14; docs/USER_GUIDE.md "view locks"): one row per lock some thread waited for,
// hottest first, with the holder contexts its blame landed in and its waiters.
#include <cstdio>

#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/views/locks.h"
#include "commands.h"

namespace cilkprof::cli {
namespace {

// Holder and waiter contexts listed per lock in text (JSON lists every one).
constexpr size_t kTextContexts = 3;

}  // namespace

int RunLocksView(const ViewArgs& args) {
  auto profile = aggregator::ReadProfileFile(args.profile);
  if (!profile.ok()) {
    PrintError(profile.status().message());
    return kExitFailure;
  }
  auto rows = views::LockRows(*profile);
  if (!rows.ok()) {
    PrintError(args.profile + " " + rows.status().message());
    return kExitFailure;
  }
  if (!args.focus.empty()) {
    if (Status focused = views::FocusLocks(&*rows, args.focus); !focused.ok()) {
      PrintError(args.profile + ": " + focused.message());
      return kExitFailure;
    }
  }
  const bool text = args.format != "json" && args.format != "csv";
  const double threshold = args.threshold_percent.value_or(text ? kDefaultTextThreshold : 0.0);
  views::ThresholdLocks(&*rows, threshold);
  std::string out;
  if (args.format == "json") {
    out = views::RenderLocksJson(*rows);
  } else if (args.format == "csv") {
    out = views::RenderLocksCsv(*rows);
  } else {
    char hidden[96] = "";
    if (threshold > 0) {
      std::snprintf(hidden, sizeof hidden, "; locks under %g%% of the wait hidden%s", threshold,
                    args.threshold_percent ? "" : " (--threshold 0 shows all)");
    }
    out = "Locks of " + args.profile + " (" + profile->process().executable() + ", pid " +
          std::to_string(profile->process().pid()) + "); wait and blame per lock, hottest first" + hidden + "\n" +
          views::RenderLocksText(*rows, kTextContexts);
  }
  return WriteStdout(out, "the view");
}

}  // namespace cilkprof::cli
