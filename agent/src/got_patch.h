// Redirecting other modules' calls of named functions by rewriting their GOT slots
// (issue 15). A preloaded agent gets the program's calls by symbol preemption; an agent
// dlopen()ed into a running process (docs/INJECTION.md) comes after every module was
// bound to libc, so the only way in is to rewrite what the loader wrote: the
// R_X86_64_JUMP_SLOT (PLT) and R_X86_64_GLOB_DAT (-fno-plt, taken addresses) slots of
// each module, found through its PT_DYNAMIC relocations. Only relocations are walked,
// so modules without DT_GNU_HASH (or any hash table) are handled alike.
//
// A slot is rewritten only when it holds what the redirection expects the loader to
// have put there (`expected`, e.g. libc's definition), or when it is a PLT slot not yet
// resolved (lazy binding: it still points into its own module's PLT). A slot bound to
// something else (another interposer preloaded by the program, an old symbol version)
// is left alone: replacing it would bypass that definition.
//
// Slots in read-only pages (RELRO) are made writable for the store and get their
// original protection back (read from /proc/self/maps). Each slot is written with one
// aligned 8-byte store, so a thread calling through it sees either the old or the new
// target. Every rewritten slot and its old value are remembered; Restore() writes the
// old values back, only in modules still loaded and only where the slot still holds
// our value.
//
// Not async-signal-safe (allocates, reads /proc, takes a mutex): an ordinary thread's.
#pragma once

#include <link.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace cilkprof::agent {

struct GotRedirect {
  std::string name;          // the symbol's name; versions are not compared
  uintptr_t replacement = 0; // what the slot gets
  uintptr_t expected = 0;    // what the slot must hold to be rewritten (besides lazy)
};

// Which modules are left alone: by load address (dlpi_addr) or by file base name
// ("libc.so.6"; a trailing '*' matches a prefix, "ld-linux*"). The vdso is always
// skipped.
struct GotPatchExclusions {
  std::vector<uintptr_t> bases;
  std::vector<std::string> names;
};

struct GotPatchCounts {
  size_t modules = 0;   // modules with at least one rewritten slot
  size_t slots = 0;     // slots rewritten by this call
  size_t foreign = 0;   // matching slots bound to something unexpected, left alone
};

class GotPatcher {
 public:
  GotPatcher(std::vector<GotRedirect> redirects, GotPatchExclusions exclusions);
  GotPatcher(const GotPatcher&) = delete;
  GotPatcher& operator=(const GotPatcher&) = delete;

  // Rewrites the matching slots of every loaded module not excluded. Idempotent: a
  // second call rewrites only what is new (the slots of modules loaded since), and
  // when no module was loaded or unloaded since the last call it only reads the
  // loader's counters, so it can run at every flush. False with why when a slot's page cannot be made writable (the slots
  // written so far stay written, and Restore() undoes them).
  bool Patch(GotPatchCounts* counts, std::string* why);
  // Writes every remembered slot's old value back; returns how many were.
  size_t Restore();
  // Slots currently rewritten.
  size_t patched_slots() const;

 private:
  struct Slot {
    uintptr_t address;
    uintptr_t old_value;
    uintptr_t new_value;
    uintptr_t module_base;
    std::string module_name;
  };
  struct Walk;
  static int PatchModule(dl_phdr_info* info, size_t, void* opaque);
  static int RestoreModule(dl_phdr_info* info, size_t, void* opaque);
  bool Excluded(const dl_phdr_info& info) const;
  const GotRedirect* Find(const char* name) const;

  const std::vector<GotRedirect> redirects_;
  const GotPatchExclusions exclusions_;
  mutable std::mutex mu_;
  std::vector<Slot> slots_;
  // The loader's load/unload counts at the last complete walk (walked_).
  bool walked_ = false;
  std::pair<unsigned long long, unsigned long long> loads_{0, 0};
};

}  // namespace cilkprof::agent
