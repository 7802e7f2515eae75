/* CPU burning that keeps a record, for the crash test programs (ends_by_signal.c,
 * stack_overflow.c; tests/e2e/test_crash.py): spin_until burns CPU in known functions
 * and writes the process CPU time (ns) to the file open_cpu_record opened ($CPU_FILE)
 * after every step, so that the test knows how much CPU the program used up to its
 * last instant, whatever killed it. One translation unit per program: the functions
 * are defined here, not static, and never inlined, so that profiles name them. */
#pragma once
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

static int cpu_fd = -1;

static void open_cpu_record(void) {
  const char* cpu_file = getenv("CPU_FILE");
  if (cpu_file != NULL) cpu_fd = open(cpu_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void record_cpu(void) {
  if (cpu_fd < 0) return;
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  char line[32];
  const int n = snprintf(line, sizeof line, "%020lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
  if (pwrite(cpu_fd, line, (size_t)n, 0) != n) cpu_fd = -1;
}

__attribute__((noinline)) uint64_t burn_a_little(void) { return burn_iterations(100000, 7); }

/* Until the process has used `seconds` of CPU (all threads together); forever if < 0. */
__attribute__((noinline)) void spin_until(double seconds) {
  while (seconds < 0 || cpu_seconds() < seconds) {
    burn_a_little();
    record_cpu();
  }
}
