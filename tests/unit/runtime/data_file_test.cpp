// Token files: raw bytes and llm.c shards, validation errors, and windows that are a pure
// function of (seed, step) drawn by the same sampler as the built-in corpus.
#include <gtest/gtest.h>

#include "runtime/formats/Data.h"
#include "runtime/formats/DataFile.h"
#include "tests/unit/runtime/TestFiles.h"

namespace stepc::rt {
namespace {

using testing::appendLe32;
using testing::TempDir;

// An llm.c shard: the 256-int32 header, then `tokens` as uint16 (GPT-2) or uint32 (Llama-3).
std::vector<uint8_t> shard(int32_t magic, int32_t version, const std::vector<uint32_t> &tokens,
                           int tokenBytes, int64_t headerCount = -1) {
  std::vector<uint8_t> out;
  appendLe32(out, static_cast<uint32_t>(magic));
  appendLe32(out, static_cast<uint32_t>(version));
  appendLe32(out, static_cast<uint32_t>(headerCount >= 0 ? headerCount : tokens.size()));
  out.resize(1024, 0);
  for (uint32_t t : tokens)
    for (int i = 0; i < tokenBytes; ++i) out.push_back(static_cast<uint8_t>(t >> (8 * i)));
  return out;
}

std::vector<uint8_t> gpt2Shard(const std::vector<uint32_t> &tokens) {
  return shard(20240520, 1, tokens, 2);
}
std::vector<uint8_t> llama3Shard(const std::vector<uint32_t> &tokens) {
  return shard(20240801, 7, tokens, 4);
}

TokenFile openOk(const std::string &path, TokenFileOptions options = {}) {
  TokenFile file;
  Status status = TokenFile::open(path, options, file);
  EXPECT_TRUE(status.ok()) << status.message();
  return file;
}

std::string openError(const std::string &path, TokenFileOptions options = {}) {
  TokenFile file;
  Status status = TokenFile::open(path, options, file);
  EXPECT_FALSE(status.ok()) << path;
  EXPECT_EQ(file.size(), 0);
  return status.message();
}

TEST(TokenFile, RawBytesAreByteTokens) {
  TempDir tmp;
  testing::writeBytes(tmp.path("text"), {'h', 'i', 0, 255, '\n'});
  TokenFile file = openOk(tmp.path("text"));
  EXPECT_EQ(file.kind(), TokenFile::Kind::kBytes);
  EXPECT_STREQ(file.kindName(), "raw bytes");
  ASSERT_EQ(file.size(), 5);
  EXPECT_EQ(file.token(0), 'h');
  EXPECT_EQ(file.token(2), 0u);
  EXPECT_EQ(file.token(3), 255u);
  EXPECT_EQ(file.path(), tmp.path("text"));
}

TEST(TokenFile, ReadsGpt2AndLlama3Shards) {
  TempDir tmp;
  testing::writeBytes(tmp.path("gpt2.bin"), gpt2Shard({50256, 1, 65535, 2}));
  testing::writeBytes(tmp.path("llama.bin"), llama3Shard({128000, 0, 70000, 2147483647u}));
  TokenFile gpt2 = openOk(tmp.path("gpt2.bin"), {TokenFileFormat::kAuto, 65536, 0});
  EXPECT_EQ(gpt2.kind(), TokenFile::Kind::kGpt2Shard);
  EXPECT_STREQ(gpt2.kindName(), "llm.c GPT-2 shard");
  ASSERT_EQ(gpt2.size(), 4);
  EXPECT_EQ(gpt2.token(0), 50256u);
  EXPECT_EQ(gpt2.token(2), 65535u);
  TokenFile llama = openOk(tmp.path("llama.bin"), {TokenFileFormat::kLlmcShard, 1ll << 31, 0});
  EXPECT_EQ(llama.kind(), TokenFile::Kind::kLlama3Shard);
  ASSERT_EQ(llama.size(), 4);
  EXPECT_EQ(llama.token(0), 128000u);
  EXPECT_EQ(llama.token(2), 70000u);
  EXPECT_EQ(llama.token(3), 2147483647u);
  // Forced to raw bytes, a shard is just bytes.
  TokenFile raw = openOk(tmp.path("gpt2.bin"), {TokenFileFormat::kBytes, 256, 0});
  EXPECT_EQ(raw.kind(), TokenFile::Kind::kBytes);
  EXPECT_EQ(raw.size(), 1024 + 8);
}

TEST(TokenFile, ErrorsNameTheFileAndTheProblem) {
  TempDir tmp;
  std::string p;
  p = tmp.path("missing");
  EXPECT_EQ(openError(p), p + ": no such file");
  EXPECT_EQ(openError(tmp.dir()), tmp.dir() + ": is a directory, not a file");
  p = tmp.path("empty");
  testing::writeBytes(p, {});
  EXPECT_EQ(openError(p), p + ": the file is empty");
  p = tmp.path("short");
  testing::writeText(p, "abcdefgh");
  EXPECT_EQ(openError(p, {TokenFileFormat::kAuto, 256, 8}),
            p + ": holds 8 tokens, fewer than one window of seq + 1 = 9");
  openOk(p, {TokenFileFormat::kAuto, 256, 7});
  EXPECT_EQ(openError(p, {TokenFileFormat::kAuto, 100, 0}),
            p + ": token 100 at position 3 is outside the model's vocabulary of 100");
  EXPECT_EQ(openError(p, {TokenFileFormat::kAuto, 0, 0}),
            p + ": vocabulary size 0 is outside [1, 2^31]");
  EXPECT_EQ(openError(p, {TokenFileFormat::kAuto, 256, -1}), p + ": negative sequence length -1");
  EXPECT_EQ(openError(p, {TokenFileFormat::kLlmcShard, 256, 0}),
            p + ": truncated llm.c shard header: the file holds 8 bytes, the header alone is 1024");
}

TEST(TokenFile, ShardHeadersAreValidated) {
  TempDir tmp;
  auto check = [&](const std::vector<uint8_t> &bytes, const std::string &expected,
                   TokenFileFormat format = TokenFileFormat::kAuto) {
    std::string p = tmp.path("s.bin");
    testing::writeBytes(p, bytes);
    EXPECT_EQ(openError(p, {format, 1 << 20, 0}), p + ": " + expected);
  };
  std::vector<uint8_t> good = gpt2Shard({1, 2, 3});
  // A known magic at the start makes a shard: a truncated header is an error, not raw bytes.
  check(std::vector<uint8_t>(good.begin(), good.begin() + 500),
        "truncated llm.c shard header: the file holds 500 bytes, the header alone is 1024");
  check(std::vector<uint8_t>(good.begin(), good.end() - 1),
        "llm.c shard header says 3 tokens (6 bytes) but 5 bytes follow the header (truncated?)");
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  longer.push_back(0);
  check(longer,
        "llm.c shard header says 3 tokens (6 bytes) but 8 bytes follow the header "
        "(trailing data?)");
  check(shard(20240520, 2, {1}, 2), "llm.c GPT-2 shard has version 2, expected 1");
  check(shard(20240801, 1, {1}, 4), "llm.c Llama-3 shard has version 1, expected 7");
  check(shard(20240520, 1, {}, 2, 0xffffffffll),
        "llm.c shard header gives a negative token count -1");
  check(shard(20240520, 1, {}, 2), "llm.c GPT-2 shard holds no tokens");
  check(shard(12345, 1, {1}, 2),
        "not an llm.c shard: magic 12345, expected 20240520 (GPT-2) or "
        "20240801 (Llama-3)",
        TokenFileFormat::kLlmcShard);
  // The same bytes without a forced format are raw bytes.
  testing::writeBytes(tmp.path("s.bin"), shard(12345, 1, {1}, 2));
  EXPECT_EQ(openOk(tmp.path("s.bin")).kind(), TokenFile::Kind::kBytes);
}

TEST(TokenFile, ShardTokensOutsideTheVocabularyAreRefused) {
  TempDir tmp;
  std::string p = tmp.path("g.bin");
  testing::writeBytes(p, gpt2Shard({5, 50256, 50304, 7}));
  EXPECT_EQ(openError(p, {TokenFileFormat::kAuto, 50304, 0}),
            p + ": token 50304 at position 2 is outside the model's vocabulary of 50304");
  openOk(p, {TokenFileFormat::kAuto, 50305, 0});
  testing::writeBytes(p, llama3Shard({128255, 128256}));
  EXPECT_EQ(openError(p, {TokenFileFormat::kAuto, 128256, 0}),
            p + ": token 128256 at position 1 is outside the model's vocabulary of 128256");
  // Tokens reach the model as int32: the largest vocabulary is 2^31.
  testing::writeBytes(p, llama3Shard({1, 4000000000u}));
  EXPECT_EQ(openError(p, {TokenFileFormat::kAuto, 1ll << 31, 0}),
            p + ": token 4000000000 at position 1 is outside the model's vocabulary of 2147483648");
}

// Windows are contiguous pieces of the file, targets shifted by one, at the starts the shared
// sampler (tokenWindowStart) draws: the same windows the built-in corpus path
// (sampleTokenWindows) gives for the same token stream.
TEST(TokenFile, WindowsMatchTheSharedSampler) {
  TempDir tmp;
  std::vector<uint32_t> tokens;
  for (uint32_t i = 0; i < 3000; ++i) tokens.push_back((i * 7919u) % 50257u);
  testing::writeBytes(tmp.path("g.bin"), gpt2Shard(tokens));
  TokenFile file = openOk(tmp.path("g.bin"), {TokenFileFormat::kAuto, 50304, 64});
  const int64_t batch = 5, seq = 64;
  std::vector<int32_t> x(batch * seq), y(batch * seq);
  ASSERT_TRUE(file.sampleWindows(batch, seq, 11, 3, x.data(), y.data()).ok());
  std::vector<int64_t> stream(tokens.begin(), tokens.end());
  std::vector<double> ex, ey;
  sampleTokenWindows(stream, batch, seq, 11, 3, ex, ey);
  for (int64_t r = 0; r < batch; ++r) {
    int64_t start = tokenWindowStart(3000, seq, 11, 3, r);
    for (int64_t t = 0; t < seq; ++t) {
      ASSERT_EQ(x[r * seq + t], static_cast<int32_t>(tokens[start + t]));
      ASSERT_EQ(y[r * seq + t], static_cast<int32_t>(tokens[start + t + 1]));
      ASSERT_EQ(x[r * seq + t], ex[r * seq + t]);
      ASSERT_EQ(y[r * seq + t], ey[r * seq + t]);
    }
  }
}

// A run resumed at step N sees exactly the batches the uninterrupted run saw: sampling holds
// no state, so reopening the file and sampling (seed, N) reproduces step N.
TEST(TokenFile, WindowsArePureFunctionsOfSeedAndStep) {
  TempDir tmp;
  std::string text;
  for (int i = 0; i < 500; ++i) text += static_cast<char>('a' + (i * i) % 26);
  testing::writeText(tmp.path("t"), text);
  const int64_t batch = 4, seq = 16;
  auto sample = [&](const TokenFile &file, uint64_t seed, uint64_t step) {
    std::vector<int32_t> x(batch * seq), y(batch * seq);
    EXPECT_TRUE(file.sampleWindows(batch, seq, seed, step, x.data(), y.data()).ok());
    x.insert(x.end(), y.begin(), y.end());
    return x;
  };
  TokenFile run = openOk(tmp.path("t"));
  std::vector<std::vector<int32_t>> uninterrupted;
  for (uint64_t step = 0; step < 10; ++step) uninterrupted.push_back(sample(run, 5, step));
  TokenFile resumed = openOk(tmp.path("t"));
  for (uint64_t step = 6; step < 10; ++step)
    EXPECT_EQ(sample(resumed, 5, step), uninterrupted[step]);
  EXPECT_NE(uninterrupted[0], uninterrupted[1]);
  EXPECT_NE(sample(run, 6, 0), uninterrupted[0]);
}

// Every start is drawn (windows cover the file up to its last token) and none runs past the end.
TEST(TokenFile, WindowsCoverTheWholeFile) {
  TempDir tmp;
  std::vector<uint8_t> bytes(40);
  for (int i = 0; i < 40; ++i) bytes[i] = static_cast<uint8_t>(i);
  testing::writeBytes(tmp.path("t"), bytes);
  TokenFile file = openOk(tmp.path("t"));
  const int64_t seq = 8;
  std::vector<int> seen(40, 0);
  std::vector<int32_t> x(64 * seq), y(64 * seq);
  for (uint64_t step = 0; step < 20; ++step) {
    ASSERT_TRUE(file.sampleWindows(64, seq, 1, step, x.data(), y.data()).ok());
    for (int64_t r = 0; r < 64; ++r) {
      ASSERT_LE(x[r * seq] + seq, 39);  // the target window ends inside the file
      ++seen[x[r * seq]];
    }
  }
  for (int start = 0; start <= 40 - seq - 1; ++start) EXPECT_GT(seen[start], 0) << start;
}

TEST(TokenFile, SamplingChecksItsArguments) {
  TempDir tmp;
  testing::writeText(tmp.path("t"), "0123456789");
  TokenFile file = openOk(tmp.path("t"));
  std::vector<int32_t> x(100), y(100);
  EXPECT_EQ(file.sampleWindows(1, 10, 0, 0, x.data(), y.data()).message(),
            tmp.path("t") + ": holds 10 tokens, fewer than one window of seq + 1 = 11");
  EXPECT_EQ(file.sampleWindows(1, 0, 0, 0, x.data(), y.data()).message(),
            tmp.path("t") + ": cannot sample windows of batch 1 and sequence length 0");
  EXPECT_TRUE(file.sampleWindows(1, 9, 0, 0, x.data(), y.data()).ok());
  EXPECT_EQ(x[0], '0');
  EXPECT_EQ(y[8], '9');
}

TEST(TokenFile, IdentityFollowsTheContentsNotThePath) {
  TempDir tmp;
  testing::writeBytes(tmp.path("a.bin"), gpt2Shard({1, 2, 3}));
  testing::writeBytes(tmp.path("b.bin"), gpt2Shard({1, 2, 3}));
  testing::writeBytes(tmp.path("c.bin"), gpt2Shard({1, 2, 4}));
  std::string a = openOk(tmp.path("a.bin"), {TokenFileFormat::kAuto, 50304, 0}).identity();
  EXPECT_EQ(a.rfind("gpt2-shard:3:crc32c=", 0), 0u) << a;
  EXPECT_EQ(openOk(tmp.path("b.bin"), {TokenFileFormat::kAuto, 50304, 0}).identity(), a);
  EXPECT_NE(openOk(tmp.path("c.bin"), {TokenFileFormat::kAuto, 50304, 0}).identity(), a);
  testing::writeText(tmp.path("t"), "123456789");
  EXPECT_EQ(openOk(tmp.path("t")).identity(), "bytes:9:crc32c=e3069283");
}

}  // namespace
}  // namespace stepc::rt
