// Plain-text tables and CSV fields (see text_table.h).
#include "cilkprof/views/text_table.h"

#include <algorithm>

namespace cilkprof::views {

std::string RenderTextTable(const std::vector<TextColumn>& columns) {
  const size_t rows = columns.empty() ? 0 : columns.front().cells.size();
  std::vector<size_t> width(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    width[c] = columns[c].header.size();
    for (const std::string& cell : columns[c].cells) width[c] = std::max(width[c], cell.size());
  }
  std::string out;
  auto line = [&](auto cell_of) {
    std::string text;
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string& v = cell_of(c);
      const bool last = c + 1 == columns.size();
      if (columns[c].left_aligned) {
        text += v;
        if (!last) text += std::string(width[c] - v.size(), ' ');
      } else {
        text += std::string(width[c] - v.size(), ' ') + v;
      }
      if (!last) text += "  ";
    }
    out += text + "\n";
  };
  line([&](size_t c) -> const std::string& { return columns[c].header; });
  for (size_t r = 0; r < rows; ++r) line([&](size_t c) -> const std::string& { return columns[c].cells[r]; });
  return out;
}

std::string CsvField(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace cilkprof::views
