//===- DataFile.cpp - token streams from files ---------------------------===//
#include "runtime/formats/DataFile.h"

#include <algorithm>
#include <cstdio>

#include "runtime/base/Checksum.h"
#include "runtime/formats/Data.h"
#include "runtime/base/FileIO.h"

namespace stepc::rt {
namespace {

// llm.c dev/data/data_common.py: the shard kinds, told apart by the header's magic.
struct ShardKind {
  int32_t magic, version;
  size_t tokenBytes;
  TokenFile::Kind kind;
  const char *name;
};
constexpr ShardKind kShardKinds[] = {
    {20240520, 1, 2, TokenFile::Kind::kGpt2Shard, "GPT-2"},
    {20240801, 7, 4, TokenFile::Kind::kLlama3Shard, "Llama-3"},
};
constexpr size_t kShardHeaderBytes = 256 * 4;

// Tokens are handed to the model as int32.
constexpr int64_t kMaxVocab = int64_t{1} << 31;

int32_t loadLe32(const uint8_t *p) {
  return static_cast<int32_t>(uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 |
                              uint32_t{p[3]} << 24);
}

const ShardKind *shardKindOf(int32_t magic) {
  for (const ShardKind &kind : kShardKinds)
    if (kind.magic == magic) return &kind;
  return nullptr;
}

bool startsWithShardMagic(const std::vector<uint8_t> &bytes) {
  return bytes.size() >= 4 && shardKindOf(loadLe32(bytes.data()));
}

// Validates an llm.c shard's header against the file's size; sets the shard's layout.
Status parseShardHeader(const std::vector<uint8_t> &bytes, TokenFile::Kind &kind,
                        size_t &tokenBytes, int64_t &count) {
  if (bytes.size() < kShardHeaderBytes)
    return Status::error("truncated llm.c shard header: the file holds " +
                         std::to_string(bytes.size()) + " bytes, the header alone is " +
                         std::to_string(kShardHeaderBytes));
  int32_t magic = loadLe32(bytes.data()), version = loadLe32(bytes.data() + 4);
  const ShardKind *shard = shardKindOf(magic);
  if (!shard)
    return Status::error("not an llm.c shard: magic " + std::to_string(magic) + ", expected " +
                         std::to_string(kShardKinds[0].magic) + " (GPT-2) or " +
                         std::to_string(kShardKinds[1].magic) + " (Llama-3)");
  if (version != shard->version)
    return Status::error(std::string("llm.c ") + shard->name + " shard has version " +
                         std::to_string(version) + ", expected " + std::to_string(shard->version));
  kind = shard->kind;
  tokenBytes = shard->tokenBytes;
  int32_t tokens = loadLe32(bytes.data() + 8);
  if (tokens < 0)
    return Status::error("llm.c shard header gives a negative token count " +
                         std::to_string(tokens));
  uint64_t expected = static_cast<uint64_t>(tokens) * tokenBytes;
  uint64_t actual = bytes.size() - kShardHeaderBytes;
  if (actual != expected)
    return Status::error("llm.c shard header says " + std::to_string(tokens) + " tokens (" +
                         std::to_string(expected) + " bytes) but " + std::to_string(actual) +
                         " bytes follow the header" +
                         (actual < expected ? " (truncated?)" : " (trailing data?)"));
  count = tokens;
  return {};
}

std::string tooShort(int64_t count, int64_t seq) {
  return "holds " + std::to_string(count) + " tokens, fewer than one window of seq + 1 = " +
         std::to_string(static_cast<uint64_t>(seq) + 1);
}

}  // namespace

Status TokenFile::open(const std::string &path, const TokenFileOptions &options, TokenFile &out) {
  out = TokenFile();
  auto fail = [&](const std::string &message) { return Status::error(path + ": " + message); };
  if (options.vocab < 1 || options.vocab > kMaxVocab)
    return fail("vocabulary size " + std::to_string(options.vocab) + " is outside [1, 2^31]");
  if (options.seq < 0) return fail("negative sequence length " + std::to_string(options.seq));
  std::vector<uint8_t> bytes;
  Status status = readFile(path, bytes);
  if (!status.ok()) return status;
  if (bytes.empty()) return fail("the file is empty");

  TokenFile file;
  bool shard = options.format == TokenFileFormat::kLlmcShard ||
               (options.format == TokenFileFormat::kAuto && startsWithShardMagic(bytes));
  if (shard) {
    status = parseShardHeader(bytes, file.kind_, file.tokenBytes_, file.count_);
    if (!status.ok()) return status.withContext(path);
    file.firstToken_ = kShardHeaderBytes;
  } else {
    file.count_ = static_cast<int64_t>(bytes.size());
  }
  file.path_ = path;
  file.bytes_ = std::move(bytes);
  if (file.count_ == 0) return fail(std::string(file.kindName()) + " holds no tokens");
  if (file.count_ <= options.seq) return fail(tooShort(file.count_, options.seq));
  // Checked once here, so an out-of-range token cannot reach an embedding lookup mid-run.
  // Skipped when no token of this width can reach the vocabulary.
  if (options.vocab < (int64_t{1} << (8 * file.tokenBytes_)))
    for (int64_t i = 0; i < file.count_; ++i)
      if (file.token(i) >= options.vocab)
        return fail("token " + std::to_string(file.token(i)) + " at position " + std::to_string(i) +
                    " is outside the model's vocabulary of " + std::to_string(options.vocab));
  out = std::move(file);
  return {};
}

const char *TokenFile::kindName() const {
  switch (kind_) {
    case Kind::kBytes:
      return "raw bytes";
    case Kind::kGpt2Shard:
      return "llm.c GPT-2 shard";
    case Kind::kLlama3Shard:
      return "llm.c Llama-3 shard";
  }
  return "?";
}

uint32_t TokenFile::token(int64_t i) const {
  const uint8_t *p = bytes_.data() + firstToken_ + static_cast<size_t>(i) * tokenBytes_;
  switch (tokenBytes_) {
    case 1:
      return p[0];
    case 2:
      return uint32_t{p[0]} | uint32_t{p[1]} << 8;
    default:
      return static_cast<uint32_t>(loadLe32(p));
  }
}

std::string TokenFile::identity() const {
  uint32_t crc = crc32c(0, bytes_.data() + firstToken_, bytes_.size() - firstToken_);
  char hex[16];
  std::snprintf(hex, sizeof hex, "%08x", crc);
  const char *kind = kind_ == Kind::kBytes       ? "bytes"
                     : kind_ == Kind::kGpt2Shard ? "gpt2-shard"
                                                 : "llama3-shard";
  return std::string(kind) + ":" + std::to_string(count_) + ":crc32c=" + hex;
}

Status TokenFile::sampleWindows(int64_t batch, int64_t seq, uint64_t seed, uint64_t step,
                                int32_t *tokens, int32_t *targets, int64_t limit) const {
  if (batch < 0 || seq < 1)
    return Status::error(path_ + ": cannot sample windows of batch " + std::to_string(batch) +
                         " and sequence length " + std::to_string(seq));
  int64_t length = limit > 0 ? std::min(limit, count_) : count_;
  if (length <= seq) return Status::error(path_ + ": " + tooShort(length, seq));
  for (int64_t r = 0; r < batch; ++r) {
    int64_t start = tokenWindowStart(length, seq, seed, step, r);
    // The window fits (count_ > seq), so there is no wrap-around here.
    for (int64_t t = 0; t < seq; ++t) {
      tokens[r * seq + t] = static_cast<int32_t>(token(start + t));
      targets[r * seq + t] = static_cast<int32_t>(token(start + t + 1));
    }
  }
  return {};
}

Status TokenFile::copyWindow(int64_t start, int64_t seq, int32_t *tokens, int32_t *targets) const {
  if (start < 0 || seq < 1 || start > count_ - seq - 1)
    return Status::error(path_ + ": no window of seq + 1 = " + std::to_string(seq + 1) +
                         " tokens at " + std::to_string(start) + " in " + std::to_string(count_) +
                         " tokens");
  for (int64_t t = 0; t < seq; ++t) {
    tokens[t] = static_cast<int32_t>(token(start + t));
    targets[t] = static_cast<int32_t>(token(start + t + 1));
  }
  return {};
}

}  // namespace stepc::rt
