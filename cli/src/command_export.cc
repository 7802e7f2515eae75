// `cilkprof export PROFILE --format FORMAT [-o FILE]` and `cilkprof flamegraph PROFILE
// -o FILE.svg`: a profile in the formats other tools read (export/exporters.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#include "analysis_input.h"
#include "commands.h"
#include "export/exporters.h"
#include "progress.h"

namespace cilkprof::cli {
namespace {

std::string FormatList() {
  std::string list;
  for (const exporters::Format& f : exporters::Formats()) list += (list.empty() ? "" : ", ") + f.name;
  return list;
}

// Writes through a temporary file in the same directory, renamed into place once the
// exporter has written it all: a failed export never leaves a truncated file under the
// name. Only a regular file (or nothing) is replaced. The exporter writes straight to
// the file: an export's memory does not hold its output (folded stacks of a large
// profile run to hundreds of MB).
Status WriteFileAtomically(const std::string& path, const std::function<Status(std::ostream&)>& write) {
  struct stat st;
  if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return Status::Error(path + " exists and is not a regular file; choose another -o path");
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string temporary = dir + "/.cilkprof-export-XXXXXX";
  const int fd = mkstemp(temporary.data());
  if (fd < 0) {
    return Status::Error("cannot write in " + dir + " (" + std::strerror(errno) + "); choose another -o path");
  }
  fchmod(fd, 0644);
  close(fd);
  Status written = Status::Ok();
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    written = write(out);
    out.flush();
    if (written.ok() && !out) written = Status::Error("cannot write " + path + ": " + std::strerror(errno));
  }
  if (!written.ok()) {
    unlink(temporary.c_str());
    return written;
  }
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temporary.c_str());
    return Status::Error("cannot write " + path + ": " + std::strerror(error));
  }
  return Status::Ok();
}

}  // namespace

int RunExport(const ExportArgs& args) {
  const exporters::Format* format = exporters::FindFormat(args.format);
  if (format == nullptr) {
    PrintError("unknown format '" + args.format + "'; the formats are " + FormatList());
    return kExitUsage;
  }
  if (format->binary && args.output.empty() && isatty(STDOUT_FILENO)) {
    PrintError("--format " + format->name + " writes a binary file: give -o FILE");
    return kExitUsage;
  }
  Progress progress(true);
  std::optional<AnalysisInput> input = LoadForAnalysis(args.profile, progress);
  if (!input) return kExitFailure;
  exporters::ExportOptions options;
  options.metric = args.metric;
  options.inverted = args.inverted;
  options.profile_path = args.profile;
  progress.Stage("writing " + (args.output.empty() ? std::string("the ") + format->name : args.output));
  if (args.output.empty()) {
    // Standard output: built first, so that an error leaves nothing half-written there.
    std::ostringstream out;
    const Status written = format->write(*input, options, out);
    progress.Clear();
    if (!written.ok()) {
      PrintError(written.message());
      return kExitFailure;
    }
    return WriteStdout(out.str(), "the " + format->name + " export");
  }
  const Status saved = WriteFileAtomically(
      args.output, [&](std::ostream& out) { return format->write(*input, options, out); });
  progress.Clear();
  if (!saved.ok()) {
    PrintError(saved.message());
    return kExitFailure;
  }
  return 0;
}

}  // namespace cilkprof::cli
