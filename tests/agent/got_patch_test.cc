// GotPatcher (agent/src/got_patch.h): the GOT slots of a lazily bound PLT caller and of
// a -fno-plt/-z now caller (read-only after RELRO) are redirected and restored, and
// the pages keep their protection.
#include "got_patch.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

extern "C" {
int cilkprof_got_target(int x);
int cilkprof_got_lazy_target(int x);
int got_test_plt_call(int x);
int got_test_plt_call_lazy(int x);
int got_test_noplt_call(int x);
int got_test_noplt_call_lazy(int x);
}

namespace cilkprof::agent {
namespace {

__attribute__((noinline)) int Replacement(int x) { return -x; }
__attribute__((noinline)) int LazyReplacement(int x) { return -100 - x; }
__attribute__((noinline)) int Unrelated(int x) { return x; }

uintptr_t Address(int (*fn)(int)) { return reinterpret_cast<uintptr_t>(fn); }

GotRedirect Redirect(const char* name, int (*replacement)(int), int (*expected)(int)) {
  return GotRedirect{name, Address(replacement), Address(expected)};
}

struct MapLine {
  uintptr_t start = 0, end = 0;
  std::string perms, path;
};

std::vector<MapLine> Maps() {
  std::vector<MapLine> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    MapLine m;
    char perms[5] = {};
    int path_at = 0;
    unsigned long start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx %4s %*s %*s %*s %n", &start, &end, perms, &path_at) < 3) continue;
    m.start = start;
    m.end = end;
    m.perms = perms;
    if (path_at > 0) m.path = line.substr(static_cast<size_t>(path_at));
    out.push_back(m);
  }
  return out;
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Every mapping of the file whose name ends in `file`: "start-end perms".
std::vector<std::string> MappingsOf(const std::string& file) {
  std::vector<std::string> out;
  for (const MapLine& m : Maps()) {
    if (EndsWith(m.path, file)) out.push_back(std::to_string(m.start) + "-" + std::to_string(m.end) + " " + m.perms);
  }
  return out;
}

// The -fno-plt library's GOT slot of cilkprof_got_target: the word of its mappings that
// holds the function's address (the loader bound it at load time: -z now). 0: none.
uintptr_t NoPltTargetSlot() {
  for (const MapLine& m : Maps()) {
    if (!EndsWith(m.path, "libcilkprof_got_test_noplt.so") || m.perms[0] != 'r') continue;
    for (uintptr_t a = m.start; a + sizeof(uintptr_t) <= m.end; a += sizeof(uintptr_t)) {
      if (*reinterpret_cast<const uintptr_t*>(a) == Address(cilkprof_got_target)) return a;
    }
  }
  return 0;
}

std::string PermsAt(uintptr_t address) {
  for (const MapLine& m : Maps()) {
    if (address >= m.start && address < m.end) return m.perms;
  }
  return "";
}

// Only the test's libraries: the test program's own slots and the other libraries'
// stay as they are.
GotPatchExclusions OnlyTestLibraries() {
  GotPatchExclusions e;
  e.names = {"libc.so.6", "ld-linux*", "libstdc++*", "libm.so*", "libgcc_s*", "libgtest*", "libgmock*"};
  // The test program is the first module dl_iterate_phdr reports.
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        static_cast<GotPatchExclusions*>(out)->bases.push_back(info->dlpi_addr);
        return 1;
      },
      &e);
  return e;
}

TEST(GotPatch, RedirectsPltAndNoPltCallsAndRestoresThem) {
  ASSERT_EQ(got_test_plt_call(2), 7);
  ASSERT_EQ(got_test_noplt_call(2), 7);
  GotPatcher patcher({Redirect("cilkprof_got_target", Replacement, cilkprof_got_target)}, OnlyTestLibraries());
  GotPatchCounts counts;
  std::string why;
  ASSERT_TRUE(patcher.Patch(&counts, &why)) << why;
  EXPECT_EQ(counts.slots, 2u);  // one JUMP_SLOT, one GLOB_DAT
  EXPECT_EQ(counts.modules, 2u);
  EXPECT_EQ(counts.foreign, 0u);
  EXPECT_EQ(got_test_plt_call(2), -2);
  EXPECT_EQ(got_test_noplt_call(2), -2);
  EXPECT_EQ(cilkprof_got_target(2), 7);  // the definition itself is untouched
  EXPECT_EQ(patcher.Restore(), 2u);
  EXPECT_EQ(got_test_plt_call(2), 7);
  EXPECT_EQ(got_test_noplt_call(2), 7);
  EXPECT_EQ(patcher.patched_slots(), 0u);
}

TEST(GotPatch, ReadOnlySlotsKeepTheirPageProtection) {
  const uintptr_t slot = NoPltTargetSlot();
  ASSERT_NE(slot, 0u) << "no GOT slot of cilkprof_got_target in the -fno-plt library";
  // -z now with RELRO: the GOT is read-only once relocated.
  ASSERT_EQ(PermsAt(slot).substr(0, 3), "r--");
  const std::vector<std::string> before = MappingsOf("libcilkprof_got_test_noplt.so");
  GotPatcher patcher({Redirect("cilkprof_got_target", Replacement, cilkprof_got_target)}, OnlyTestLibraries());
  std::string why;
  ASSERT_TRUE(patcher.Patch(nullptr, &why)) << why;
  EXPECT_EQ(*reinterpret_cast<const uintptr_t*>(slot), Address(Replacement));
  EXPECT_EQ(got_test_noplt_call(1), -1);
  EXPECT_EQ(PermsAt(slot).substr(0, 3), "r--");
  EXPECT_EQ(MappingsOf("libcilkprof_got_test_noplt.so"), before);
  patcher.Restore();
  EXPECT_EQ(got_test_noplt_call(1), 4);
  EXPECT_EQ(PermsAt(slot).substr(0, 3), "r--");
  EXPECT_EQ(MappingsOf("libcilkprof_got_test_noplt.so"), before);
}

TEST(GotPatch, UnresolvedLazySlotIsRedirectedAndResolvesAfterRestore) {
  // got_test_plt_call_lazy was never called: its PLT slot still points into its PLT.
  GotPatcher patcher({Redirect("cilkprof_got_lazy_target", LazyReplacement, cilkprof_got_lazy_target)},
                     OnlyTestLibraries());
  GotPatchCounts counts;
  std::string why;
  ASSERT_TRUE(patcher.Patch(&counts, &why)) << why;
  EXPECT_EQ(counts.slots, 2u);
  EXPECT_EQ(got_test_plt_call_lazy(1), -101);
  EXPECT_EQ(got_test_noplt_call_lazy(1), -101);
  EXPECT_EQ(patcher.Restore(), 2u);
  // Back to the PLT stub: the loader resolves it now, to the real definition.
  EXPECT_EQ(got_test_plt_call_lazy(1), 7);
  EXPECT_EQ(got_test_noplt_call_lazy(1), 7);
}

TEST(GotPatch, SlotBoundToSomethingElseIsLeftAlone) {
  ASSERT_EQ(got_test_noplt_call(2), 7);
  ASSERT_EQ(got_test_plt_call(2), 7);  // resolved: no longer a lazy slot
  // As if another interposer had the calls: the slots hold what is not expected.
  GotPatcher patcher({Redirect("cilkprof_got_target", Replacement, Unrelated)}, OnlyTestLibraries());
  GotPatchCounts counts;
  std::string why;
  ASSERT_TRUE(patcher.Patch(&counts, &why)) << why;
  EXPECT_EQ(counts.slots, 0u);
  EXPECT_EQ(counts.foreign, 2u);
  EXPECT_EQ(got_test_plt_call(2), 7);
  EXPECT_EQ(got_test_noplt_call(2), 7);
  EXPECT_EQ(patcher.Restore(), 0u);
}

TEST(GotPatch, ExcludedModulesAreNotTouched) {
  ASSERT_EQ(got_test_plt_call(2), 7);
  GotPatchExclusions exclusions = OnlyTestLibraries();
  exclusions.names.push_back("libcilkprof_got_test_pl*");  // a prefix: the PLT caller only
  GotPatcher patcher({Redirect("cilkprof_got_target", Replacement, cilkprof_got_target)}, exclusions);
  std::string why;
  ASSERT_TRUE(patcher.Patch(nullptr, &why)) << why;
  EXPECT_EQ(got_test_plt_call(2), 7);
  EXPECT_EQ(got_test_noplt_call(2), -2);
  patcher.Restore();
  EXPECT_EQ(got_test_noplt_call(2), 7);
}

TEST(GotPatch, SecondPatchRewritesNothingAndOneRestoreUndoesBoth) {
  ASSERT_EQ(got_test_plt_call(2), 7);
  GotPatcher patcher({Redirect("cilkprof_got_target", Replacement, cilkprof_got_target)}, OnlyTestLibraries());
  GotPatchCounts first, second;
  std::string why;
  ASSERT_TRUE(patcher.Patch(&first, &why)) << why;
  ASSERT_TRUE(patcher.Patch(&second, &why)) << why;
  EXPECT_EQ(first.slots, 2u);
  EXPECT_EQ(second.slots, 0u);
  EXPECT_EQ(second.foreign, 0u);  // our own value is not someone else's
  EXPECT_EQ(patcher.patched_slots(), 2u);
  EXPECT_EQ(patcher.Restore(), 2u);
  EXPECT_EQ(got_test_plt_call(2), 7);
  EXPECT_EQ(got_test_noplt_call(2), 7);
}

TEST(GotPatch, NamesAreMatchedExactly) {
  // A name that is a prefix of the real one matches nothing.
  GotPatcher patcher({Redirect("cilkprof_got", Replacement, cilkprof_got_target)}, OnlyTestLibraries());
  GotPatchCounts counts;
  std::string why;
  ASSERT_TRUE(patcher.Patch(&counts, &why)) << why;
  EXPECT_EQ(counts.slots, 0u);
  EXPECT_EQ(got_test_plt_call(2), 7);
}

}  // namespace
}  // namespace cilkprof::agent
