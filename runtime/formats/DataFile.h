//===- DataFile.h - token streams from files --------------------*- C++ -*-===//
//
// The `--data FILE` of a training executable: a token stream read from a file, sampled into
// random windows exactly as the built-in corpus is (tokenWindowStart in Data.h). Two formats:
//
//   raw bytes    any file; each byte is a token (vocabulary 256), HomebrewNLP's byte-level LM.
//   llm.c shard  a 256 x int32 little-endian header, [0] magic, [1] version, [2] token count,
//                then the tokens: GPT-2 shards (magic 20240520, version 1) hold uint16 tokens,
//                Llama-3 shards (magic 20240801, version 7) uint32 (llm.c data_common.py).
//
// Opening validates everything a training run would otherwise trip over later (format, size,
// every token inside the model's vocabulary) and returns a Status naming the file and the
// problem. The windows of a step are a pure function of (seed, step): DataPosition is all a
// checkpoint needs to resume the stream exactly.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_DATAFILE_H
#define STEPC_RUNTIME_DATAFILE_H

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/base/Status.h"

namespace stepc::rt {

enum class TokenFileFormat {
  kAuto,       // an llm.c shard if the file starts with a known magic, else raw bytes
  kBytes,      // raw bytes, whatever the file holds
  kLlmcShard,  // an llm.c shard; anything else is an error
};

struct TokenFileOptions {
  TokenFileFormat format = TokenFileFormat::kAuto;
  /// The model's vocabulary: every token of the file must be below it (checked at open).
  int64_t vocab = 256;
  /// The model's sequence length: the file must hold one window of seq + 1 tokens. 0: any
  /// non-empty file (sampleWindows checks again).
  int64_t seq = 0;
};

/// How far a run has read its data, for checkpoints. Windows are drawn from (seed, step) only,
/// so restoring this position reproduces every later batch.
struct DataPosition {
  uint64_t seed = 0;   // the data seed
  uint64_t step = 0;   // the next step to sample
  std::string source;  // what the data was (TokenFile::identity(), or e.g. "builtin"), so a
                       // resume on different data can be noticed
};

/// A validated token file, held in memory.
class TokenFile {
 public:
  enum class Kind { kBytes, kGpt2Shard, kLlama3Shard };

  /// Opens and validates `path`. Errors: a missing or unreadable file, an empty file, a bad or
  /// truncated shard header, a size that disagrees with the header's token count, a file
  /// shorter than one window of seq + 1 tokens, a token >= vocab.
  static Status open(const std::string &path, const TokenFileOptions &options, TokenFile &out);

  const std::string &path() const { return path_; }
  Kind kind() const { return kind_; }
  /// "raw bytes", "llm.c GPT-2 shard" or "llm.c Llama-3 shard".
  const char *kindName() const;
  /// The number of tokens.
  int64_t size() const { return count_; }
  /// Token i (0 <= i < size()).
  uint32_t token(int64_t i) const;
  /// "<kind>:<tokens>:crc32c=<hex>" of the token data: equal for the same data under any
  /// path. Sums the whole file (about 0.1 s per 200 MB); call it once.
  std::string identity() const;

  /// Fills `tokens` and `targets` ([batch, seq] row-major int32, caller-owned) with the
  /// windows of `step`: row r is the seq + 1 tokens at tokenWindowStart(size(), seq, seed,
  /// step, r); tokens = window[0..seq), targets = window[1..seq]. Fails if the file is shorter
  /// than seq + 1 tokens or seq < 1.
  /// With `limit` (> 0), windows are drawn from the first `limit` tokens only (the training
  /// split, Data.h's splitTokenStream).
  Status sampleWindows(int64_t batch, int64_t seq, uint64_t seed, uint64_t step, int32_t *tokens,
                       int32_t *targets, int64_t limit = 0) const;
  /// Copies the window of seq + 1 tokens at `start` (tokens = [start, start + seq), targets one
  /// later) into `tokens` and `targets` (seq each). Fails if it does not fit in the file.
  Status copyWindow(int64_t start, int64_t seq, int32_t *tokens, int32_t *targets) const;

 private:
  std::string path_;
  Kind kind_ = Kind::kBytes;
  std::vector<uint8_t> bytes_;  // the whole file
  size_t firstToken_ = 0;       // byte offset of token 0 (past a shard's header)
  size_t tokenBytes_ = 1;       // bytes per token
  int64_t count_ = 0;
};

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_DATAFILE_H
