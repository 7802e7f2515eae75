// A caller of got_test_target.c's functions, built twice (got_patch_tests.cmake): with
// a lazily bound PLT (R_X86_64_JUMP_SLOT in the writable .got.plt), and with -fno-plt
// and -z now (R_X86_64_GLOB_DAT in the RELRO, read-only once relocated). CALLER_NAME
// names the exported entry points apart.
int cilkprof_got_target(int x);
int cilkprof_got_lazy_target(int x);

#define CONCAT2(a, b) a##b
#define CONCAT(a, b) CONCAT2(a, b)

__attribute__((visibility("default"), noinline)) int CONCAT(CALLER_NAME, _call)(int x) {
  return cilkprof_got_target(x);
}

// Called by no test before it patches: its slot is still unresolved under lazy binding.
__attribute__((visibility("default"), noinline)) int CONCAT(CALLER_NAME, _call_lazy)(int x) {
  return cilkprof_got_lazy_target(x);
}
