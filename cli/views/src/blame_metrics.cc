#include "cilkprof/views/blame_metrics.h"

#include <optional>

namespace cilkprof::views {
namespace {

std::optional<size_t> IndexOf(const ViewTree& tree, const std::string& name) {
  for (size_t m = 0; m < tree.metrics.size(); ++m) {
    if (tree.metrics[m].name == name) return m;
  }
  return std::nullopt;
}

size_t EnsureMetric(ViewTree* tree, const MetricInfo& info) {
  if (auto m = IndexOf(*tree, info.name)) return *m;
  tree->metrics.push_back(info);
  return tree->metrics.size() - 1;
}

double At(const std::vector<double>& values, size_t m) { return m < values.size() ? values[m] : 0.0; }

struct Columns {
  size_t work, idleness, overhead, effort, idle_pct, overhead_pct;
};

void Derive(std::vector<double>* values, const Columns& c, size_t count) {
  values->resize(count, 0.0);
  const double effort = At(*values, c.work) + At(*values, c.idleness) + At(*values, c.overhead);
  (*values)[c.effort] = effort;
  (*values)[c.idle_pct] = effort > 0 ? 100.0 * At(*values, c.idleness) / effort : 0.0;
  (*values)[c.overhead_pct] = effort > 0 ? 100.0 * At(*values, c.overhead) / effort : 0.0;
}

}  // namespace

bool HasBlameMetrics(const ViewTree& tree) {
  return IndexOf(tree, "work") && IndexOf(tree, "idleness") && IndexOf(tree, "overhead");
}

void AddBlameMetrics(ViewTree* tree) {
  if (!HasBlameMetrics(*tree)) return;
  Columns c{};
  c.work = *IndexOf(*tree, "work");
  c.idleness = *IndexOf(*tree, "idleness");
  c.overhead = *IndexOf(*tree, "overhead");
  c.effort = EnsureMetric(tree, {kEffortMetric, "ns", "work + idleness + overhead (HPCToolkit's total effort)"});
  c.idle_pct = EnsureMetric(tree, {kIdlenessPercentMetric, "%", "idleness as a percentage of effort"});
  c.overhead_pct = EnsureMetric(tree, {kOverheadPercentMetric, "%", "overhead as a percentage of effort"});
  const size_t count = tree->metrics.size();
  for (ViewNode& node : tree->nodes) {
    Derive(&node.inclusive, c, count);
    Derive(&node.exclusive, c, count);
  }
  Derive(&tree->program_total, c, count);
}

std::string InterpretBlame(double idleness_percent, double overhead_percent) {
  const bool idle = idleness_percent >= kHighIdlenessPercent;
  const bool overhead = overhead_percent >= kHighOverheadPercent;
  if (!idle && !overhead) return "effectively parallel";
  if (!idle && overhead) return "coarsen the granularity (tasks too small for their scheduling cost)";
  if (idle && !overhead) return "refine the granularity (not enough parallelism to keep workers busy)";
  return "change the parallelization strategy (idle and overhead both high)";
}

}  // namespace cilkprof::views
