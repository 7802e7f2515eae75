// Names of the profile files `cilkprof run` writes. Never overwrites silently: a
// default name takes the first free "<stem>.cilkprof", "<stem>.1.cilkprof", ...; an
// explicit -o FILE is checked before the program runs and replaced (with -f) only if
// it is still a regular file when the profile is ready.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cilkprof/aggregator/server.h"

namespace cilkprof::cli {

// The program's basename reduced to [A-Za-z0-9._+-] ("" -> "program").
std::string ProfileStem(const std::string& program);

// "<dir>/<stem>.cilkprof" if free, else "<dir>/<stem>.N.cilkprof" with the smallest
// N >= 1 that is free. Free: no file there and not in `taken`. `dir` "" = current.
std::string FirstFreeProfilePath(const std::string& dir, const std::string& stem,
                                 const std::set<std::string>& taken);

// The name of a further process's profile (a fork child, an exec'd image) next to
// the main one: "<main without .cilkprof>.<pid>.cilkprof", then ".<pid>.N.cilkprof".
std::string RelatedProfilePath(const std::string& main_path, uint32_t pid,
                               const std::set<std::string>& taken);

// Why `-o path` cannot take the profile, checked before the program runs ("" when
// it can): a directory, a device, FIFO, socket or symbolic link (only a regular file
// is ever replaced), an existing file without `force`, a missing or unwritable
// directory. One message saying what to do.
std::string ExplicitOutputProblem(const std::string& path, bool force);

// The same for `-o path` when given, else whether the current directory can take a
// default name ("" when it can).
std::string OutputProblem(const std::string& path, bool force);

// Chooses every profile's file name; PathFor is called on the aggregator's writer
// thread, in the order processes end. The program itself (the process we started,
// known by its pid, whatever it exec'd into: one profile) gets the main name whatever
// order they end or connect in; other processes get "<main>.<pid>.cilkprof". (A
// process the program forks may connect to the collector before the program does: the
// order of connections does not say which one is the program.)
//
// With an explicit path and `force`, the program's profile is written under a new
// name next to it ("<main>.new.cilkprof") and Settle moves it over the -o file, which
// is replaced only if it is still a regular file (not a FIFO or device created while
// the program ran). Without `force`, an -o file that appeared while the program ran
// is left alone and the profile goes next to it.
class ProfileNaming {
 public:
  // `explicit_path`: the -o file, "" for default names from `stem` in the current directory.
  ProfileNaming(std::string explicit_path, bool force, std::string stem);

  // The program's pid, once it is started; PathFor waits for it. nullopt: it was not
  // started (then nothing is the program). Only the first call counts.
  void ProgramStarted(std::optional<uint32_t> pid);

  std::string PathFor(const aggregator::ProcessKey& process);

  // Whether `process` is the one PathFor gave the main name (the program).
  bool IsProgram(const aggregator::ProcessKey& process) const;

  // After the collector finished: puts the program's profile at the -o file (with
  // -f) and updates `written` to say where each profile is.
  void Settle(std::vector<aggregator::WrittenProfile>* written);

  // Why the program's profile is not at the -o file although it was written, "" when
  // it is there (or no -o was given): "'out.cilkprof' was created while the program ran...".
  std::string diversion() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable started_cv_;
  bool started_ = false;
  std::optional<uint32_t> program_pid_;
  // The connection sequence of the program's profile once PathFor named it: asked
  // again for it (its name was taken meanwhile) is a retry, not another profile.
  std::optional<uint32_t> program_sequence_;
  std::string explicit_;
  bool force_;
  std::string stem_;
  std::string main_;
  std::string staging_;  // with -f: where the program's profile waits for Settle
  std::string diversion_;
  std::set<std::string> taken_;
};

}  // namespace cilkprof::cli
