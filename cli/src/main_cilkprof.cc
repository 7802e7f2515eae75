// `cilkprof`: run, view, summary, import.
#include "app.h"

int main(int argc, char** argv) { return cilkprof::cli::Main(argc, argv, cilkprof::cli::Entry::kCilkprof); }
