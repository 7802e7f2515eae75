// Stands in for the agent in the injector's tests: exports what the injector calls.
// What its start does is chosen by the target's environment:
//   INJECT_TEST_MARKER=PATH  write "started\n" to PATH (the test sees the call happened)
//   INJECT_TEST_FAIL=1       refuse to start, with a reason in the error variable
//   INJECT_TEST_EXIT=N       _exit(N) from inside the injected call
// It also starts a thread, allocates and sets errno, as the real agent's start may.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((visibility("default"))) char cilkprof_agent_injection_error[256];

static void* idle_thread(void* arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

// Overwrites xmm8-15 (and their upper ymm halves), as any code may: the injector must
// give the borrowed thread its own values back (register_keeper checks them).
static void clobber_vector_registers(void) {
  __asm__ volatile("pcmpeqb %%xmm8, %%xmm8\n pcmpeqb %%xmm9, %%xmm9\n pcmpeqb %%xmm10, %%xmm10\n"
                   "pcmpeqb %%xmm11, %%xmm11\n pcmpeqb %%xmm12, %%xmm12\n pcmpeqb %%xmm13, %%xmm13\n"
                   "pcmpeqb %%xmm14, %%xmm14\n pcmpeqb %%xmm15, %%xmm15"
                   ::: "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
  if (__builtin_cpu_supports("avx")) {
    __asm__ volatile("vpcmpeqb %%ymm8, %%ymm8, %%ymm8\n vpcmpeqb %%ymm15, %%ymm15, %%ymm15\n vzeroupper"
                     ::: "xmm8", "xmm15");
  }
}

__attribute__((visibility("default"))) int cilkprof_agent_start_injected(void) {
  clobber_vector_registers();
  const char* exit_code = getenv("INJECT_TEST_EXIT");
  if (exit_code) _exit(atoi(exit_code));
  if (getenv("INJECT_TEST_FAIL")) {
    snprintf(cilkprof_agent_injection_error, sizeof cilkprof_agent_injection_error,
             "the test agent was told to fail");
    return 1;
  }
  char* scratch = malloc(1 << 16);  // the allocator must be usable from the borrowed thread
  memset(scratch, 1, 1 << 16);
  free(scratch);
  pthread_t thread;
  if (pthread_create(&thread, NULL, idle_thread, NULL) != 0) {
    snprintf(cilkprof_agent_injection_error, sizeof cilkprof_agent_injection_error, "pthread_create failed");
    return 1;
  }
  pthread_detach(thread);
  const char* marker = getenv("INJECT_TEST_MARKER");
  if (marker) {
    int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
      (void)!write(fd, "started\n", 8);
      close(fd);
    }
  }
  errno = EBADF;  // the injector puts the thread's errno back
  return 0;
}
