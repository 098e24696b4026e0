//===- Json.h - a small JSON reader and writer ------------------*- C++ -*-===//
//
// Just enough JSON (RFC 8259) for safetensors headers, so the runtime has no JSON dependency.
// The reader takes untrusted input (a file someone hands us): it never crashes, bounds its
// nesting depth, rejects invalid UTF-8, duplicate object keys and trailing data, and says at
// which byte the text went wrong. Numbers keep the literal text, so 64-bit integers (byte
// offsets) round-trip exactly instead of passing through a double.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_JSON_H
#define STEPC_RUNTIME_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/Status.h"

namespace stepc::rt {

struct JsonMember;

/// One JSON value. Zero-initialised it is `null`.
struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;             // kBool
  std::string text;                 // kString: the decoded text; kNumber: the literal
  std::vector<JsonValue> items;     // kArray
  std::vector<JsonMember> members;  // kObject, in the order written; keys are unique

  static JsonValue string(std::string value);
  static JsonValue number(uint64_t value);
  static JsonValue array();
  static JsonValue object();

  bool isString() const { return kind == Kind::kString; }
  bool isNumber() const { return kind == Kind::kNumber; }
  bool isArray() const { return kind == Kind::kArray; }
  bool isObject() const { return kind == Kind::kObject; }

  /// The member `key` of an object, or null if absent (or not an object).
  const JsonValue *find(std::string_view key) const;
  /// Appends a member to an object. The caller keeps keys unique (the writer does not check).
  void add(std::string key, JsonValue value);

  /// A number that is a non-negative integer literal (no sign, fraction or exponent) that fits
  /// 64 bits. False for anything else, leaving `out` alone.
  bool toUint64(uint64_t &out) const;
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

/// Parses `text` as exactly one JSON value (surrounding whitespace allowed). Errors read
/// "JSON byte N: expected ..., found ...".
Status parseJson(std::string_view text, JsonValue &out);

/// Compact JSON text (no whitespace) for `value`; strings are escaped as RFC 8259 requires.
std::string writeJson(const JsonValue &value);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_JSON_H
