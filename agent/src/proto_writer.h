// A minimal protocol-buffers encoder: exactly what wire.proto needs (varints, fixed64
// for packed doubles, length-delimited strings, bytes and nested messages).
//
// The agent cannot link libprotobuf: the profiled program may carry its own copy of
// another version, and two copies in one process clash. The encoding follows
// https://protobuf.dev/programming-guides/encoding/ ; tests parse the output with the
// generated classes. Proto3 scalar fields equal to their default are omitted, as the
// official encoder does. Not signal-safe (appends to std::string).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cilkprof::agent {

class ProtoWriter {
 public:
  enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

  void Varint(uint32_t field, uint64_t value) {
    if (value == 0) return;
    Tag(field, kVarint);
    RawVarint(value);
  }
  void Bool(uint32_t field, bool value) { Varint(field, value ? 1 : 0); }
  void String(uint32_t field, std::string_view value) {
    if (value.empty()) return;
    Tag(field, kLengthDelimited);
    RawVarint(value.size());
    out_.append(value.data(), value.size());
  }
  // A repeated string element or a sub-message must be written even when empty.
  void RepeatedString(uint32_t field, std::string_view value) {
    Tag(field, kLengthDelimited);
    RawVarint(value.size());
    out_.append(value.data(), value.size());
  }
  void Message(uint32_t field, const ProtoWriter& nested) { RepeatedString(field, nested.out_); }
  // repeated double, packed (the proto3 default).
  void PackedDoubles(uint32_t field, const double* values, size_t count) {
    if (count == 0) return;
    Tag(field, kLengthDelimited);
    RawVarint(count * 8);
    for (size_t i = 0; i < count; ++i) {
      uint64_t bits;
      std::memcpy(&bits, &values[i], sizeof bits);
      for (int b = 0; b < 8; ++b) out_.push_back(static_cast<char>((bits >> (8 * b)) & 0xff));
    }
  }

  // repeated integer or enum, packed (the proto3 default for scalars).
  template <typename T>
  void PackedVarints(uint32_t field, const T* values, size_t count) {
    if (count == 0) return;
    size_t bytes = 0;
    for (size_t i = 0; i < count; ++i) bytes += VarintSize(static_cast<uint64_t>(values[i]));
    Tag(field, kLengthDelimited);
    RawVarint(bytes);
    for (size_t i = 0; i < count; ++i) RawVarint(static_cast<uint64_t>(values[i]));
  }

  void Clear() { out_.clear(); }
  const std::string& bytes() const { return out_; }
  std::string& mutable_bytes() { return out_; }

 private:
  void Tag(uint32_t field, WireType type) { RawVarint((uint64_t{field} << 3) | type); }
  static size_t VarintSize(uint64_t value) {
    size_t n = 1;
    while (value >= 0x80) value >>= 7, ++n;
    return n;
  }
  void RawVarint(uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }

  std::string out_;
};

}  // namespace cilkprof::agent
