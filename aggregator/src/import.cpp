// Spill file -> profile (see import.h).
#include "cilkprof/aggregator/import.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "cilkprof/aggregator/framing.h"
#include "cilkprof/aggregator/profile_io.h"
#include "cilkprof/aggregator/session.h"

namespace cilkprof::aggregator {
namespace {

// A spill file is written by one process; its frames are bounded like a socket's.
constexpr size_t kChunkBytes = 1 << 20;

Result<ImportReport> Import(const std::string& spill_path, const std::string& output_path,
                            const SymbolSourceFactory& symbols) {
  const int fd = ::open(spill_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Status::Error(fmt::format("{}: cannot open ({}); check the path and its permissions",
                                     spill_path, std::strerror(err)));
  }
  struct stat st {};
  ::fstat(fd, &st);
  FrameDecoder decoder;
  Session session;
  ImportReport report;
  std::string stop_reason;  // why merging stopped before the end of the file
  uint64_t merged_through = 0;  // file offset just past the last message merged
  std::string chunk(kChunkBytes, '\0');
  wire::AgentMessage message;
  while (stop_reason.empty()) {
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      stop_reason = fmt::format("read error ({})", std::strerror(errno));
      break;
    }
    if (n == 0) {
      if (Status end = decoder.Finish(); !end.ok()) stop_reason = end.message();
      break;
    }
    decoder.Feed(std::string_view(chunk.data(), static_cast<size_t>(n)));
    while (decoder.Next(&message)) {
      if (Status status = session.Apply(message); !status.ok()) {
        stop_reason = fmt::format("message {} is invalid: {}", decoder.frames_decoded(),
                                  status.message());
        break;
      }
      ++report.messages;
      merged_through = decoder.bytes_decoded();
    }
    if (stop_reason.empty() && !decoder.status().ok()) stop_reason = decoder.status().message();
  }
  ::close(fd);

  if (!session.has_hello()) {
    return Status::Error(fmt::format(
        "{}: not a Cilkprof spill file: it does not start with the agent's Hello message{}; pass "
        "a file the agent wrote when it could not reach the aggregator",
        spill_path, stop_reason.empty() ? "" : " (" + stop_reason + ")"));
  }
  if (!stop_reason.empty()) {
    const std::string warning = fmt::format(
        "the spill file {} is incomplete or damaged ({}); imported the {} messages before byte {} "
        "and nothing after it",
        spill_path, stop_reason, report.messages, merged_through);
    session.AddWarning(warning);
    report.warnings.push_back(warning);
    spdlog::warn("{}", warning);
  }
  if (decoder.legacy_format()) {
    // Nothing could be checked: say so, so that a damaged old file is never taken at
    // face value (framing.h).
    const std::string warning = fmt::format(
        "the spill file {} has no checksums (written by an older agent): damage in it cannot be "
        "detected",
        spill_path);
    session.AddWarning(warning);
    report.warnings.push_back(warning);
    spdlog::warn("{}", warning);
  }
  report.complete = stop_reason.empty() && session.has_goodbye();

  const uint64_t mtime_ns =
      uint64_t(st.st_mtim.tv_sec) * 1000000000ull + uint64_t(st.st_mtim.tv_nsec);
  std::unique_ptr<SymbolSource> source = symbols();
  const profile::Profile profile = session.BuildProfile(*source, mtime_ns);
  CILKPROF_RETURN_IF_ERROR(WriteProfileFile(output_path, profile));
  // Symbolization warnings are part of the profile too; report them all.
  report.warnings.assign(profile.process().warnings().begin(), profile.process().warnings().end());
  report.process.pid = session.hello().pid();
  report.process.ppid = session.hello().ppid();
  report.process.executable = session.hello().executable();
  report.path = output_path;
  report.totals = profile.totals();
  report.threads = static_cast<uint32_t>(profile.threads_size());
  return report;
}

}  // namespace

Result<ImportReport> ImportFrameStream(const std::string& spill_path,
                                       const std::string& output_path,
                                       const SymbolSourceFactory& symbols) {
  if (!symbols) return Status::Error("no symbolizer given to ImportFrameStream");
  try {
    return Import(spill_path, output_path, symbols);
  } catch (const std::exception& e) {
    return Status::Error(fmt::format("importing {} failed: {}", spill_path, e.what()));
  }
}

}  // namespace cilkprof::aggregator
