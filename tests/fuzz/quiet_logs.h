// Silences the libraries' own logging in the harnesses: protobuf logs every invalid
// UTF-8 string it parses and the importer warns about every damaged spill, which at
// thousands of inputs a second would bury a fuzzer's report.
#pragma once

#include <google/protobuf/stubs/logging.h>
#include <spdlog/spdlog.h>

namespace cilkprof::aggregator::fuzzing {

inline void QuietLibraryLogs() {
  static const bool done = [] {
    google::protobuf::SetLogHandler(nullptr);
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)done;
}

}  // namespace cilkprof::aggregator::fuzzing
