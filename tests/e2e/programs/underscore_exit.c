/* Ends with _exit (or _Exit, or _exit from a signal handler) after ~0.4 s of CPU time,
 * before the agent's first periodic flush: no atexit handler runs, so without the
 * agent's _exit hand-off its samples would be lost.
 *   underscore_exit [_exit|_Exit|handler] */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "burn.h"

static void on_cpu_alarm(int signo) {
  (void)signo;
  _exit(5);
}

__attribute__((noinline)) uint64_t spin_before_underscore_exit(uint64_t units) {
  return burn_iterations(units * BURN_ITERATIONS_PER_UNIT, units);
}

int main(int argc, char** argv) {
  const char* how = argc > 1 ? argv[1] : "_exit";
  if (strcmp(how, "handler") == 0) {
    /* CPU time, not wall time: on a loaded machine the sample count stays the same. */
    signal(SIGVTALRM, on_cpu_alarm);
    struct itimerval t = {{0, 0}, {0, 400000}};
    setitimer(ITIMER_VIRTUAL, &t, NULL);
    for (;;) spin_before_underscore_exit(5);
  }
  spin_before_underscore_exit(40);
  if (strcmp(how, "_Exit") == 0) _Exit(4);
  _exit(3);
}
