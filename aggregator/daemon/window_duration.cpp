// Parsing --window (see window_duration.h).
#include "window_duration.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace cilkprof::daemon {

Result<std::chrono::seconds> ParseWindowDuration(const std::string& text) {
  const std::string usage =
      fmt::format("--window '{}': give a number with a unit, s, m or h, from 1s to 24h, e.g. 60s or 10m", text);
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.')) {
    return Status::Error(usage);
  }
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value)) return Status::Error(usage);
  const std::string unit(end);
  double scale = 0;
  if (unit == "s") scale = 1;
  else if (unit == "m") scale = 60;
  else if (unit == "h") scale = 3600;
  else return Status::Error(usage);
  const double seconds = value * scale;
  if (seconds < double(kMinWindow.count()) ||
      seconds > double(std::chrono::duration_cast<std::chrono::seconds>(kMaxWindow).count()) ||
      seconds != std::floor(seconds)) {
    return Status::Error(usage + " (a whole number of seconds)");
  }
  return std::chrono::seconds(static_cast<long long>(seconds));
}

}  // namespace cilkprof::daemon
