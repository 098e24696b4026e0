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
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_BATCHSOURCE_H
#define STEPC_RUNTIME_BATCHSOURCE_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/formats/DataFile.h"
#include "runtime/base/Status.h"
#include "runtime/harness/StepProgram.h"

namespace stepc::rt {

/// Bytes of the built-in corpus (as the reference interpreter's `stepc run` uses).
constexpr size_t kBuiltinCorpusBytes = size_t{1} << 20;

class BatchSource {
 public:
  /// Prepares the batches of `inputs` drawn with `seed`. With a `dataPath`, token inputs read
  /// that file, opened and validated against the smallest vocabulary and the longest sequence
  /// of the token inputs. Errors: the file's (DataFile.h), or a data file for a model without
  /// token inputs.
  static Status open(const std::vector<InputSpec> &inputs, const std::string &dataPath,
                     uint64_t seed, BatchSource &out);

  /// What the data is, for checkpoints: the file's identity() (same data, any path), or
  /// "builtin".
  const std::string &identity() const { return identity_; }
  uint64_t seed() const { return seed_; }

  /// Tokens (or examples) one step consumes: batch * seq of every token input, or batch of
  /// classification inputs.
  int64_t tokensPerStep() const;
  /// True if every input is a token stream (the progress line then counts tokens).
  bool countsTokens() const;

  /// Fills `batch` (two buffers per input, as StepProgram.h lays them out) with step `step`.
  Status fill(uint64_t step, const std::vector<TensorBuffer> &batch) const;

 private:
  std::vector<InputSpec> inputs_;
  uint64_t seed_ = 0;
  std::string identity_;
  std::shared_ptr<TokenFile> file_;       // --data, if given
  std::vector<int64_t> corpus_;           // the built-in corpus, if a token input needs it
};

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_BATCHSOURCE_H
