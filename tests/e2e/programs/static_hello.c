// A statically linked program: the agent cannot be preloaded into it, and
// cilkprof-run must say so instead of silently producing an empty profile.
#include <stdio.h>
int main(void) { puts("static hello"); return 0; }
