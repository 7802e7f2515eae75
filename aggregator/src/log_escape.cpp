// Escaping of cilkprofd's log lines (see log_escape.h).
#include "cilkprof/aggregator/log_escape.h"

#include <fmt/format.h>

#include <cstdint>

namespace cilkprof::aggregator {
namespace {

// The length of the valid UTF-8 sequence at `text[at]` (2 to 4), or 0.
size_t Utf8SequenceLength(std::string_view text, size_t at, uint32_t* code_point) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  size_t length = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, cp = lead & 0x1f, min = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, cp = lead & 0x0f, min = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (byte(at + i) & 0x3f);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not valid UTF-8.
  if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
  *code_point = cp;
  return length;
}

// Characters that move or reorder what a reader sees.
bool IsLayoutControl(uint32_t cp) {
  return cp == 0x2028 || cp == 0x2029 ||                  // line, paragraph separator
         cp == 0x200e || cp == 0x200f || cp == 0x061c ||  // direction marks
         (cp >= 0x202a && cp <= 0x202e) ||                // embeddings, overrides
         (cp >= 0x2066 && cp <= 0x2069);                  // isolates
}

}  // namespace

std::string EscapeForLog(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[at]);
    if (c >= 0x20 && c < 0x7f) {
      if (c == '\\') out += '\\';
      out += static_cast<char>(c);
      ++at;
      continue;
    }
    switch (c) {
      case '\n': out += "\\n"; ++at; continue;
      case '\r': out += "\\r"; ++at; continue;
      case '\t': out += "\\t"; ++at; continue;
      default: break;
    }
    uint32_t cp = 0;
    const size_t length = c >= 0x80 ? Utf8SequenceLength(text, at, &cp) : 0;
    if (length == 0 || (cp >= 0x80 && cp <= 0x9f)) {  // a control, or not UTF-8
      for (size_t i = 0; i < (length == 0 ? 1 : length); ++i) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[at + i]));
      }
      at += length == 0 ? 1 : length;
    } else if (IsLayoutControl(cp)) {
      out += fmt::format("\\u{{{:04x}}}", cp);
      at += length;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

}  // namespace cilkprof::aggregator
