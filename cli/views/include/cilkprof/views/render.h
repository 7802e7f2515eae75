// Renderers of a view (walk.h): text for people, JSON and CSV for scripts. They
// stream: each row is written as the walk reaches it, so output of any size needs no
// more memory than the path being printed. JSON and CSV are a stable contract,
// documented in docs/USER_GUIDE.md.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "cilkprof/views/walk.h"

namespace cilkprof::views {

// Where rendered text goes: a FILE, written in large blocks as the buffer fills, or a
// string (tests, the summary).
class OutputSink {
 public:
  OutputSink() = default;                            // into text()
  explicit OutputSink(std::FILE* file) : file_(file) {}
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;
  ~OutputSink() { Flush(); }

  void Append(std::string_view text) {
    buffer_.append(text);
    if (file_ != nullptr && buffer_.size() >= kBlock) Flush();
  }
  // Writes what is buffered (to the FILE); false once any write has failed.
  bool Flush();
  std::string& text() { return buffer_; }  // without a FILE: everything appended

 private:
  static constexpr size_t kBlock = 1 << 16;
  std::FILE* file_ = nullptr;
  std::string buffer_;
  bool failed_ = false;
};

// What the text header names.
struct ViewHeader {
  std::string profile_path;
  std::string program;  // executable path
  uint32_t pid = 0;
  bool default_threshold = false;  // the threshold was not asked for: say how to see every row
};

// One header line, a column header, then one row per node, indented two spaces per
// level: "Incl work (ms)   Incl%  Excl work (ms)   Excl%  Function". Spawn edges read
// "[spawn] f", inlined functions "f (inline)", unknown code "?? [module]". With
// work/span data the call-site columns follow the sampled ones:
// "Work(instr) (ms)  Span (ms)  Parallelism  Span %", blank on rows without sites
// (callsite_columns.h). Column widths are fixed by the program's totals (no value in
// a column can exceed them), so rows print as they come.
void RenderText(const ViewSource& source, ViewKind kind, const ViewOptions& options, const ViewHeader& header,
                OutputSink& out);

// The tree as nested objects, each with exactly: name, file, line, module, edge
// ("call"/"spawn"), inlined (true for inlined code), metrics ({metric: {"inclusive": x,
// "exclusive": y}} for every metric, in the profile's raw units) and children; rows
// carrying call sites also "callsite" ({work_instr, span, parallelism (null when the
// span is 0), span_percent, count, unit}) before children. One object per line,
// indented by depth. Ends with a newline.
void RenderJson(const ViewSource& source, const ViewOptions& options, OutputSink& out);

// One row per node in display order: depth, path (names from the view root joined
// with ';'), name, file, line, module, edge, inlined (0 or 1), then <metric>_inclusive
// and <metric>_exclusive for every metric, then with work/span data work_instr, span,
// parallelism, span_percent (empty on rows without sites). RFC 4180 quoting.
void RenderCsv(const ViewSource& source, const ViewOptions& options, OutputSink& out);

// The same into strings.
std::string RenderText(const ViewSource& source, ViewKind kind, const ViewOptions& options, const ViewHeader& header);
std::string RenderJson(const ViewSource& source, const ViewOptions& options);
std::string RenderCsv(const ViewSource& source, const ViewOptions& options);

}  // namespace cilkprof::views
