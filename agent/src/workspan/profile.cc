#include "workspan/profile.h"

#include <cstring>

namespace cilkprof::agent::workspan {

bool Profile::Reserve(Pool& pool, uint32_t capacity) {
  if (capacity <= capacity_) return true;
  uint32_t grown = capacity_ == 0 ? 4 : capacity_ * 2;
  while (grown < capacity) grown *= 2;
  auto* fresh = static_cast<ProfileEntry*>(pool.Allocate(sizeof(ProfileEntry) * grown));
  if (fresh == nullptr) return false;
  if (size_ != 0) std::memcpy(fresh, data_, sizeof(ProfileEntry) * size_);
  pool.Free(data_);
  data_ = fresh;
  capacity_ = grown;
  return true;
}

bool Profile::Add(Pool& pool, uint32_t site, uint64_t work, uint64_t span) {
  uint32_t lo = 0, hi = size_;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (data_[mid].site < site) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < size_ && data_[lo].site == site) {
    data_[lo].work += work;
    data_[lo].span += span;
    return true;
  }
  if (!Reserve(pool, size_ + 1)) return false;
  std::memmove(data_ + lo + 1, data_ + lo, sizeof(ProfileEntry) * (size_ - lo));
  data_[lo] = ProfileEntry{site, 0, work, span};
  ++size_;
  return true;
}

bool Profile::AbsorbNonEmpty(Pool& pool, Profile& other) {
  if (size_ == 0) {
    Swap(other);
    other.Clear(pool);
    return true;
  }
  // Entries of `other` whose site is new here.
  uint32_t extra = 0;
  for (uint32_t i = 0, j = 0; j < other.size_;) {
    if (i < size_ && data_[i].site < other.data_[j].site) {
      ++i;
    } else if (i < size_ && data_[i].site == other.data_[j].site) {
      ++i;
      ++j;
    } else {
      ++extra;
      ++j;
    }
  }
  if (size_ + extra <= capacity_) {
    // In place, from the back (the usual case: the same few sites on both sides).
    int64_t i = static_cast<int64_t>(size_) - 1, j = static_cast<int64_t>(other.size_) - 1;
    int64_t k = static_cast<int64_t>(size_ + extra) - 1;
    while (j >= 0) {
      const ProfileEntry& b = other.data_[j];
      if (i >= 0 && data_[i].site > b.site) {
        data_[k--] = data_[i--];
      } else if (i >= 0 && data_[i].site == b.site) {
        data_[k] = ProfileEntry{b.site, 0, data_[i].work + b.work, data_[i].span + b.span};
        --k;
        --i;
        --j;
      } else {
        data_[k--] = b;
        --j;
      }
    }
    size_ += extra;
    other.Clear(pool);
    return true;
  }
  // Merge both sorted arrays into a fresh block.
  const uint32_t bound = size_ + other.size_;
  uint32_t capacity = 4;
  while (capacity < bound) capacity *= 2;
  auto* merged = static_cast<ProfileEntry*>(pool.Allocate(sizeof(ProfileEntry) * capacity));
  if (merged == nullptr) {
    other.Clear(pool);
    return false;
  }
  uint32_t i = 0, j = 0, n = 0;
  while (i < size_ && j < other.size_) {
    const ProfileEntry& a = data_[i];
    const ProfileEntry& b = other.data_[j];
    if (a.site < b.site) {
      merged[n++] = a;
      ++i;
    } else if (b.site < a.site) {
      merged[n++] = b;
      ++j;
    } else {
      merged[n++] = ProfileEntry{a.site, 0, a.work + b.work, a.span + b.span};
      ++i;
      ++j;
    }
  }
  while (i < size_) merged[n++] = data_[i++];
  while (j < other.size_) merged[n++] = other.data_[j++];
  pool.Free(data_);
  data_ = merged;
  size_ = n;
  capacity_ = capacity;
  other.Clear(pool);
  return true;
}

bool Profile::CopyNonEmpty(Pool& pool, const Profile& other) {
  if (!Reserve(pool, other.size_)) return false;
  std::memcpy(data_, other.data_, sizeof(ProfileEntry) * other.size_);
  size_ = other.size_;
  return true;
}

}  // namespace cilkprof::agent::workspan
