// A statically linked program that blocks reading stdin: `cilkprof attach` must refuse
// it (no dynamic loader to load the agent with) and leave it running.
#include <stdio.h>
#include <unistd.h>

int main(void) {
  char c;
  printf("ready\n");
  fflush(stdout);
  const ssize_t got = read(0, &c, 1);
  printf("read %zd\n", got);
  return 0;
}
