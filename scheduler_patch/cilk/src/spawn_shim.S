/* cilk_spawn_shim(scope, entry, closure)
 *
 * The call target of every cilk::scope::spawn (always inlined into the user's
 * function). It records the spawn point exactly as the spawning function had it
 * at the call, as a cilkprof_saved_regs_t { pc, sp, fp, rbx, r12, r13, r14, r15 }:
 *   pc = the return address (the instruction after the call, in the spawner),
 *   sp = the spawner's stack pointer after the call returns (= before the call),
 *   fp and the callee-saved registers unchanged since the call,
 * then calls cilk_rt_spawn(scope, entry, closure, &regs).
 * Nothing runs before the registers are read, so nothing can clobber them.
 */
        .text
        .globl  cilk_spawn_shim
        .type   cilk_spawn_shim, @function
        .p2align 4
cilk_spawn_shim:
        .cfi_startproc
        subq    $72, %rsp               /* 64 bytes of registers + 8: the call below is 16-aligned */
        .cfi_adjust_cfa_offset 72
        movq    72(%rsp), %rax          /* return address into the spawner */
        movq    %rax, 0(%rsp)
        leaq    80(%rsp), %rax          /* the spawner's rsp once the call returns */
        movq    %rax, 8(%rsp)
        movq    %rbp, 16(%rsp)
        movq    %rbx, 24(%rsp)
        movq    %r12, 32(%rsp)
        movq    %r13, 40(%rsp)
        movq    %r14, 48(%rsp)
        movq    %r15, 56(%rsp)
        movq    %rsp, %rcx              /* 4th argument: const cilkprof_saved_regs_t* */
        call    cilk_rt_spawn
        addq    $72, %rsp
        .cfi_adjust_cfa_offset -72
        ret
        .cfi_endproc
        .size   cilk_spawn_shim, .-cilk_spawn_shim

        .section .note.GNU-stack,"",@progbits
