// A signal action that any thread, or a signal handler on any thread, may read and
// replace at any time, without a lock: what a program believes is installed for a
// signal whose kernel action is really the profiler's (the fault guard's SIGSEGV and
// SIGBUS, the agent's sampling and fatal signals).
//
// POSIX lets a program call sigaction() from its own signal handler, so the code
// behind an interposed sigaction() may run in a handler that interrupted that very
// code on the same thread: a mutex would deadlock there, and a two-buffer scheme would
// tear (the interrupted writer resumes writing into the buffer the nested one has just
// published). Here every write fills a slot of its own and publishes it with one
// atomic exchange of a version word (a generation number and the slot's index), so a
// reader sees one complete action or another, never a mix:
//   - a slot is claimed (free -> in use) before it is written, and freed once a later
//     exchange has replaced it and no reader holds it;
//   - a reader pins the published slot (a count in the same state word, so a pinned
//     slot is never claimed), checks that the version is still the published one, and
//     copies it; if a writer got in between, it lets go and tries again. It never
//     waits for a writer: a writer it interrupted has not published yet.
// The only wait: a writer that finds every slot in use yields and looks again. With
// kSlots slots that takes kSlots - 1 writes in flight at once (nested handlers on one
// thread, or several threads), each lasting a few instructions.
//
// Versions are unique (the generation never repeats), so a reader can tell whether the
// action changed since it looked (SyncUntilStable in the agent, SA_RESETHAND).
//
// Everything here is async-signal-safe: atomics, memcpy and sched_yield only.
// Constant-initialized: usable before constructors run, as a plain static object.
#pragma once

#include <sched.h>
#include <signal.h>
#include <string.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cilkprof::unwinder {

class PublishedAction {
 public:
  // Version 0: nothing was ever stored; Load then yields SIG_DFL with an empty mask.
  static constexpr uint64_t kNeverStored = 0;

  constexpr PublishedAction() = default;
  PublishedAction(const PublishedAction&) = delete;
  PublishedAction& operator=(const PublishedAction&) = delete;

  // Copies the current action into *out and returns its version.
  uint64_t Load(struct sigaction* out) const {
    for (;;) {
      const uint64_t version = published_.load(std::memory_order_seq_cst);
      Slot& slot = slots_[IndexOf(version)];
      slot.state.fetch_add(kPin, std::memory_order_seq_cst);
      if (published_.load(std::memory_order_seq_cst) == version) {
        uint64_t words[kWords];
        for (size_t i = 0; i < kWords; ++i) words[i] = slot.words[i].load(std::memory_order_relaxed);
        slot.state.fetch_sub(kPin, std::memory_order_release);
        memcpy(out, words, sizeof *out);
        return version;
      }
      slot.state.fetch_sub(kPin, std::memory_order_release);
    }
  }

  // The version now (changes with every store).
  uint64_t version() const { return published_.load(std::memory_order_seq_cst); }

  // Publishes `action`; the action it replaced goes to *previous (if not null).
  // Returns the new version.
  uint64_t Exchange(const struct sigaction& action, struct sigaction* previous) {
    const uint32_t index = Claim(action);
    const uint64_t version = NextVersion(index);
    const uint64_t old = published_.exchange(version, std::memory_order_seq_cst);
    Retire(old, previous);
    return version;
  }

  // Publishes `action` only if the version is still `expected`; returns whether it did.
  bool CompareExchange(uint64_t expected, const struct sigaction& action) {
    const uint32_t index = Claim(action);
    const uint64_t version = NextVersion(index);
    uint64_t seen = expected;
    if (published_.compare_exchange_strong(seen, version, std::memory_order_seq_cst)) {
      Retire(seen, nullptr);
      return true;
    }
    slots_[index].state.fetch_and(~kInUse, std::memory_order_release);  // never published
    return false;
  }

 private:
  static constexpr size_t kWords = (sizeof(struct sigaction) + 7) / 8;
  static constexpr uint32_t kSlots = 8;
  static constexpr uint32_t kInUse = 1;  // claimed by a writer, or published
  static constexpr uint32_t kPin = 2;    // one reader copying it
  static constexpr uint64_t kIndexBits = 8;

  struct Slot {
    std::atomic<uint32_t> state{0};
    std::atomic<uint64_t> words[kWords] = {};
  };

  static uint32_t IndexOf(uint64_t version) { return static_cast<uint32_t>(version & ((1u << kIndexBits) - 1)); }

  uint64_t NextVersion(uint32_t index) {
    const uint64_t generation = generation_.fetch_add(1, std::memory_order_relaxed) + 1;
    return generation << kIndexBits | index;
  }

  // A free slot, filled with `action`.
  uint32_t Claim(const struct sigaction& action) {
    uint64_t words[kWords] = {};
    memcpy(words, &action, sizeof action);
    for (;;) {
      for (uint32_t i = 0; i < kSlots; ++i) {
        uint32_t free_state = 0;
        if (slots_[i].state.compare_exchange_strong(free_state, kInUse, std::memory_order_seq_cst)) {
          for (size_t w = 0; w < kWords; ++w) slots_[i].words[w].store(words[w], std::memory_order_relaxed);
          return i;
        }
      }
      sched_yield();  // every slot held for a moment by other writers or readers
    }
  }

  // The slot of `old` is no longer published: copy it out, then free it (readers that
  // pinned it keep it from being claimed until they let go).
  void Retire(uint64_t old, struct sigaction* previous) {
    Slot& slot = slots_[IndexOf(old)];
    if (previous != nullptr) {
      uint64_t words[kWords];
      for (size_t i = 0; i < kWords; ++i) words[i] = slot.words[i].load(std::memory_order_relaxed);
      memcpy(previous, words, sizeof *previous);
    }
    slot.state.fetch_and(~kInUse, std::memory_order_release);
  }

  // Slot 0 starts published (all zeros: SIG_DFL, empty mask, no flags) as version 0.
  mutable Slot slots_[kSlots] = {Slot{kInUse}};
  std::atomic<uint64_t> published_{kNeverStored};
  std::atomic<uint64_t> generation_{0};
};

}  // namespace cilkprof::unwinder
