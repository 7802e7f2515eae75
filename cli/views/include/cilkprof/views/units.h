// Human units for metric values: nanoseconds become ns/us/ms/s, counts stay counts.
// One scale per column, chosen from the column's total so values line up and compare.
#pragma once

#include <string>

namespace cilkprof::views {

struct Scale {
  std::string suffix;    // shown in the column header: "ms"; "" for plain counts
  double divisor = 1;    // value / divisor is printed
  int decimals = 0;
};

// The scale for a column of `unit` values whose largest value is `total`.
Scale ChooseScale(const std::string& unit, double total);

// value / divisor with the scale's decimals ("12.5").
std::string FormatScaled(double value, const Scale& scale);

// A duration for prose: "850 us", "12.3 ms", "1.234 s", "2 min 3.4 s".
std::string FormatDuration(double seconds);

// "12.3%" of total (0.0% when total is 0).
std::string FormatPercent(double value, double total);

// Shortest text that reads back as the same double (for CSV).
std::string FormatExact(double value);

}  // namespace cilkprof::views
