/* cilk_spawn_shim(scope, ops, closure, call)
 *
 * The call target of every cilk::scope::spawn (always inlined into the user's
 * function). It records the spawn point exactly as the spawning function had it at
 * the call, as a cilkprof_saved_regs_t { pc, sp, fp, rbx, r12, r13, r14, r15 }:
 *   pc = the return address (the instruction after the call, in the spawner),
 *   sp = the spawner's stack pointer after the call returns (= before the call),
 *   fp and the callee-saved registers unchanged since the call,
 * in the segment of the fiber the spawn will take (the head of the worker's fiber
 * cache; Worker::spawn_point when the cache is empty), then jumps to
 * cilk_rt_spawn(scope, ops, closure, call, worker, cached fiber or null) with its
 * first four arguments untouched. A jump, not a call: cilk_rt_spawn returns
 * straight to the spawner, so the shim adds no frame to each level of a recursion
 * (every nested frame of a spawn level is a return-stack-buffer entry, and deep
 * recursions overflow it).
 * Nothing runs before the registers are read, so nothing can clobber them.
 * The caller is always a worker (its scope bound the thread to the runtime).
 */
#include "spawn_abi.h"

        .text
        .globl  cilk_spawn_shim
        .type   cilk_spawn_shim, @function
        .p2align 4
cilk_spawn_shim:
        .cfi_startproc
        /* Worker* of this thread: cilk::rt::tls_worker (initial-exec TLS). */
        movq    _ZN4cilk2rt10tls_workerE@gottpoff(%rip), %rax
        movq    %fs:(%rax), %r8         /* 5th argument: the worker */
        /* Where the registers go: the segment of the fiber this spawn will take
         * (the head of the worker's cache), or worker->spawn_point if none. */
        movq    CILK_WORKER_CACHE_HEAD_OFFSET(%r8), %r9   /* 6th argument: that fiber */
        leaq    CILK_FIBER_SPAWN_POINT_OFFSET(%r9), %r10
        leaq    CILK_WORKER_SPAWN_POINT_OFFSET(%r8), %rax
        testq   %r9, %r9
        cmovneq %r10, %rax
        movq    (%rsp), %r10            /* return address into the spawner */
        movq    %r10, 0(%rax)
        leaq    8(%rsp), %r10           /* the spawner's rsp once the call returns */
        movq    %r10, 8(%rax)
        movq    %rbp, 16(%rax)
        movq    %rbx, 24(%rax)
        movq    %r12, 32(%rax)
        movq    %r13, 40(%rax)
        movq    %r14, 48(%rax)
        movq    %r15, 56(%rax)
        jmp     cilk_rt_spawn
        .cfi_endproc
        .size   cilk_spawn_shim, .-cilk_spawn_shim

/* cilk_rt_fiber_bottom: the first code on a child's fiber (SpawnSwitch jumps here
 * with the entry frame's four arguments in rdi, rsi, rdx, rcx and rsp = the
 * fiber's top). It calls the child's entry
 * frame and, when that returns (the parent was not stolen), jumps back into the
 * spawn through r12. It sits in the entry-trampoline section with
 * cilk_invoke_child, so the entry frame's return address is in the entry range. */
        .section cilk_trampoline_text,"ax",@progbits
        .globl  cilk_rt_fiber_bottom
        .hidden cilk_rt_fiber_bottom
        .type   cilk_rt_fiber_bottom, @function
        .p2align 4
cilk_rt_fiber_bottom:
        call    cilk_rt_child_entry
        jmp     *%r12
        .size   cilk_rt_fiber_bottom, .-cilk_rt_fiber_bottom

        .section .note.GNU-stack,"",@progbits
