//===- Tokenizer.cpp - llm.c's GPT-2 tokenizer file, for `sample` ---------===//
#include "runtime/formats/Tokenizer.h"

#include <algorithm>
#include <map>

#include "runtime/base/FileIO.h"

namespace stepc::rt {

namespace {
constexpr uint32_t kMagic = 20240328;
constexpr size_t kHeaderBytes = 256 * 4;

uint32_t le32(const std::vector<uint8_t> &b, size_t at) {
  return uint32_t{b[at]} | uint32_t{b[at + 1]} << 8 | uint32_t{b[at + 2]} << 16 |
         uint32_t{b[at + 3]} << 24;
}
}  // namespace

Status Tokenizer::open(const std::string &path, int64_t modelVocab, Tokenizer &out) {
  std::vector<uint8_t> bytes;
  if (Status s = readFile(path, bytes); !s.ok()) return s.withContext("--tokenizer");
  auto fail = [&](const std::string &why) {
    return Status::error("--tokenizer " + path + ": " + why);
  };
  if (bytes.size() < kHeaderBytes || le32(bytes, 0) != kMagic)
    return fail("not an llm.c tokenizer file (expected the magic 20240328 in a 1024-byte header)");
  uint32_t version = le32(bytes, 4), count = le32(bytes, 8);
  if (version != 1 && version != 2)
    return fail("unknown version " + std::to_string(version) + " (expected 1 or 2)");
  if (count == 0 || count > modelVocab)
    return fail("holds " + std::to_string(count) + " tokens; the model's vocabulary is " +
                std::to_string(modelVocab));
  Tokenizer t;
  size_t at = kHeaderBytes;
  for (uint32_t i = 0; i < count; ++i) {
    if (at >= bytes.size() || bytes[at] == 0 || at + 1 + bytes[at] > bytes.size())
      return fail("truncated or damaged at token " + std::to_string(i) + " of " +
                  std::to_string(count));
    size_t n = bytes[at];
    t.tokens_.emplace_back(reinterpret_cast<const char *>(bytes.data() + at + 1), n);
    t.longest_ = std::max(t.longest_, n);
    at += 1 + n;
  }
  out = std::move(t);
  return {};
}

std::string Tokenizer::decode(int64_t id) const {
  if (id >= 0 && id < size()) return tokens_[static_cast<size_t>(id)];
  return "<|" + std::to_string(id) + "|>";
}

Status Tokenizer::encode(const std::string &text, std::vector<int64_t> &out) const {
  // Longest match first: the first id of the longest token that starts at each position.
  std::map<std::string, int64_t> ids;
  for (size_t i = 0; i < tokens_.size(); ++i) ids.emplace(tokens_[i], static_cast<int64_t>(i));
  out.clear();
  for (size_t at = 0; at < text.size();) {
    size_t n = std::min(longest_, text.size() - at);
    for (; n > 0; --n)
      if (auto it = ids.find(text.substr(at, n)); it != ids.end()) {
        out.push_back(it->second);
        break;
      }
    if (n == 0)
      return Status::error("--tokenizer: no token starts with the byte " +
                           std::to_string(static_cast<unsigned char>(text[at])) + " at " +
                           std::to_string(at) + " of the prompt");
    at += n;
  }
  return {};
}

}  // namespace stepc::rt
