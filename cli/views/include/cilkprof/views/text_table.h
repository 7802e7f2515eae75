// Plain-text and CSV building blocks shared by the table views (`view callsites`,
// `view strands`, the tree views' CSV).
#pragma once

#include <string>
#include <vector>

namespace cilkprof::views {

struct TextColumn {
  std::string header;
  bool left_aligned = false;  // text columns; numbers are right-aligned
  std::vector<std::string> cells;
};

// The header line and one line per row, columns two spaces apart, each as wide as its
// widest cell; the last column is not padded. Every column must have as many cells.
std::string RenderTextTable(const std::vector<TextColumn>& columns);

// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
std::string CsvField(const std::string& field);

}  // namespace cilkprof::views
