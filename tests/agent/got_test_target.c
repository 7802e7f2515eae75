// The function the GOT patch test redirects (got_patch_test.cc): defined here, in a
// library of its own, so that the callers reach it through their GOT.
__attribute__((visibility("default"), noinline)) int cilkprof_got_target(int x) { return x * 3 + 1; }
__attribute__((visibility("default"), noinline)) int cilkprof_got_lazy_target(int x) { return x * 5 + 2; }
