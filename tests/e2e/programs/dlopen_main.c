// Loads libhot_library.so with dlopen after start-up, calls its hot function, then
// unloads it: the profile must still name hot_function (module resolution happens
// before the library goes away).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s LIBRARY\n", argv[0]); return 2; }
  const char* u = getenv("UNITS");
  unsigned long units = u ? strtoul(u, NULL, 10) : 40;
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
  unsigned long long (*hot)(unsigned long) =
      (unsigned long long (*)(unsigned long))dlsym(lib, "hot_function");
  if (!hot) { fprintf(stderr, "dlsym: %s\n", dlerror()); return 1; }
  unsigned long long r = hot(units);
  dlclose(lib);
  printf("dlopen done %llu\n", r & 1);
  return 0;
}
