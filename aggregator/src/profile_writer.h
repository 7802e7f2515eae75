// The aggregator's writer thread: builds, symbolizes and writes the profile of each
// finished connection, in the order connections end (internal to the server).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cilkprof/aggregator/server.h"
#include "cilkprof/aggregator/session.h"
#include "cilkprof/aggregator/symbol_source.h"

namespace cilkprof::aggregator::internal {

// Work handed from a finished connection to the writer thread.
struct FinishedSession {
  std::unique_ptr<Session> session;
  ProcessKey key;
  uint64_t end_unix_ns = 0;
  // Continuous mode: a connection's last window (its process's window files are no
  // longer rotated after it).
  bool last_window = false;
  // Called on the writer thread once it is written (or failed), before on_written.
  std::function<void(const WrittenProfile&)> done;
};

// One thread, so symbolization (slow, and SymbolSources are single-threaded) never
// stalls the I/O thread. Profiles go where options.output_path says, never over an
// existing file; options.on_written hears of each.
//
// A profile is never dropped because its file cannot be written there (the directory
// was removed or became unwritable, the disk is full, every name offered was taken):
// it is written to a fallback directory instead, under "<program>.<pid>.cilkprof": the
// user's cache directory ($XDG_CACHE_HOME/cilkprof or ~/.cache/cilkprof, 0700), else
// $TMPDIR, else /tmp. Its WrittenProfile then has that `path` and a `status` that
// says why it is not where it was asked: a failed status with a path means "written
// elsewhere", with no path "lost" (no fallback directory took it either).
class ProfileWriter {
 public:
  // `options` must outlive the writer.
  ProfileWriter(const AggregatorOptions& options, SymbolSourceFactory symbols);
  ~ProfileWriter();

  void Submit(FinishedSession work);
  // Writes everything submitted so far, then stops the thread. Idempotent.
  void StopAndJoin();
  // Every profile written (or failed) so far, in order.
  std::vector<WrittenProfile> written() const;
  // How many were written where asked and how many were not (written elsewhere, or
  // lost), listed or not (AggregatorOptions::list_written_profiles).
  uint64_t written_count() const;
  uint64_t failed_count() const;

 private:
  void Run();
  WrittenProfile Write(const FinishedSession& work);
  // Deletes the oldest window files of work.key's process beyond options.keep_windows.
  void Rotate(const FinishedSession& work, const WrittenProfile& written);

  const AggregatorOptions& options_;
  SymbolSourceFactory symbols_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<FinishedSession> queue_;
  std::vector<WrittenProfile> written_;
  uint64_t written_count_ = 0;
  uint64_t failed_count_ = 0;
  bool stopping_ = false;
  // Writer thread only: the window files written per process (pid, executable), oldest
  // first, for Rotate.
  std::map<std::pair<uint32_t, std::string>, std::deque<std::string>> window_files_;
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace cilkprof::aggregator::internal
