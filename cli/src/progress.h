// What cilkprof is doing when it takes a while: a one-line status on stderr ("cilkprof:
// writing the profile... 2.3 s"), shown only on a terminal and only once the current
// work has taken over a second, rewritten in place and erased when done, so that
// quick commands and scripts see nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace cilkprof::cli {

class Progress {
 public:
  // Shown on `stream` when it is a terminal (and `enabled`); silent otherwise.
  explicit Progress(bool enabled = true, std::FILE* stream = stderr,
                    std::chrono::milliseconds delay = std::chrono::seconds(1));
  ~Progress();  // erases the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // The work in progress ("writing the profile"); the clock starts at the first call.
  void Stage(const std::string& what);
  // Erases the line before other output; later Stage() calls show again.
  void Clear();

  // The line as it would be shown (for tests): "cilkprof: <stage>... <elapsed>".
  static std::string Line(const std::string& stage, double elapsed_s);

 private:
  void Run();
  void EraseLocked();

  std::FILE* stream_;
  bool active_;
  std::chrono::milliseconds delay_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string stage_;
  std::chrono::steady_clock::time_point started_{};
  bool started_once_ = false;
  bool shown_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace cilkprof::cli
