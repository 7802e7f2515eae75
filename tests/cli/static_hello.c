/* A statically linked program: `cilkprof run` must refuse it with a clear message. */
#include <stdio.h>
int main(void) { puts("static hello"); return 0; }
