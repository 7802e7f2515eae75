// A span profile: for the call sites whose top-most invocations lie on one path of
// the computation dag, the work and the span of those invocations (the thesis'
// work-on-span and span-on-span of a path, chapter 3.3). A sorted array of entries
// keyed by call-site id, in a Pool block; empty profiles own no memory.
//
// Paths are combined in series (Absorb: the entries add) and chosen in parallel
// merges (the caller keeps one and Clears the other), so a profile never holds more
// entries than there are call sites.
#pragma once

#include <cstdint>
#include <utility>

#include "workspan/pool.h"

namespace cilkprof::agent::workspan {

struct ProfileEntry {
  uint32_t site;
  uint32_t unused;
  uint64_t work;
  uint64_t span;
};

class Profile {
 public:
  Profile() = default;
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const ProfileEntry* begin() const { return data_; }
  const ProfileEntry* end() const { return data_ + size_; }

  // entry[site] += (work, span). Returns false if memory ran out (the entry is lost).
  bool Add(Pool& pool, uint32_t site, uint64_t work, uint64_t span);
  // *this += other, leaving `other` empty (its memory returns to `pool`).
  // (Inline fast paths: most profiles on the spawn path are empty.)
  bool Absorb(Pool& pool, Profile& other) { return other.size_ == 0 ? true : AbsorbNonEmpty(pool, other); }
  // *this = copy of other.
  bool CopyFrom(Pool& pool, const Profile& other) {
    size_ = 0;
    return other.size_ == 0 ? true : CopyNonEmpty(pool, other);
  }
  void Swap(Profile& other) {
    Profile* a = this;
    std::swap(a->data_, other.data_);
    std::swap(a->size_, other.size_);
    std::swap(a->capacity_, other.capacity_);
  }
  // Empties the profile, keeping its memory for reuse.
  void Reset() { size_ = 0; }
  // Empties the profile and returns its memory to `pool`.
  void Clear(Pool& pool) {
    if (data_ == nullptr) return;
    pool.Free(data_);
    data_ = nullptr;
    size_ = 0;
    capacity_ = 0;
  }

 private:
  bool AbsorbNonEmpty(Pool& pool, Profile& other);
  bool CopyNonEmpty(Pool& pool, const Profile& other);
  bool Reserve(Pool& pool, uint32_t capacity);

  ProfileEntry* data_ = nullptr;
  uint32_t size_ = 0;
  uint32_t capacity_ = 0;
};

}  // namespace cilkprof::agent::workspan
