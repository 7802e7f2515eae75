/* Cilkprof's API for profiled programs. Everything here is optional: each function is
 * declared weak, so a program that uses it links and runs without the agent, and every
 * call is then a no-op. Guard calls with the CILKPROF_* macros below, or test the
 * function pointer yourself.
 *
 *   cilkprof_probe()          take one sample synchronously on the calling thread and
 *                             record it under the separate `probe` metric (tests of
 *                             logical call paths; issue 4).
 *   cilkprof_charge(units)    advance the calling strand's clock by `units` when the
 *                             agent runs with CILKPROF_CLOCK=counter (exact work/span
 *                             tests; issue 5). Ignored with other clocks.
 *   cilkprof_region_begin/end, cilkprof::region
 *                             annotate a region for the causal what-if analysis
 *                             (issue 5); nesting counts the outermost.
 */
#ifndef CILKPROF_CILKPROF_H_
#define CILKPROF_CILKPROF_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void cilkprof_probe(void) __attribute__((weak));
void cilkprof_charge(uint64_t units) __attribute__((weak));
void cilkprof_region_begin(const char* name) __attribute__((weak));
void cilkprof_region_end(void) __attribute__((weak));

#ifdef __cplusplus
}  /* extern "C" */
#endif

#define CILKPROF_PROBE()                        \
  do {                                          \
    if (cilkprof_probe) cilkprof_probe();       \
  } while (0)
#define CILKPROF_CHARGE(units)                  \
  do {                                          \
    if (cilkprof_charge) cilkprof_charge(units);\
  } while (0)

#ifdef __cplusplus
namespace cilkprof {
/* RAII region for the what-if analysis: cilkprof::region r("parse"); */
class region {
 public:
  explicit region(const char* name) {
    if (cilkprof_region_begin) cilkprof_region_begin(name);
  }
  ~region() {
    if (cilkprof_region_end) cilkprof_region_end();
  }
  region(const region&) = delete;
  region& operator=(const region&) = delete;
};
}  // namespace cilkprof
#endif

#endif /* CILKPROF_CILKPROF_H_ */
