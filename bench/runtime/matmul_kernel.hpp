// The 64 x 64 base case of bench/runtime/matmul.cpp, in its own translation unit:
// run.sh compiles it once and links the same object into the cilk, oneTBB and
// OpenMP variants, so their leaves are the same machine code at the same alignment
// and only the runtimes differ. (Compiled inline into each variant, the kernel's
// code generation and placement differed by 1-3%, more than the runtimes did.)
#ifndef CILK_BENCH_MATMUL_KERNEL_HPP_
#define CILK_BENCH_MATMUL_KERNEL_HPP_

// C += A B for n x n blocks of row-major matrices with leading dimension ld.
void MatmulKernel(const double* a, const double* b, double* c, int n, int ld);

#endif
