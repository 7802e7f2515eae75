// The aggregator's writer thread (see profile_writer.h).
#include "profile_writer.h"

#include <spdlog/spdlog.h>

#include <exception>

#include "cilkprof/aggregator/profile_io.h"

namespace cilkprof::aggregator::internal {

ProfileWriter::ProfileWriter(const AggregatorOptions& options, SymbolSourceFactory symbols)
    : options_(options), symbols_(std::move(symbols)), thread_([this] { Run(); }) {}

ProfileWriter::~ProfileWriter() { StopAndJoin(); }

void ProfileWriter::Submit(FinishedSession work) {
  std::lock_guard lock(mutex_);
  queue_.push_back(std::move(work));
  cv_.notify_one();
}

void ProfileWriter::StopAndJoin() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

std::vector<WrittenProfile> ProfileWriter::written() const {
  std::lock_guard lock(mutex_);
  return written_;
}

void ProfileWriter::Run() {
  while (true) {
    FinishedSession work;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    WrittenProfile result = Write(work);
    {
      std::lock_guard lock(mutex_);
      written_.push_back(result);
    }
    if (options_.on_written) {
      try {
        options_.on_written(result);
      } catch (const std::exception& e) {
        spdlog::error("the on_written callback failed: {}", e.what());
      }
    }
  }
}

WrittenProfile ProfileWriter::Write(const FinishedSession& work) {
  WrittenProfile result;
  result.process = work.key;
  try {
    std::unique_ptr<SymbolSource> symbols = symbols_();
    const profile::Profile profile = work.session->BuildProfile(*symbols, work.end_unix_ns);
    result.totals = profile.totals();
    result.threads = static_cast<uint32_t>(profile.threads_size());
    const auto& process = profile.process();
    if (process.end_unix_ns() > process.start_unix_ns() && process.start_unix_ns() != 0) {
      result.duration_s = double(process.end_unix_ns() - process.start_unix_ns()) / 1e9;
    }
    if (!options_.output_path) {
      result.status = Status::Error("no output path configured for profiles");
    }
    // The chosen name may appear before the rename; ask again rather than overwrite.
    for (int attempt = 0; attempt < 16 && options_.output_path; ++attempt) {
      const std::string path = options_.output_path(work.key);
      result.status = WriteNewProfileFile(path, profile);
      if (result.status.ok()) {
        result.path = path;
        break;
      }
      if (result.status.message().rfind("already exists", 0) != 0) break;
    }
  } catch (const std::exception& e) {
    result.status = Status::Error(std::string("building the profile failed: ") + e.what());
  }
  if (result.status.ok()) {
    spdlog::info("wrote profile of pid {} ({}): {} ({} samples, {} threads)", work.key.pid,
                 work.key.executable, result.path, result.totals.samples(), result.threads);
  } else {
    spdlog::error("could not write the profile of pid {} ({}): {}", work.key.pid,
                  work.key.executable, result.status.message());
  }
  return result;
}

}  // namespace cilkprof::aggregator::internal
