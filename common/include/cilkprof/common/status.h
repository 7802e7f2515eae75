// Status and Result<T>: how Cilkprof's tools report errors across module boundaries.
//
// Exceptions never cross a module boundary (ARCHITECTURE.md, Conventions). A function
// that can fail returns Status or Result<T>; the message is written for the user: it
// says what was wrong and, where possible, what to do about it.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace cilkprof {

class Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !message_.has_value(); }
  explicit operator bool() const { return ok(); }
  const std::string& message() const {
    static const std::string kOk = "OK";
    return message_ ? *message_ : kOk;
  }
  // Prefixes context onto an error: "reading profile.cilkprof: " + message.
  Status WithContext(const std::string& context) const {
    return ok() ? *this : Status(context + ": " + *message_);
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Status status) : value_(std::move(status)) {     // NOLINT: implicit by design
    assert(!std::get<Status>(value_).ok() && "Result built from an OK status has no value");
  }

  bool ok() const { return std::holds_alternative<T>(value_); }
  explicit operator bool() const { return ok(); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(value_); }

  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> value_;
};

}  // namespace cilkprof

// Propagates an error Status from an expression returning Status.
#define CILKPROF_RETURN_IF_ERROR(expr)                     \
  do {                                                     \
    ::cilkprof::Status cilkprof_status_ = (expr);          \
    if (!cilkprof_status_.ok()) return cilkprof_status_;   \
  } while (0)
