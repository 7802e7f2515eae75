// Escaping of what cilkprofd and cilkprof run write to their logs. Log lines carry text that clients
// choose (program names, paths, argv): a newline in it would forge a line of its own
// (journald splits at newlines), an escape sequence would rewrite the terminal of the
// person reading the log, a bidirectional override would reorder what they see.
#pragma once

#include <string>
#include <string_view>

namespace cilkprof::aggregator {

// Returns `text` with every character that is not printable written as an escape:
// \n, \r, \t and \\ (so that an escape in the output is never ambiguous), \xNN for
// the other C0 controls, DEL, the C1 controls (as their UTF-8 bytes) and each byte
// that is not valid UTF-8, and \u{XXXX} for the Unicode line and paragraph separators
// and the bidirectional formatting characters. Printable UTF-8 passes unchanged.
std::string EscapeForLog(std::string_view text);

}  // namespace cilkprof::aggregator
