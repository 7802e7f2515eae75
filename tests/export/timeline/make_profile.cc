// export_timeline_make_profile OUT.cilkprof [--no-timeline]: writes the synthetic profile of
// timeline_test_profile.h (or the same without its timeline) for the command-line tests.
#include <cstdio>
#include <cstring>

#include "cilkprof/aggregator/profile_io.h"
#include "timeline_test_profile.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::strcmp(argv[2], "--no-timeline") != 0)) {
    std::fprintf(stderr, "usage: export_timeline_make_profile OUT.cilkprof [--no-timeline]\n");
    return 2;
  }
  using namespace cilkprof;
  profile::Profile p = argc == 3 ? timeline_testing::ProfileWithoutTimeline() : timeline_testing::TimelineProfile();
  p.set_format_version(aggregator::kProfileFormatVersion);
  const Status written = aggregator::WriteProfileFile(argv[1], p);
  if (!written.ok()) {
    std::fprintf(stderr, "%s\n", written.message().c_str());
    return 1;
  }
  return 0;
}
