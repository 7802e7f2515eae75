// `cilkprof export PROFILE --format FORMAT [-o FILE]` and `cilkprof flamegraph PROFILE
// -o FILE.svg`: a profile in the formats other tools read (export/exporters.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
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

// Writes `text` to `path` through a temporary file in the same directory, renamed into
// place once complete: a failed export never leaves a truncated file under the name.
// Only a regular file (or nothing) is replaced.
Status WriteFileAtomically(const std::string& path, const std::string& text) {
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
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const int write_errno = errno;
  if (close(fd) != 0 || done != text.size()) {
    unlink(temporary.c_str());
    return Status::Error("cannot write " + path + ": " + std::strerror(write_errno));
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
  std::ostringstream out;
  const Status written = format->write(*input, options, out);
  progress.Clear();
  if (!written.ok()) {
    PrintError(written.message());
    return kExitFailure;
  }
  if (args.output.empty()) return WriteStdout(out.str(), "the " + format->name + " export");
  if (Status saved = WriteFileAtomically(args.output, out.str()); !saved.ok()) {
    PrintError(saved.message());
    return kExitFailure;
  }
  return 0;
}

}  // namespace cilkprof::cli
