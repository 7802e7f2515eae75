// A library the module-table test loads with dlopen.
extern "C" __attribute__((visibility("default"), noinline)) int cilkprof_test_dso_function(int x) {
  return x * 3 + 1;
}
