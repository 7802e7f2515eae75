// The metric columns of a view: the profile's own metrics, stored per row, followed
// (for profiles with blame) by the derived blame metrics of blame_metrics.h, computed
// from a row's stored values when it is shown and never stored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cilkprof/common/status.h"
#include "cilkprof/profile.pb.h"

namespace cilkprof::views {

struct MetricInfo {
  std::string name;
  std::string unit;  // "ns", "count", "%"
  std::string description;
};

class MetricColumns {
 public:
  MetricColumns() = default;
  // The profile's metrics, then effort, % idleness and % overhead when it has the
  // sampled blame metrics (`work`, `idleness` and `overhead`). Effort includes
  // `lock_wait` when the profile has it (issue 14; older profiles do not).
  static MetricColumns Of(const profile::Profile& profile);
  // The same from a list of stored metrics (tests, synthetic trees).
  static MetricColumns Of(std::vector<MetricInfo> stored);

  size_t size() const { return columns_.size(); }  // every column
  size_t stored() const { return stored_; }         // the profile's own, stored per row
  const MetricInfo& operator[](size_t m) const { return columns_[m]; }
  const std::vector<MetricInfo>& columns() const { return columns_; }
  bool has_blame() const { return blame_; }

  // Every column's value from a row's stored values (`all` holds size() values).
  void Expand(const double* stored, double* all) const;
  // The index of a column by name; size() when absent.
  size_t Find(const std::string& name) const;

 private:
  std::vector<MetricInfo> columns_;
  size_t stored_ = 0;
  bool blame_ = false;
  size_t work_ = 0, idleness_ = 0, overhead_ = 0;  // stored indices, with blame
  size_t lock_wait_ = SIZE_MAX;                    // stored index of lock_wait; SIZE_MAX: none
};

// The index of metric `name`; "" picks the default: "work" when present, else the
// first. Errors list the metrics the profile has.
Result<size_t> ResolveMetric(const MetricColumns& metrics, const std::string& name);

}  // namespace cilkprof::views
