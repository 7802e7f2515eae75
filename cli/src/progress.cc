#include "progress.h"

#include <unistd.h>

namespace cilkprof::cli {

Progress::Progress(bool enabled, std::FILE* stream, std::chrono::milliseconds delay)
    : stream_(stream), active_(enabled && stream != nullptr && ::isatty(::fileno(stream)) == 1), delay_(delay) {
  if (active_) thread_ = std::thread([this] { Run(); });
}

Progress::~Progress() {
  if (!active_) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    EraseLocked();
  }
  wake_.notify_all();
  thread_.join();
}

std::string Progress::Line(const std::string& stage, double elapsed_s) {
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "%.1f s", elapsed_s);
  return "cilkprof: " + stage + "... " + elapsed;
}

void Progress::Stage(const std::string& what) {
  if (!active_) return;
  std::lock_guard lock(mutex_);
  stage_ = what;
  if (!started_once_) {
    started_once_ = true;
    started_ = std::chrono::steady_clock::now();
  }
  wake_.notify_all();
}

void Progress::Clear() {
  if (!active_) return;
  std::lock_guard lock(mutex_);
  EraseLocked();
  stage_.clear();
}

void Progress::EraseLocked() {
  if (!shown_) return;
  std::fputs("\r\033[K", stream_);  // carriage return, erase to the end of the line
  std::fflush(stream_);
  shown_ = false;
}

void Progress::Run() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (stage_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - started_ < delay_) {
      wake_.wait_until(lock, started_ + delay_);
      continue;
    }
    const double elapsed = std::chrono::duration<double>(now - started_).count();
    std::fputs(("\r\033[K" + Line(stage_, elapsed)).c_str(), stream_);
    std::fflush(stream_);
    shown_ = true;
    wake_.wait_for(lock, std::chrono::milliseconds(250));
  }
}

}  // namespace cilkprof::cli
