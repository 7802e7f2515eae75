// Per-lock totals merged from LockDelta entries (see lock_table.h).
#include "cilkprof/aggregator/lock_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

namespace cilkprof::aggregator {

void LockTable::Totals::Add(const Totals& in) {
  kind = in.kind;
  contended += in.contended;
  wait_ns += in.wait_ns;
  blame_ns += in.blame_ns;
  timeouts += in.timeouts;
  acquisitions += in.acquisitions;
}

Status LockTable::Validate(const google::protobuf::RepeatedPtrField<wire::LockDelta>& locks,
                           const std::function<bool(uint32_t)>& module_known) {
  std::set<std::pair<uint32_t, uint64_t>> seen;
  for (const wire::LockDelta& lock : locks) {
    if (!wire::LockKind_IsValid(lock.kind())) {
      return Status::Error(fmt::format("lock {}+0x{:x} has an unknown lock kind {}", lock.module_id(),
                                       lock.offset(), static_cast<int>(lock.kind())));
    }
    if (!module_known(lock.module_id())) {
      return Status::Error(fmt::format("lock at offset 0x{:x} refers to unknown load module {}",
                                       lock.offset(), lock.module_id()));
    }
    if (!seen.emplace(lock.module_id(), lock.offset()).second) {
      return Status::Error(fmt::format(
          "lock {}+0x{:x} has two entries in one Delta (at most one per lock)", lock.module_id(),
          lock.offset()));
    }
  }
  return Status::Ok();
}

void LockTable::Merge(const google::protobuf::RepeatedPtrField<wire::LockDelta>& locks,
                      const std::function<uint32_t(uint32_t)>& module_index) {
  for (const wire::LockDelta& lock : locks) {
    const uint32_t module = lock.module_id() == 0 ? 0 : module_index(lock.module_id());
    locks_[{module, lock.offset()}].Add(Totals{static_cast<int>(lock.kind()), lock.contended(),
                                               lock.wait_ns(), lock.blame_ns(), lock.timeouts(),
                                               lock.acquisitions()});
  }
}

void LockTable::Fold(const LockTable& earlier, const std::vector<uint32_t>& module_map) {
  for (const auto& [key, totals] : earlier.locks_) {
    const auto [module, offset] = key;
    auto [it, inserted] = locks_.emplace(std::make_pair(module_map.at(module), offset), totals);
    // This image's kind stays: it is the later one.
    if (!inserted) {
      const int kind = it->second.kind;
      it->second.Add(totals);
      it->second.kind = kind;
    }
  }
}

void LockTable::Build(const std::function<uint32_t(uint32_t, uint64_t)>& location_of,
                      profile::Profile* out) const {
  using Entry = std::pair<std::pair<uint32_t, uint64_t>, const Totals*>;
  std::vector<Entry> sorted;
  sorted.reserve(locks_.size());
  for (const auto& [key, totals] : locks_) sorted.emplace_back(key, &totals);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    return std::tie(b.second->wait_ns, b.second->blame_ns) < std::tie(a.second->wait_ns, a.second->blame_ns);
  });
  for (const auto& [key, totals] : sorted) {
    profile::Lock* lock = out->add_locks();
    lock->set_location(location_of(key.first, key.second));
    lock->set_kind(static_cast<wire::LockKind>(totals->kind));
    lock->set_contended(totals->contended);
    lock->set_wait_ns(totals->wait_ns);
    lock->set_blame_ns(totals->blame_ns);
    lock->set_timeouts(totals->timeouts);
    lock->set_acquisitions(totals->acquisitions);
  }
}

}  // namespace cilkprof::aggregator
