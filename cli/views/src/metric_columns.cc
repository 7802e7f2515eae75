#include "cilkprof/views/metric_columns.h"

#include "cilkprof/views/blame_metrics.h"
#include "cilkprof/views/locks.h"

namespace cilkprof::views {

MetricColumns MetricColumns::Of(const profile::Profile& profile) {
  std::vector<MetricInfo> stored;
  for (const auto& descriptor : profile.metrics()) {
    stored.push_back({descriptor.name(), descriptor.unit(), descriptor.description()});
  }
  return Of(std::move(stored));
}

MetricColumns MetricColumns::Of(std::vector<MetricInfo> stored) {
  MetricColumns m;
  m.columns_ = std::move(stored);
  m.stored_ = m.columns_.size();
  const size_t work = m.Find("work"), idleness = m.Find("idleness"), overhead = m.Find("overhead");
  if (work < m.stored_ && idleness < m.stored_ && overhead < m.stored_) {
    m.blame_ = true;
    m.work_ = work;
    m.idleness_ = idleness;
    m.overhead_ = overhead;
    // A thread waiting for a lock is neither working nor idle (issue 14): its wait is
    // effort too, when the profile measured it.
    const size_t lock_wait = m.Find(kLockWaitMetric);
    if (lock_wait < m.stored_) m.lock_wait_ = lock_wait;
    m.columns_.push_back({kEffortMetric, "ns",
                          lock_wait < m.stored_ ? "work + idleness + overhead + lock_wait (HPCToolkit's total effort)"
                                                : "work + idleness + overhead (HPCToolkit's total effort)"});
    m.columns_.push_back({kIdlenessPercentMetric, "%", "idleness as a percentage of effort"});
    m.columns_.push_back({kOverheadPercentMetric, "%", "overhead as a percentage of effort"});
  }
  return m;
}

void MetricColumns::Expand(const double* stored, double* all) const {
  for (size_t m = 0; m < stored_; ++m) all[m] = stored[m];
  if (!blame_) return;
  const double effort = stored[work_] + stored[idleness_] + stored[overhead_] +
                        (lock_wait_ != SIZE_MAX ? stored[lock_wait_] : 0.0);
  all[stored_] = effort;
  all[stored_ + 1] = effort > 0 ? 100.0 * stored[idleness_] / effort : 0.0;
  all[stored_ + 2] = effort > 0 ? 100.0 * stored[overhead_] / effort : 0.0;
}

size_t MetricColumns::Find(const std::string& name) const {
  for (size_t m = 0; m < columns_.size(); ++m) {
    if (columns_[m].name == name) return m;
  }
  return columns_.size();
}

Result<size_t> ResolveMetric(const MetricColumns& metrics, const std::string& name) {
  if (metrics.size() == 0) {
    return Status::Error("the profile has no metrics: it holds no samples to show");
  }
  const size_t wanted = metrics.Find(name.empty() ? "work" : name);
  if (wanted < metrics.size()) return wanted;
  if (name.empty()) return size_t{0};
  std::string known;
  for (const auto& metric : metrics.columns()) known += (known.empty() ? "" : ", ") + metric.name;
  return Status::Error("unknown metric '" + name + "'; this profile has: " + known);
}

}  // namespace cilkprof::views
