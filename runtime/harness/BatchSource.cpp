//===- BatchSource.cpp - the batches of a training run --------------------===//
#include "runtime/harness/BatchSource.h"

#include <algorithm>

#include "runtime/formats/Data.h"

namespace stepc::rt {

Status BatchSource::open(const std::vector<InputSpec> &inputs, const std::string &dataPath,
                         uint64_t seed, BatchSource &out) {
  BatchSource source;
  source.inputs_ = inputs;
  source.seed_ = seed;
  bool tokens = false;
  TokenFileOptions options;
  options.vocab = INT64_MAX;
  options.seq = 0;
  for (const InputSpec &input : inputs) {
    if (input.source != InputSource::kTokenStream) continue;
    tokens = true;
    options.vocab = std::min(options.vocab, input.vocab);
    options.seq = std::max(options.seq, input.shape.at(1));
  }
  if (!dataPath.empty()) {
    if (!tokens)
      return Status::error("--data " + dataPath +
                           ": this model takes no token stream (its inputs are built-in "
                           "classification data); run without --data");
    source.file_ = std::make_shared<TokenFile>();
    if (Status s = TokenFile::open(dataPath, options, *source.file_); !s.ok())
      return s.withContext("--data");
    source.identity_ = source.file_->identity();
  } else {
    source.identity_ = "builtin";
    // Raw bytes: each token input maps them into its own vocabulary when it fills a batch.
    if (tokens)
      for (unsigned char byte : builtinCorpus(seed, kBuiltinCorpusBytes))
        source.corpus_.push_back(byte);
  }
  out = std::move(source);
  return {};
}

int64_t BatchSource::tokensPerStep() const {
  int64_t n = 0;
  for (const InputSpec &input : inputs_)
    n += input.source == InputSource::kTokenStream ? input.shape[0] * input.shape[1]
                                                   : input.shape[0];
  return n;
}

bool BatchSource::countsTokens() const {
  return std::all_of(inputs_.begin(), inputs_.end(), [](const InputSpec &input) {
    return input.source == InputSource::kTokenStream;
  });
}

Status BatchSource::fill(uint64_t step, const std::vector<TensorBuffer> &batch) const {
  if (batch.size() != 2 * inputs_.size())
    return Status::error("batch: " + std::to_string(batch.size()) + " buffers for " +
                         std::to_string(inputs_.size()) + " inputs (two each are needed)");
  std::vector<double> first, second;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const InputSpec &input = inputs_[i];
    const TensorBuffer &a = batch[2 * i], &b = batch[2 * i + 1];
    int64_t rows = input.shape[0], n = a.elements();
    if (input.source == InputSource::kTokenStream) {
      int64_t seq = input.shape[1];
      if (!a.i32() || !b.i32() || n != rows * seq || b.elements() != n)
        return Status::error("batch of input '" + input.name + "': wrong buffers");
      if (file_) {
        if (Status s = file_->sampleWindows(rows, seq, seed_, step, a.i32(), b.i32()); !s.ok())
          return s;
        continue;
      }
      // The built-in corpus's bytes, modulo this input's vocabulary (a model may have token
      // inputs of different vocabularies; each gets tokens it can embed).
      sampleTokenWindows(corpus_, rows, seq, seed_, step, first, second);
      int64_t vocab = input.vocab;
      for (int64_t k = 0; k < n; ++k) {
        a.i32()[k] = static_cast<int32_t>(static_cast<int64_t>(first[k]) % vocab);
        b.i32()[k] = static_cast<int32_t>(static_cast<int64_t>(second[k]) % vocab);
      }
    } else {
      if (!a.f32() || !b.i32() || b.elements() != rows || n % rows != 0)
        return Status::error("batch of input '" + input.name + "': wrong buffers");
      sampleClassification(rows, n / rows, input.classes, seed_, step, first, second);
      for (int64_t k = 0; k < n; ++k) a.f32()[k] = static_cast<float>(first[k]);
      for (int64_t k = 0; k < rows; ++k) b.i32()[k] = static_cast<int32_t>(second[k]);
    }
  }
  return {};
}

}  // namespace stepc::rt
