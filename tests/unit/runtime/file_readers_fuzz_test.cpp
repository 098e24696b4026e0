//===- file_readers_fuzz_test.cpp - damaged files never crash the readers -===//
//
// A seeded fuzz of every file the runtime reads: safetensors (--init-from), checkpoints
// (--resume, eval), raw byte and llm.c token files (--data). Each starts from a valid file and
// is truncated at many lengths, has bytes flipped at random, and has its length fields set
// huge; every reader must return (ok, or an error naming the file), never crash, hang or read
// out of bounds. It runs in the normal suite and again under AddressSanitizer and
// UndefinedBehaviorSanitizer (tests/sanitized), where an out-of-bounds read is a failure even
// when it happens not to crash.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "runtime/formats/Checkpoint.h"
#include "runtime/formats/DataFile.h"
#include "runtime/formats/Safetensors.h"
#include "runtime/formats/Tokenizer.h"
#include "tests/unit/runtime/TestFiles.h"

namespace stepc::rt {
namespace {

using testing::appendLe32;
using testing::readBytes;
using testing::TempDir;
using testing::writeBytes;

// The damaged variants of `valid`: every truncation at a stride (and the last few bytes one by
// one), `flips` copies with 1 to 8 random bytes changed, and each 8-byte little-endian field
// at `lengthOffsets` set to huge values.
std::vector<std::vector<uint8_t>> damaged(const std::vector<uint8_t> &valid, uint32_t seed,
                                          int flips, const std::vector<size_t> &lengthOffsets,
                                          size_t fieldBytes) {
  std::vector<std::vector<uint8_t>> out;
  size_t stride = std::max<size_t>(1, valid.size() / 64);
  for (size_t n = 0; n < valid.size(); n += stride) out.emplace_back(valid.begin(), valid.begin() + n);
  for (size_t k = 1; k <= 16 && k < valid.size(); ++k)
    out.emplace_back(valid.begin(), valid.end() - static_cast<std::ptrdiff_t>(k));
  std::mt19937 rng(seed);
  for (int i = 0; i < flips; ++i) {
    std::vector<uint8_t> bytes = valid;
    int changes = 1 + static_cast<int>(rng() % 8);
    for (int c = 0; c < changes; ++c) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    out.push_back(std::move(bytes));
  }
  for (size_t offset : lengthOffsets)
    for (uint64_t huge : {uint64_t{0xFFFFFFFFFFFFFFFF}, uint64_t{1} << 62, uint64_t{0x7FFFFFFF},
                          uint64_t{0x80000000}, uint64_t{valid.size()}, uint64_t{0}}) {
      std::vector<uint8_t> bytes = valid;
      for (size_t b = 0; b < fieldBytes && offset + b < bytes.size(); ++b)
        bytes[offset + b] = static_cast<uint8_t>(huge >> (8 * b));
      out.push_back(std::move(bytes));
    }
  return out;
}

TEST(FileReadersFuzz, Safetensors) {
  TempDir dir;
  std::vector<float> a(12, 1.5f);
  std::vector<uint16_t> b(5, 0x3f80);
  ASSERT_TRUE(writeSafetensors(dir.path("ok.safetensors"),
                               {{"a", DType::kF32, {3, 4}, a.data()},
                                {"b", DType::kBF16, {5}, b.data()}},
                               {{"note", "x"}})
                  .ok());
  std::vector<uint8_t> valid = readBytes(dir.path("ok.safetensors"));
  SafetensorsFile file;
  ASSERT_TRUE(SafetensorsFile::parse(valid, "ok", file).ok());
  int errors = 0;
  // Offset 0: the u64 header length.
  for (const std::vector<uint8_t> &bytes : damaged(valid, 1, 2000, {0}, 8)) {
    SafetensorsFile parsed;
    Status s = SafetensorsFile::parse(bytes, "fuzz.safetensors", parsed);
    if (!s.ok()) {
      ++errors;
      EXPECT_EQ(s.message().rfind("fuzz.safetensors", 0), 0u) << s.message();
    }
  }
  EXPECT_GT(errors, 64);  // every truncation at least
}

TEST(FileReadersFuzz, Checkpoints) {
  TempDir dir;
  std::vector<float> w(6, 0.25f), m(6, 0.5f);
  CheckpointInfo info;
  info.fingerprint = "fuzz-model";
  info.step = 7;
  info.data = {3, 7, "builtin"};
  std::vector<CheckpointTensor> tensors = {{"", "w", DType::kF32, {2, 3}, w.data()},
                                           {"m", "w", DType::kF32, {2, 3}, m.data()}};
  std::string path = dir.path("ck.safetensors");
  ASSERT_TRUE(writeCheckpoint(path, info, tensors).ok());
  std::vector<uint8_t> valid = readBytes(path);
  std::vector<float> w2(6), m2(6);
  std::vector<CheckpointTensor> into = {{"", "w", DType::kF32, {2, 3}, w2.data()},
                                        {"m", "w", DType::kF32, {2, 3}, m2.data()}};
  int accepted = 0;
  for (const std::vector<uint8_t> &bytes : damaged(valid, 2, 1500, {0}, 8)) {
    writeBytes(dir.path("bad.safetensors"), bytes);
    CheckpointInfo got;
    Status s = readCheckpoint(dir.path("bad.safetensors"), "fuzz-model", into, got);
    Status t = readCheckpointInfo(dir.path("bad.safetensors"), got);
    if (s.ok()) {
      ++accepted;
    } else {
      EXPECT_NE(s.message().find("bad.safetensors"), std::string::npos) << s.message();
    }
    if (!t.ok()) {
      EXPECT_NE(t.message().find("bad.safetensors"), std::string::npos) << t.message();
    }
  }
  // The checksum covers the tensors: only damage in ignorable places (JSON whitespace, say)
  // can pass, never most of it.
  EXPECT_LT(accepted, 100);
}

TEST(FileReadersFuzz, TokenFiles) {
  TempDir dir;
  // An llm.c GPT-2 shard: 256 int32 header (magic, version, count), then uint16 tokens.
  std::vector<uint8_t> shard;
  appendLe32(shard, 20240520);
  appendLe32(shard, 1);
  appendLe32(shard, 300);
  for (int i = 3; i < 256; ++i) appendLe32(shard, 0);
  for (int i = 0; i < 300; ++i) {
    shard.push_back(static_cast<uint8_t>(i % 200));
    shard.push_back(0);
  }
  std::vector<uint8_t> raw(500);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>(i * 7);
  struct Case {
    const char *name;
    std::vector<uint8_t> valid;
    std::vector<size_t> lengths;  // offsets of its 4-byte length fields
  };
  for (const Case &c : {Case{"shard.bin", shard, {8, 4, 0}}, Case{"raw.bin", raw, {}}}) {
    SCOPED_TRACE(c.name);
    for (const std::vector<uint8_t> &bytes : damaged(c.valid, 3, 600, c.lengths, 4)) {
      writeBytes(dir.path(c.name), bytes);
      for (TokenFileFormat format :
           {TokenFileFormat::kAuto, TokenFileFormat::kBytes, TokenFileFormat::kLlmcShard}) {
        TokenFileOptions options;
        options.format = format;
        options.vocab = 50257;
        options.seq = 8;
        TokenFile file;
        Status s = TokenFile::open(dir.path(c.name), options, file);
        if (!s.ok()) {
          EXPECT_NE(s.message().find(c.name), std::string::npos) << s.message();
          continue;
        }
        // A file that opened samples windows inside itself.
        std::vector<int32_t> x(4 * 8), y(4 * 8);
        for (uint64_t step = 0; step < 4; ++step)
          ASSERT_TRUE(file.sampleWindows(4, 8, 1, step, x.data(), y.data()).ok());
        for (int32_t t : x) ASSERT_TRUE(t >= 0 && t < 50257);
        EXPECT_TRUE(file.copyWindow(file.size() - 9, 8, x.data(), y.data()).ok());
        EXPECT_FALSE(file.copyWindow(file.size() - 8, 8, x.data(), y.data()).ok());
      }
    }
  }
}

TEST(FileReadersFuzz, Tokenizers) {
  TempDir dir;
  std::vector<uint8_t> valid;
  appendLe32(valid, 20240328);
  appendLe32(valid, 2);
  appendLe32(valid, 40);
  appendLe32(valid, 39);
  for (int i = 4; i < 256; ++i) appendLe32(valid, 0);
  for (int i = 0; i < 40; ++i) {
    std::string token = std::string(1 + i % 3, static_cast<char>('a' + i % 26));
    valid.push_back(static_cast<uint8_t>(token.size()));
    valid.insert(valid.end(), token.begin(), token.end());
  }
  Tokenizer ok;
  writeBytes(dir.path("tok.bin"), valid);
  ASSERT_TRUE(Tokenizer::open(dir.path("tok.bin"), 64, ok).ok());
  for (const std::vector<uint8_t> &bytes : damaged(valid, 4, 800, {8}, 4)) {
    writeBytes(dir.path("bad.bin"), bytes);
    Tokenizer t;
    Status s = Tokenizer::open(dir.path("bad.bin"), 64, t);
    if (!s.ok()) {
      EXPECT_NE(s.message().find("bad.bin"), std::string::npos) << s.message();
      continue;
    }
    std::vector<int64_t> ids;
    (void)t.encode("abcabc", ids);
    for (int64_t id : ids) ASSERT_FALSE(t.decode(id).empty());
    EXPECT_EQ(t.decode(-1), "<|-1|>");
  }
}

}  // namespace
}  // namespace stepc::rt
