//===- Status.h - the result of a runtime call ------------------*- C++ -*-===//
//
// Runtime calls that can fail (files, formats, user input) return a Status instead of throwing
// or aborting: a training executable must be able to print "FILE: what is wrong" and exit
// cleanly, and the caller decides whether a failure is fatal. A Status is either OK (default
// constructed, `return {};`) or an error carrying a message for a person; the message names
// the thing that failed (usually a file) and the problem. [[nodiscard]] so an error cannot be
// dropped silently.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_STATUS_H
#define STEPC_RUNTIME_STATUS_H

#include <string>
#include <utility>

namespace stepc::rt {

class [[nodiscard]] Status {
 public:
  /// OK.
  Status() = default;

  /// An error. An empty message still makes an error (with a placeholder text), so an error
  /// can never be mistaken for OK.
  static Status error(std::string message) {
    Status status;
    status.failed_ = true;
    status.message_ = message.empty() ? "unknown error" : std::move(message);
    return status;
  }

  bool ok() const { return !failed_; }
  /// The error message; empty when OK.
  const std::string &message() const { return message_; }

  /// The same error with `context` in front ("context: message"); OK stays OK.
  Status withContext(const std::string &context) const {
    return ok() ? Status() : error(context + ": " + message_);
  }

 private:
  bool failed_ = false;
  std::string message_;
};

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_STATUS_H
