// The spill importer harness (see fuzz_harness.h).
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "cilkprof/aggregator/import.h"
#include "cilkprof/aggregator/profile_io.h"
#include "deterministic_bytes.h"
#include "fuzz_harness.h"
#include "quiet_logs.h"
#include "memory_file.h"
#include "stream_replay.h"

namespace cilkprof::aggregator::fuzzing {
namespace {

// A private directory for the imported profile, on tmpfs when there is one: the
// profile writer fsyncs, which on a disk would bound a fuzzer to a few runs a second.
class OutputDirectory {
 public:
  OutputDirectory() {
    const char* tmp = std::getenv("TMPDIR");
    std::string base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp != nullptr ? tmp : "/tmp";
    std::string pattern = base + "/cilkprof-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    dir_ = pattern;
    profile_ = dir_ + "/imported.cilkprof";
  }
  ~OutputDirectory() {
    ::unlink(profile_.c_str());
    ::rmdir(dir_.c_str());
  }
  const std::string& profile() const { return profile_; }

 private:
  std::string dir_;
  std::string profile_;
};

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string ReadAll(const std::string& path) {
  std::string bytes;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buffer[65536];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) bytes.append(buffer, n);
    std::fclose(f);
  }
  return bytes;
}

}  // namespace

std::string CheckSpillImport(std::string_view file) {
  static MemoryFile spill;
  static OutputDirectory out;
  QuietLibraryLogs();

  spill.Write(file);
  ::unlink(out.profile().c_str());
  const auto report =
      ImportFrameStream(spill.path(), out.profile(), [] { return std::make_unique<NullSymbolSource>(); });

  // The same bytes decoded in memory, as a connection would.
  Replay replayed = ReplayStream({file}, false);
  const Session& session = replayed.last();
  const ReplayEnd& replay = replayed.end;
  if (report.ok() != session.has_hello()) {
    return fmt::format("the import {} but the stream {} a Hello ({})",
                       report.ok() ? "succeeded" : "failed", session.has_hello() ? "has" : "has no",
                       report.ok() ? "" : report.status().message());
  }
  if (!report.ok()) {
    if (Exists(out.profile())) return "a failed import left a profile behind";
    return "";
  }
  if (report->messages != replay.messages) {
    return fmt::format("the import merged {} messages, the in-memory replay {}", report->messages,
                       replay.messages);
  }
  const bool complete =
      replay.session_error.empty() && replay.decoder_error.empty() && session.has_goodbye();
  if (report->complete != complete) {
    return fmt::format("the import says the spill is {}complete, the replay says otherwise",
                       report->complete ? "" : "in");
  }

  // The file reads back with both readers, and holds the tree the replay built.
  const std::string written = ReadAll(out.profile());
  if (std::string reader = CheckProfileReader(written); !reader.empty()) {
    return "the imported profile: " + reader;
  }
  auto imported = DecodeProfileFile(out.profile(), written);
  if (!imported.ok()) return "the imported profile is refused: " + imported.status().message();
  if (static_cast<uint32_t>(imported->threads_size()) != report->threads) {
    return "the import report and the profile disagree on the threads";
  }
  NullSymbolSource symbols;
  profile::Profile expected = session.BuildProfile(symbols, 1);
  expected.set_format_version(kProfileFormatVersion);
  expected.clear_process();  // warnings and end time are the import's own
  imported->clear_process();
  if (DeterministicBytes(*imported) != DeterministicBytes(expected)) {
    return "the imported profile differs from the one built from the same stream in memory";
  }
  return "";
}

}  // namespace cilkprof::aggregator::fuzzing
