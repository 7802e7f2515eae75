#include "cilkprof/aggregator/thread_values.h"

#include <algorithm>
#include <numeric>

namespace cilkprof::aggregator {

double* ThreadValueTable::Row(Thread& thread, uint32_t node) {
  auto [it, inserted] = thread.slot_of.try_emplace(node, static_cast<uint32_t>(thread.nodes.size()));
  if (inserted) {
    thread.nodes.push_back(node);
    thread.values.resize(thread.values.size() + metric_count_, 0.0);
  }
  return thread.values.data() + size_t{it->second} * metric_count_;
}

void ThreadValueTable::Add(const ThreadKey& thread, uint32_t node, const double* values, size_t count) {
  count = std::min(count, metric_count_);
  if (std::all_of(values, values + count, [](double v) { return v == 0.0; })) return;
  double* row = Row(threads_[thread], node);
  for (size_t m = 0; m < count; ++m) row[m] += values[m];
}

void ThreadValueTable::Fold(const ThreadValueTable& earlier, const std::vector<uint32_t>& node_map) {
  if (metric_count_ == 0) metric_count_ = earlier.metric_count_;
  const size_t count = std::min(metric_count_, earlier.metric_count_);
  for (const auto& [key, from] : earlier.threads_) {
    for (size_t s = 0; s < from.nodes.size(); ++s) {
      const uint32_t node = from.nodes[s];
      if (node >= node_map.size()) continue;
      Add(key, node_map[node], from.values.data() + s * earlier.metric_count_, count);
    }
  }
}

ThreadValueTable ThreadValueTable::TakeWindow(const std::vector<uint32_t>& node_map) {
  ThreadValueTable window;
  window.metric_count_ = metric_count_;
  for (const auto& [key, from] : threads_) {
    for (size_t s = 0; s < from.nodes.size(); ++s) {
      const uint32_t node = from.nodes[s];
      const uint32_t mapped = node < node_map.size() ? node_map[node] : 0;
      if (node != 0 && mapped == 0) continue;  // the window dropped it: all zeros merged
      window.Add(key, mapped, from.values.data() + s * metric_count_, metric_count_);
    }
  }
  threads_.clear();
  return window;
}

// One column per metric with a non-zero value: the thread's nodes in ascending order,
// delta-coded.
void ThreadValueTable::WriteColumns(const Thread& thread, profile::ThreadValues* out) const {
  std::vector<uint32_t> order(thread.nodes.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return thread.nodes[a] < thread.nodes[b]; });
  for (size_t m = 0; m < metric_count_; ++m) {
    profile::ThreadMetricColumn* column = nullptr;
    uint32_t previous = 0;
    for (uint32_t s : order) {
      const double value = thread.values[size_t{s} * metric_count_ + m];
      if (value == 0.0) continue;
      if (column == nullptr) {
        column = out->add_columns();
        column->set_metric(static_cast<uint32_t>(m));
      }
      column->add_node_delta(thread.nodes[s] - previous);
      column->add_value(value);
      previous = thread.nodes[s];
    }
  }
}

void ThreadValueTable::Build(const std::map<ThreadKey, uint32_t>& positions, profile::Profile* out) const {
  // The threads by their total of the first metric (samples), most first; ties by key.
  std::vector<std::pair<double, const std::pair<const ThreadKey, Thread>*>> ranked;
  for (const auto& entry : threads_) {
    if (positions.count(entry.first) == 0) continue;
    double total = 0;
    if (metric_count_ > 0) {
      for (size_t s = 0; s < entry.second.nodes.size(); ++s) total += entry.second.values[s * metric_count_];
    }
    ranked.emplace_back(total, &entry);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });

  const size_t own = std::min(ranked.size(), kMaxThreadColumns);
  for (size_t r = 0; r < own; ++r) {
    profile::ThreadValues* entry = out->add_thread_values();
    entry->add_threads(positions.at(ranked[r].second->first));
    WriteColumns(ranked[r].second->second, entry);
  }
  if (ranked.size() == own) return;
  // The rest, summed into one group (in thread order, so the file does not depend on
  // the ranking's ties).
  std::vector<uint32_t> members;
  Thread group;
  ThreadValueTable summer;
  summer.metric_count_ = metric_count_;
  for (size_t r = own; r < ranked.size(); ++r) {
    const auto& [key, thread] = *ranked[r].second;
    members.push_back(positions.at(key));
    for (size_t s = 0; s < thread.nodes.size(); ++s) {
      double* row = summer.Row(group, thread.nodes[s]);
      for (size_t m = 0; m < metric_count_; ++m) row[m] += thread.values[s * metric_count_ + m];
    }
  }
  std::sort(members.begin(), members.end());
  profile::ThreadValues* entry = out->add_thread_values();
  for (uint32_t p : members) entry->add_threads(p);
  WriteColumns(group, entry);
}

}  // namespace cilkprof::aggregator
