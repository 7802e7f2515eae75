/* Layout facts shared by the runtime's C++ and spawn_shim.S (plain #defines, so the
 * assembler can include this). runtime.hpp checks them with static_assert. */
#ifndef CILK_SRC_SPAWN_ABI_H_
#define CILK_SRC_SPAWN_ABI_H_

/* offsetof(cilk::rt::Worker, spawn_point): after the 24-byte cilkprof_worker_t. */
#define CILK_WORKER_SPAWN_POINT_OFFSET 24
/* offsetof(cilk::rt::Worker, cache.head): after the 64-byte spawn_point. */
#define CILK_WORKER_CACHE_HEAD_OFFSET 88
/* offsetof(cilk::rt::Fiber, stack.segment.spawn). */
#define CILK_FIBER_SPAWN_POINT_OFFSET 40

#endif /* CILK_SRC_SPAWN_ABI_H_ */
