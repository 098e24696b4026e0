//===- Json.cpp - a small JSON reader and writer -------------------------===//
//
// A recursive-descent parser over bytes. Every read is bounds-checked against the end of the
// text, and recursion is capped, so garbage or hostile input yields an error, not a crash.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/Json.h"

#include <cstdio>
#include <set>

namespace stepc::rt {
namespace {

// Deeper nesting than any safetensors header needs; the cap keeps "[[[[..." from exhausting
// the stack.
constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Status parseDocument(JsonValue &out) {
    skipWhitespace();
    Status status = parseValue(out, 0);
    if (!status.ok()) return status;
    skipWhitespace();
    if (pos_ != text_.size()) return error("expected the end of the text");
    return {};
  }

 private:
  bool atEnd() const { return pos_ >= text_.size(); }
  unsigned char peek() const { return static_cast<unsigned char>(text_[pos_]); }

  // What is at the current position, for error messages.
  std::string found() const {
    if (atEnd()) return "the end of the text";
    unsigned char c = peek();
    char buffer[16];
    if (c >= 0x20 && c < 0x7f)
      std::snprintf(buffer, sizeof buffer, "'%c'", c);
    else
      std::snprintf(buffer, sizeof buffer, "byte 0x%02x", c);
    return buffer;
  }

  Status error(const std::string &expected) const {
    return Status::error("JSON byte " + std::to_string(pos_) + ": " + expected + ", found " +
                         found());
  }

  void skipWhitespace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      ++pos_;
  }

  bool consume(char c) {
    if (atEnd() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  Status parseValue(JsonValue &out, int depth) {
    if (depth > kMaxDepth)
      return error("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    out = JsonValue();
    if (atEnd()) return error("expected a value");
    switch (peek()) {
      case '{':
        return parseObject(out, depth);
      case '[':
        return parseArray(out, depth);
      case '"':
        out.kind = JsonValue::Kind::kString;
        return parseString(out.text);
      case 't':
        return parseLiteral("true", out, JsonValue::Kind::kBool, true);
      case 'f':
        return parseLiteral("false", out, JsonValue::Kind::kBool, false);
      case 'n':
        return parseLiteral("null", out, JsonValue::Kind::kNull, false);
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return parseNumber(out);
        return error("expected a value");
    }
  }

  Status parseLiteral(std::string_view word, JsonValue &out, JsonValue::Kind kind, bool value) {
    if (text_.substr(pos_, word.size()) != word)
      return error("expected '" + std::string(word) + "'");
    pos_ += word.size();
    out.kind = kind;
    out.boolean = value;
    return {};
  }

  bool digit() const { return !atEnd() && peek() >= '0' && peek() <= '9'; }

  // -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
  Status parseNumber(JsonValue &out) {
    size_t start = pos_;
    consume('-');
    if (!digit()) return error("expected a digit");
    if (!consume('0'))
      while (digit()) ++pos_;
    if (consume('.')) {
      if (!digit()) return error("expected a digit after the decimal point");
      while (digit()) ++pos_;
    }
    if (consume('e') || consume('E')) {
      if (!consume('+')) consume('-');
      if (!digit()) return error("expected a digit in the exponent");
      while (digit()) ++pos_;
    }
    out.kind = JsonValue::Kind::kNumber;
    out.text = std::string(text_.substr(start, pos_ - start));
    return {};
  }

  // Four hex digits of a \u escape.
  Status parseHex4(uint32_t &out) {
    out = 0;
    for (int i = 0; i < 4; ++i) {
      if (atEnd()) return error("expected a hex digit");
      unsigned char c = peek();
      uint32_t v;
      if (c >= '0' && c <= '9')
        v = c - '0';
      else if (c >= 'a' && c <= 'f')
        v = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v = c - 'A' + 10;
      else
        return error("expected a hex digit");
      out = out * 16 + v;
      ++pos_;
    }
    return {};
  }

  static void appendUtf8(std::string &out, uint32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xc0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xe0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    }
  }

  // A \u escape, joining a surrogate pair into one code point.
  Status parseUnicodeEscape(std::string &out) {
    uint32_t code;
    Status status = parseHex4(code);
    if (!status.ok()) return status;
    if (code >= 0xdc00 && code <= 0xdfff)
      return error("expected a high surrogate before a low one");
    if (code >= 0xd800 && code <= 0xdbff) {
      if (!consume('\\') || !consume('u')) return error("expected a low surrogate escape '\\u'");
      uint32_t low;
      status = parseHex4(low);
      if (!status.ok()) return status;
      if (low < 0xdc00 || low > 0xdfff) return error("expected a low surrogate (DC00-DFFF)");
      code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
    }
    appendUtf8(out, code);
    return {};
  }

  // One well-formed UTF-8 sequence (no overlong forms, surrogates or code points past
  // U+10FFFF), copied to `out`.
  Status copyUtf8Sequence(std::string &out) {
    unsigned char lead = peek();
    int length;
    uint32_t code, minimum;
    if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
      code = lead & 0x1f;
      minimum = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      code = lead & 0x0f;
      minimum = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      code = lead & 0x07;
      minimum = 0x10000;
    } else {
      return error("expected valid UTF-8");
    }
    size_t start = pos_;
    ++pos_;
    for (int i = 1; i < length; ++i) {
      if (atEnd() || (peek() & 0xc0) != 0x80) return error("expected a UTF-8 continuation byte");
      code = (code << 6) | (peek() & 0x3f);
      ++pos_;
    }
    if (code < minimum || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      pos_ = start;
      return error("expected valid UTF-8 (overlong, surrogate or out of range)");
    }
    out.append(text_.substr(start, pos_ - start));
    return {};
  }

  Status parseString(std::string &out) {
    out.clear();
    if (!consume('"')) return error("expected '\"'");
    for (;;) {
      if (atEnd()) return error("expected '\"' to close the string");
      unsigned char c = peek();
      if (c == '"') {
        ++pos_;
        return {};
      }
      if (c < 0x20) return error("expected no raw control characters in a string");
      if (c >= 0x80) {
        Status status = copyUtf8Sequence(out);
        if (!status.ok()) return status;
        continue;
      }
      ++pos_;
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (atEnd()) return error("expected an escape character");
      char e = text_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          Status status = parseUnicodeEscape(out);
          if (!status.ok()) return status;
          break;
        }
        default:
          --pos_;
          return error("expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
      }
    }
  }

  Status parseArray(JsonValue &out, int depth) {
    out.kind = JsonValue::Kind::kArray;
    ++pos_;  // '['
    skipWhitespace();
    if (consume(']')) return {};
    for (;;) {
      out.items.emplace_back();
      Status status = parseValue(out.items.back(), depth + 1);
      if (!status.ok()) return status;
      skipWhitespace();
      if (consume(']')) return {};
      if (!consume(',')) return error("expected ',' or ']' in an array");
      skipWhitespace();
    }
  }

  Status parseObject(JsonValue &out, int depth) {
    out.kind = JsonValue::Kind::kObject;
    ++pos_;  // '{'
    skipWhitespace();
    if (consume('}')) return {};
    std::set<std::string> keys;
    for (;;) {
      size_t keyPos = pos_;
      std::string key;
      if (atEnd() || peek() != '"') return error("expected '\"' to start a member name");
      Status status = parseString(key);
      if (!status.ok()) return status;
      // Two values for one name would leave it to chance which one a reader uses. A set, not
      // a scan of the members, so a header with a million names still parses in linear time.
      if (!keys.insert(key).second)
        return Status::error("JSON byte " + std::to_string(keyPos) + ": member name '" + key +
                             "' appears twice in one object");
      skipWhitespace();
      if (!consume(':')) return error("expected ':' after a member name");
      skipWhitespace();
      JsonValue value;
      status = parseValue(value, depth + 1);
      if (!status.ok()) return status;
      out.add(std::move(key), std::move(value));
      skipWhitespace();
      if (consume('}')) return {};
      if (!consume(',')) return error("expected ',' or '}' in an object");
      skipWhitespace();
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

void writeString(const std::string &text, std::string &out) {
  out += '"';
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void writeValue(const JsonValue &value, std::string &out) {
  switch (value.kind) {
    case JsonValue::Kind::kNull:
      out += "null";
      break;
    case JsonValue::Kind::kBool:
      out += value.boolean ? "true" : "false";
      break;
    case JsonValue::Kind::kNumber:
      out += value.text;
      break;
    case JsonValue::Kind::kString:
      writeString(value.text, out);
      break;
    case JsonValue::Kind::kArray:
      out += '[';
      for (size_t i = 0; i < value.items.size(); ++i) {
        if (i) out += ',';
        writeValue(value.items[i], out);
      }
      out += ']';
      break;
    case JsonValue::Kind::kObject:
      out += '{';
      for (size_t i = 0; i < value.members.size(); ++i) {
        if (i) out += ',';
        writeString(value.members[i].key, out);
        out += ':';
        writeValue(value.members[i].value, out);
      }
      out += '}';
      break;
  }
}

}  // namespace

JsonValue JsonValue::string(std::string value) {
  JsonValue v;
  v.kind = Kind::kString;
  v.text = std::move(value);
  return v;
}

JsonValue JsonValue::number(uint64_t value) {
  JsonValue v;
  v.kind = Kind::kNumber;
  v.text = std::to_string(value);
  return v;
}

JsonValue JsonValue::array() {
  JsonValue v;
  v.kind = Kind::kArray;
  return v;
}

JsonValue JsonValue::object() {
  JsonValue v;
  v.kind = Kind::kObject;
  return v;
}

const JsonValue *JsonValue::find(std::string_view key) const {
  if (kind != Kind::kObject) return nullptr;
  for (const JsonMember &member : members)
    if (member.key == key) return &member.value;
  return nullptr;
}

void JsonValue::add(std::string key, JsonValue value) {
  members.push_back(JsonMember{std::move(key), std::move(value)});
}

bool JsonValue::toUint64(uint64_t &out) const {
  if (kind != Kind::kNumber || text.empty()) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - d) / 10) return false;
    value = value * 10 + d;
  }
  out = value;
  return true;
}

Status parseJson(std::string_view text, JsonValue &out) {
  out = JsonValue();
  Status status = Parser(text).parseDocument(out);
  if (!status.ok()) out = JsonValue();
  return status;
}

std::string writeJson(const JsonValue &value) {
  std::string out;
  writeValue(value, out);
  return out;
}

}  // namespace stepc::rt
