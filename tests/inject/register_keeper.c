// A target that keeps known values in r12-r15 and xmm8-15/ymm8-15 while blocked in a
// raw read() of its stdin (keep_registers.c), then prints what it read and whether
// every register came back as it was.
#include <stdio.h>
#include <sys/types.h>

long read_keeping_registers(int fd, void* buf, size_t n, long* result, int use_avx);

int main(void) {
  const int use_avx = __builtin_cpu_supports("avx");
  printf("ready\n");
  fflush(stdout);
  char buffer[256];
  long result = 0;
  long changed = read_keeping_registers(0, buffer, sizeof buffer, &result, use_avx);
  if (result > 0) printf("read: %.*s", (int)result, buffer);
  else printf("read returned %ld\n", result);
  if (changed == 0) printf("registers intact\n");
  else printf("registers changed: mask 0x%lx\n", changed);
  return 0;
}
