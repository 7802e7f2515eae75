// The injector's pure parts: which thread may be borrowed, and finding libc's functions
// in a memory map (checked against this very process, where dlsym knows the answers).
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "inject/elf_symbols.h"
#include "inject/target_process.h"
#include "inject/thread_choice.h"

namespace cilkprof::cli::inject {
namespace {

UnsafeCode FakeRuntime() {
  std::vector<Mapping> mappings(4);
  mappings[0] = {0x1000, 0x2000, 0, true, 1, "/usr/bin/server"};
  mappings[1] = {0x10000, 0x20000, 0, true, 2, "/usr/lib/x86_64-linux-gnu/libc.so.6"};
  mappings[2] = {0x30000, 0x40000, 0, true, 3, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"};
  mappings[3] = {0x50000, 0x60000, 0, false, 4, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"};  // data only
  return FindUnsafeCode(mappings);
}

user_regs_struct Stopped(long syscall, std::uint64_t rip) {
  user_regs_struct regs{};
  regs.orig_rax = static_cast<std::uint64_t>(syscall);
  regs.rip = rip;
  return regs;
}

TEST(ThreadChoice, BlockingWaitsInLibcAreTheBestChoice) {
  UnsafeCode code = FakeRuntime();
  EXPECT_EQ(ClassifyThread(Stopped(SYS_read, 0x10100), code), ThreadSafety::kBlockedWaiting);
  EXPECT_EQ(ClassifyThread(Stopped(SYS_epoll_wait, 0x10100), code), ThreadSafety::kBlockedWaiting);
  EXPECT_EQ(ClassifyThread(Stopped(SYS_accept4, 0x10100), code), ThreadSafety::kBlockedWaiting);
  EXPECT_EQ(ClassifyThread(Stopped(SYS_futex, 0x10100), code), ThreadSafety::kBlockedTimed);
  EXPECT_EQ(ClassifyThread(Stopped(SYS_clock_nanosleep, 0x10100), code), ThreadSafety::kBlockedTimed);
}

TEST(ThreadChoice, MemoryManagementCallsAndTheLoaderAreNeverBorrowed) {
  UnsafeCode code = FakeRuntime();
  for (long call : {SYS_mmap, SYS_munmap, SYS_brk, SYS_mprotect, SYS_madvise, SYS_openat}) {
    EXPECT_EQ(ClassifyThread(Stopped(call, 0x10100), code), ThreadSafety::kUnsafe) << call;
  }
  // ld.so reads the library it is loading with its lock held.
  EXPECT_EQ(ClassifyThread(Stopped(SYS_read, 0x30100), code), ThreadSafety::kUnsafe);
}

TEST(ThreadChoice, UserCodeIsSafeAndRuntimeCodeIsNot) {
  UnsafeCode code = FakeRuntime();
  EXPECT_EQ(ClassifyThread(Stopped(-1, 0x1800), code), ThreadSafety::kUserCode);
  EXPECT_EQ(ClassifyThread(Stopped(-1, 0x10100), code), ThreadSafety::kUnsafe);
  EXPECT_EQ(ClassifyThread(Stopped(-1, 0x30100), code), ThreadSafety::kUnsafe);
  EXPECT_EQ(ClassifyThread(Stopped(-1, 0x50100), code), ThreadSafety::kUserCode);  // not code
  // The program's own raw mmap holds no library lock.
  EXPECT_EQ(ClassifyThread(Stopped(SYS_mmap, 0x1800), code), ThreadSafety::kUserCode);
}

TEST(ElfSymbols, FindsLibcFunctionsWhereTheLoaderPutThem) {
  Result<std::vector<Mapping>> mappings = ReadMappings(::getpid());
  ASSERT_TRUE(mappings.ok()) << mappings.status().message();
  std::optional<LoadedObject> libc = FindLoadedObject(::getpid(), *mappings, IsLibcName);
  ASSERT_TRUE(libc.has_value());
  Result<std::map<std::string, std::uint64_t>> found =
      LookUpFunctions(*libc, {"mmap", "dlopen", "__errno_location", "no_such_function_anywhere"});
  ASSERT_TRUE(found.ok()) << found.status().message();
  // libc's own definitions (a sanitizer may interpose RTLD_DEFAULT's answer).
  void* handle = ::dlopen(libc->path_in_target.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  for (const char* name : {"mmap", "dlopen", "__errno_location"}) {
    ASSERT_EQ(found->count(name), 1u) << name;
    EXPECT_EQ(found->at(name), reinterpret_cast<std::uint64_t>(::dlsym(handle, name))) << name;
  }
  EXPECT_EQ(found->count("no_such_function_anywhere"), 0u);
  ::dlclose(handle);
}

}  // namespace
}  // namespace cilkprof::cli::inject
