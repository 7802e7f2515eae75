#include "cilkprof/views/units.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace cilkprof::views {

Scale ChooseScale(const std::string& unit, double total) {
  const double magnitude = std::fabs(total);
  if (unit == "ns") {
    if (magnitude >= 100e9) return {"s", 1e9, 2};
    if (magnitude >= 1e6) return {"ms", 1e6, 1};
    if (magnitude >= 1e3) return {"us", 1e3, 1};
    return {"ns", 1, 0};
  }
  if (unit == "count" || unit.empty()) return {"", 1, 0};
  return {unit, 1, 2};
}

std::string FormatScaled(double value, const Scale& scale) {
  char buffer[64];
  double shown = value / scale.divisor;
  // Avoid printing "-0.0" for values that round to zero.
  if (std::fabs(shown) < 0.5 * std::pow(10.0, -scale.decimals)) shown = 0;
  std::snprintf(buffer, sizeof buffer, "%.*f", scale.decimals, shown);
  return buffer;
}

std::string FormatDuration(double seconds) {
  char buffer[64];
  if (seconds < 1e-3) {
    std::snprintf(buffer, sizeof buffer, "%.0f us", seconds * 1e6);
  } else if (seconds < 1) {
    std::snprintf(buffer, sizeof buffer, "%.1f ms", seconds * 1e3);
  } else if (seconds < 60) {
    std::snprintf(buffer, sizeof buffer, "%.3f s", seconds);
  } else {
    const double minutes = std::floor(seconds / 60);
    std::snprintf(buffer, sizeof buffer, "%.0f min %.1f s", minutes, seconds - 60 * minutes);
  }
  return buffer;
}

std::string FormatPercent(double value, double total) {
  char buffer[32];
  const double percent = total != 0 ? 100.0 * value / total : 0.0;
  std::snprintf(buffer, sizeof buffer, "%.1f%%", std::fabs(percent) < 0.05 ? 0.0 : percent);
  return buffer;
}

std::string FormatExact(double value) {
  char buffer[400];
  // Fixed notation (no exponent) keeps spreadsheets and naive parsers happy.
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed);
  if (ec != std::errc()) return "0";
  return std::string(buffer, end);
}

}  // namespace cilkprof::views
