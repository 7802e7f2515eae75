#include "cilkprof/views/metric_columns.h"

#include "cilkprof/views/blame_metrics.h"

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
    m.columns_.push_back({kEffortMetric, "ns", "work + idleness + overhead (HPCToolkit's total effort)"});
    m.columns_.push_back({kIdlenessPercentMetric, "%", "idleness as a percentage of effort"});
    m.columns_.push_back({kOverheadPercentMetric, "%", "overhead as a percentage of effort"});
  }
  return m;
}

void MetricColumns::Expand(const double* stored, double* all) const {
  for (size_t m = 0; m < stored_; ++m) all[m] = stored[m];
  if (!blame_) return;
  const double effort = stored[work_] + stored[idleness_] + stored[overhead_];
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
