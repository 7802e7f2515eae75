// pc -> (load module, ELF virtual address) for the executable, a shared library the
// program was linked with, a library loaded with dlopen (and unloaded), the vdso.
#include <dlfcn.h>
#include <link.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "module_table.h"

namespace cilkprof::agent {
namespace {

extern "C" __attribute__((noinline)) int ModuleTableTestLocalFunction(int x) { return x + 1; }

struct LoadedObject {
  std::string path;
  uintptr_t bias = 0;
};

LoadedObject Describe(void* handle) {
  link_map* map = nullptr;
  EXPECT_EQ(dlinfo(handle, RTLD_DI_LINKMAP, &map), 0);
  return LoadedObject{map != nullptr ? map->l_name : "", map != nullptr ? map->l_addr : 0};
}

std::string SelfExe() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

const ModuleInfo* ById(const ModuleTable& table, uint32_t id) {
  for (const ModuleInfo& m : table.modules()) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

TEST(ModuleTable, ResolvesTheExecutable) {
  ModuleTable table;
  table.Refresh();
  const auto pc = reinterpret_cast<uintptr_t>(&ModuleTableTestLocalFunction);
  const ResolvedPc r = table.Resolve(pc);
  ASSERT_NE(r.module_id, 0u);
  const ModuleInfo* m = ById(table, r.module_id);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->path, SelfExe());
  const LoadedObject main_program = Describe(dlopen(nullptr, RTLD_NOW));
  EXPECT_EQ(r.offset, pc - main_program.bias);
  EXPECT_EQ(m->load_bias, main_program.bias);
  EXPECT_EQ(m->build_id.size(), 20u) << "GNU build-id (sha1) expected from the default toolchain";
  EXPECT_LE(m->start, pc);
  EXPECT_LT(pc, m->end);
}

TEST(ModuleTable, ResolvesALinkedSharedLibrary) {
  ModuleTable table;
  table.Refresh();
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr);
  const auto pc = reinterpret_cast<uintptr_t>(dlsym(libc, "getpid"));
  const LoadedObject expected = Describe(libc);
  const ResolvedPc r = table.Resolve(pc);
  const ModuleInfo* m = ById(table, r.module_id);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->path, expected.path);
  EXPECT_EQ(r.offset, pc - expected.bias);
  dlclose(libc);
}

TEST(ModuleTable, FindsADlopenedLibraryAndReportsItsUnloading) {
  ModuleTable table;
  table.Refresh();
  (void)table.TakeChanges();  // everything loaded so far is announced

  void* dso = dlopen(CILKPROF_TEST_DSO_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(dso, nullptr) << dlerror();
  const auto pc = reinterpret_cast<uintptr_t>(dlsym(dso, "cilkprof_test_dso_function"));
  ASSERT_NE(pc, 0u);
  const LoadedObject expected = Describe(dso);

  table.BeginCycle();
  const ResolvedPc r = table.Resolve(pc);  // unknown pc: refreshes by itself
  ASSERT_NE(r.module_id, 0u);
  EXPECT_EQ(r.offset, pc - expected.bias);
  const ModuleInfo* m = ById(table, r.module_id);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->path, expected.path);
  EXPECT_FALSE(m->build_id.empty());

  auto changes = table.TakeChanges();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].id, r.module_id);
  EXPECT_EQ(changes[0].path, expected.path);
  EXPECT_FALSE(changes[0].unloaded);

  ASSERT_EQ(dlclose(dso), 0);
  table.RefreshIfChanged();
  changes = table.TakeChanges();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].id, r.module_id);
  EXPECT_TRUE(changes[0].unloaded);

  // Loaded again: a new module id (ids are never reused).
  dso = dlopen(CILKPROF_TEST_DSO_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(dso, nullptr);
  table.RefreshIfChanged();
  const auto pc2 = reinterpret_cast<uintptr_t>(dlsym(dso, "cilkprof_test_dso_function"));
  const ResolvedPc again = table.Resolve(pc2);
  EXPECT_NE(again.module_id, 0u);
  EXPECT_NE(again.module_id, r.module_id);
  dlclose(dso);
}

TEST(ModuleTable, NamesTheVdsoAndLeavesUnknownPcsAbsolute) {
  ModuleTable table;
  table.Refresh();
  if (getauxval(AT_SYSINFO_EHDR) != 0) {
    bool found = false;
    for (const ModuleInfo& m : table.modules()) found = found || m.path == "[vdso]";
    EXPECT_TRUE(found);
  }
  table.BeginCycle();
  const ResolvedPc r = table.Resolve(0x10);
  EXPECT_EQ(r.module_id, 0u);
  EXPECT_EQ(r.offset, 0x10u);
}

TEST(ModuleTable, ResendAllAnnouncesEveryLiveModuleAgain) {
  ModuleTable table;
  table.Refresh();
  const size_t live = table.TakeChanges().size();
  EXPECT_GT(live, 1u);
  EXPECT_TRUE(table.TakeChanges().empty());
  table.ResendAll();
  EXPECT_EQ(table.TakeChanges().size(), live);
}

}  // namespace
}  // namespace cilkprof::agent
