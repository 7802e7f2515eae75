// A statically linked target (no libc.so, no dlopen to call): injection must refuse it.
#include <stdio.h>
#include <unistd.h>

int main(void) {
  printf("ready\n");
  fflush(stdout);
  char buffer[64];
  while (read(0, buffer, sizeof buffer) > 0) {
  }
  return 0;
}
