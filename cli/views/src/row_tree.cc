#include "cilkprof/views/row_tree.h"

#include <algorithm>

namespace cilkprof::views {
namespace {

constexpr uint32_t kEmpty = UINT32_MAX;

uint64_t SlotHash(uint32_t parent, LabelId label, Edge edge) {
  uint64_t h = (uint64_t{parent} << 32 | label) * 0x9E3779B97F4A7C15ull;
  h ^= static_cast<uint64_t>(edge) * 0xC2B2AE3D27D4EB4Full;
  return h ^ (h >> 31);
}

}  // namespace

std::span<const uint32_t> RowTree::sites(uint32_t n) const {
  if (site_offsets_.empty()) return {};
  return {site_ids_.data() + site_offsets_[n], site_ids_.data() + site_offsets_[n + 1]};
}

RowTreeBuilder::RowTreeBuilder(TreeContext context, LabelId root_label, Inclusive inclusive)
    : context_(std::move(context)), metric_count_(context_.metrics.stored()), inclusive_mode_(inclusive) {
  label_.push_back(root_label);
  parent_.push_back(0);
  flags_.push_back(0);
  if (inclusive_mode_ == Inclusive::kAsAdded) inclusive_.assign(metric_count_, 0.0);
  exclusive_.assign(metric_count_, 0.0);
  slots_.assign(1024, kEmpty);
}

uint32_t RowTreeBuilder::Find(uint32_t parent, LabelId label, Edge edge) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = SlotHash(parent, label, edge) & mask;; i = (i + 1) & mask) {
    const uint32_t row = slots_[i];
    if (row == kEmpty) return kEmpty;
    if (parent_[row] == parent && label_[row] == label &&
        static_cast<Edge>(flags_[row] & RowTree::kEdgeMask) == edge) {
      return row;
    }
  }
}

void RowTreeBuilder::Index(uint32_t row) {
  const size_t mask = slots_.size() - 1;
  const Edge edge = static_cast<Edge>(flags_[row] & RowTree::kEdgeMask);
  size_t i = SlotHash(parent_[row], label_[row], edge) & mask;
  while (slots_[i] != kEmpty) i = (i + 1) & mask;
  slots_[i] = row;
}

void RowTreeBuilder::Grow() {
  slots_.assign(slots_.size() * 2, kEmpty);
  for (uint32_t row = 1; row < size(); ++row) Index(row);
}

uint32_t RowTreeBuilder::Add(uint32_t parent, LabelId label, Edge edge, bool inlined) {
  const uint32_t row = size();
  label_.push_back(label);
  parent_.push_back(parent);
  flags_.push_back(static_cast<uint8_t>(static_cast<uint8_t>(edge) |
                                        (inlined ? RowTree::kInlinedFlag : 0)));
  if (inclusive_mode_ == Inclusive::kAsAdded) inclusive_.resize(inclusive_.size() + metric_count_, 0.0);
  exclusive_.resize(exclusive_.size() + metric_count_, 0.0);
  if (2 * size() > slots_.size()) {
    Grow();  // indexes the new row too
  } else {
    Index(row);
  }
  return row;
}

uint32_t RowTreeBuilder::FindOrAdd(uint32_t parent, LabelId label, Edge edge, bool inlined) {
  const uint32_t found = Find(parent, label, edge);
  if (found == kEmpty) return Add(parent, label, edge, inlined);
  if (!inlined) flags_[found] &= static_cast<uint8_t>(~RowTree::kInlinedFlag);
  return found;
}

void RowTreeBuilder::AddExclusive(uint32_t row, const double* values) {
  double* to = exclusive_.data() + size_t{row} * metric_count_;
  for (size_t m = 0; m < metric_count_; ++m) to[m] += values[m];
}

void RowTreeBuilder::AddInclusive(uint32_t row, const double* values) {
  double* to = inclusive_.data() + size_t{row} * metric_count_;
  for (size_t m = 0; m < metric_count_; ++m) to[m] += values[m];
}

void RowTreeBuilder::AddSites(uint32_t row, std::span<const uint32_t> sites) {
  for (uint32_t site : sites) sites_.emplace_back(row, site);
}

void RowTreeBuilder::SetInlined(uint32_t row, bool inlined) {
  flags_[row] = static_cast<uint8_t>((flags_[row] & ~RowTree::kInlinedFlag) | (inlined ? RowTree::kInlinedFlag : 0));
}

namespace {

// to[new] = from[order[new]] for rows of `width` values; `from` is freed.
template <typename T>
std::vector<T> Permuted(std::vector<T>& from, const std::vector<uint32_t>& order, size_t width) {
  std::vector<T> to(order.size() * width);
  for (size_t i = 0; i < order.size(); ++i) {
    std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(order[i] * width), width,
                to.begin() + static_cast<std::ptrdiff_t>(i * width));
  }
  from = {};
  return to;
}

}  // namespace

RowTree RowTreeBuilder::Finish() {
  slots_ = {};
  const uint32_t n = size();
  const size_t m_count = metric_count_;
  // Children lists in creation order (CSR), then a depth-first numbering.
  std::vector<uint32_t> first(n + 1, 0), children(n > 0 ? n - 1 : 0);
  for (uint32_t row = 1; row < n; ++row) ++first[parent_[row] + 1];
  for (uint32_t row = 0; row < n; ++row) first[row + 1] += first[row];
  {
    std::vector<uint32_t> next(first.begin(), first.end() - 1);
    for (uint32_t row = 1; row < n; ++row) children[next[parent_[row]]++] = row;
  }
  std::vector<uint32_t> order;  // order[new] = old
  order.reserve(n);
  std::vector<uint32_t> stack{0};
  while (!stack.empty()) {
    const uint32_t row = stack.back();
    stack.pop_back();
    order.push_back(row);
    for (uint32_t c = first[row + 1]; c-- > first[row];) stack.push_back(children[c]);
  }
  children = {};
  first = {};
  std::vector<uint32_t> new_of(n);
  for (uint32_t i = 0; i < n; ++i) new_of[order[i]] = i;

  RowTree tree;
  tree.context_ = std::move(context_);
  tree.label_ = Permuted(label_, order, 1);
  tree.flags_ = Permuted(flags_, order, 1);
  tree.parent_ = Permuted(parent_, order, 1);
  for (uint32_t i = 1; i < n; ++i) tree.parent_[i] = new_of[tree.parent_[i]];
  tree.parent_[0] = 0;
  tree.exclusive_ = Permuted(exclusive_, order, m_count);
  if (inclusive_mode_ == Inclusive::kAsAdded) {
    tree.inclusive_ = Permuted(inclusive_, order, m_count);
  } else {
    tree.inclusive_ = tree.exclusive_;
  }
  order = {};
  // Subtree ends and, for top-down, inclusive sums: children follow their parents.
  tree.end_.resize(n);
  for (uint32_t i = 0; i < n; ++i) tree.end_[i] = i + 1;
  for (uint32_t i = n; i-- > 1;) {
    const uint32_t p = tree.parent_[i];
    tree.end_[p] = std::max(tree.end_[p], tree.end_[i]);
    if (inclusive_mode_ == Inclusive::kFromExclusive) {
      for (size_t m = 0; m < m_count; ++m) tree.inclusive_[size_t{p} * m_count + m] += tree.inclusive_[size_t{i} * m_count + m];
    }
  }
  if (tree.context_.program_total.empty()) {
    tree.context_.program_total.assign(tree.inclusive_.begin(), tree.inclusive_.begin() + static_cast<std::ptrdiff_t>(m_count));
  }
  if (!sites_.empty()) {
    for (auto& [row, site] : sites_) row = new_of[row];
    std::sort(sites_.begin(), sites_.end());
    sites_.erase(std::unique(sites_.begin(), sites_.end()), sites_.end());
    tree.site_offsets_.assign(size_t{n} + 1, 0);
    tree.site_ids_.reserve(sites_.size());
    for (const auto& [row, site] : sites_) {
      ++tree.site_offsets_[row + 1];
      tree.site_ids_.push_back(site);
    }
    for (uint32_t i = 0; i < n; ++i) tree.site_offsets_[i + 1] += tree.site_offsets_[i];
    sites_ = {};
  }
  return tree;
}

}  // namespace cilkprof::views
