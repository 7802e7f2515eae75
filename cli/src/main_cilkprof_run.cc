// `cilkprof-run [options] -- PROGRAM [ARGS...]`: the same code as `cilkprof run`.
#include "app.h"

int main(int argc, char** argv) { return cilkprof::cli::Main(argc, argv, cilkprof::cli::Entry::kCilkprofRun); }
