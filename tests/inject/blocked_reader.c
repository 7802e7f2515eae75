// A target blocked in read() on its stdin (a pipe): it prints "ready", then everything
// it reads until end of file, then "errno N" (set to 42 before each read, which leaves
// it alone unless it fails: injection must not change it) and "eintr K" (reads that
// failed with EINTR: 0 when the interrupted read restarted, as it must without a
// signal handler).
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  printf("ready\n");
  fflush(stdout);
  char buffer[256];
  int eintr = 0;
  for (;;) {
    errno = 42;
    ssize_t n = read(0, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      ++eintr;
      continue;
    }
    if (n <= 0) break;
    printf("read: %.*s", (int)n, buffer);
    fflush(stdout);
  }
  printf("errno %d\neintr %d\n", errno, eintr);
  return 0;
}
