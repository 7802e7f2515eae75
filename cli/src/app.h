// The command-line entry points: `cilkprof <subcommand> ...` and `cilkprof-run ...`
// (which is `cilkprof run ...`). Never throws: every error becomes one message on
// stderr and an exit status (commands.h).
#pragma once

namespace cilkprof::cli {

enum class Entry { kCilkprof, kCilkprofRun };

int Main(int argc, char** argv, Entry entry);

}  // namespace cilkprof::cli
