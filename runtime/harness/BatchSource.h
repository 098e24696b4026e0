//===- BatchSource.h - the batches of a training run ------------*- C++ -*-===//
//
// Fills a step program's batch buffers (StepProgram.h) for step s, as a pure function of
// (seed, s), so a resumed run sees exactly the batches the uninterrupted run would have seen:
//
//   token_stream(vocab)      windows of a token file (--data: raw bytes or an llm.c shard,
//                            DataFile.h) or, without one, of the built-in corpus (Data.h, the
//                            same 1 MiB the reference interpreter uses, tokens taken mod vocab)
//   classification(classes)  the built-in classification set (Data.h)
//
// Every token input windows the same stream; the window positions come from tokenWindowStart.
//
// A held-out split that training never sees feeds validation (`eval`, `train --eval-every`):
// for a data file its last --val-fraction of tokens (at least one window; training samples only
// the rest), for the built-in corpus a held-out text of the same grammar from another stream,
// for the classification set points from a stream training never draws.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_BATCHSOURCE_H
#define STEPC_RUNTIME_BATCHSOURCE_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/formats/Data.h"
#include "runtime/formats/DataFile.h"
#include "runtime/base/Status.h"
#include "runtime/harness/StepProgram.h"

namespace stepc::rt {

/// Bytes of the built-in corpus (as the reference interpreter's `stepc run` uses).
constexpr size_t kBuiltinCorpusBytes = size_t{1} << 20;
/// Bytes of the built-in corpus's held-out text.
constexpr size_t kBuiltinHeldOutBytes = size_t{1} << 16;
/// The default --val-fraction: the last 5% of a data file is held out.
constexpr double kDefaultValFraction = 0.05;

class BatchSource {
 public:
  /// Prepares the batches of `inputs` drawn with `seed`. With a `dataPath`, token inputs read
  /// that file, opened and validated against the smallest vocabulary and the longest sequence
  /// of the token inputs, its last `valFraction` held out. Errors: the file's (DataFile.h), a
  /// data file for a model without token inputs, a file too short for the split.
  static Status open(const std::vector<InputSpec> &inputs, const std::string &dataPath,
                     uint64_t seed, double valFraction, BatchSource &out);

  /// What the data is, for checkpoints: the file's identity() (same data, any path) and the
  /// held-out fraction (it decides what training reads), or "builtin".
  const std::string &identity() const { return identity_; }
  uint64_t seed() const { return seed_; }

  /// Tokens (or examples) one step consumes: batch * seq of every token input, or batch of
  /// classification inputs.
  int64_t tokensPerStep() const;
  /// True if every input is a token stream (the progress line then counts tokens).
  bool countsTokens() const;

  /// Fills `batch` (two buffers per input, as StepProgram.h lays them out) with step `step`.
  Status fill(uint64_t step, const std::vector<TensorBuffer> &batch) const;

  /// True unless the data is a file with --val-fraction 0 (nothing held out).
  bool hasHeldOut() const;
  /// Fills `batch` with held-out batch `index` (the same for every seed of a data file; of the
  /// seed's held-out stream for built-in data).
  Status fillHeldOut(uint64_t index, const std::vector<TensorBuffer> &batch) const;
  /// One line: what the held-out split is ("the last 5% of FILE: 655 tokens, 2 windows").
  std::string describeHeldOut() const;

 private:
  std::vector<InputSpec> inputs_;
  uint64_t seed_ = 0;
  std::string identity_;
  Status fillTokens(const InputSpec &input, bool heldOut, uint64_t index, const TensorBuffer &a,
                    const TensorBuffer &b) const;

  std::shared_ptr<TokenFile> file_;       // --data, if given
  TokenSplit split_;                      // of file_
  double valFraction_ = 0;
  std::vector<int64_t> corpus_;           // the built-in corpus, if a token input needs it
  std::vector<int64_t> heldOutCorpus_;    // and its held-out text
};

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_BATCHSOURCE_H
