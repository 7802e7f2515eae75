// A message's serialization with a fixed field order, for comparing messages in the
// fuzz harnesses: unlike MessageDifferencer it treats a NaN as equal to itself (a
// profile file may carry any double) and compares unknown fields byte for byte.
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message.h>

#include <string>

namespace cilkprof::aggregator::fuzzing {

inline std::string DeterministicBytes(const google::protobuf::Message& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace cilkprof::aggregator::fuzzing
