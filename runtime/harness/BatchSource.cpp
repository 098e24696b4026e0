//===- BatchSource.cpp - the batches of a training run --------------------===//
#include "runtime/harness/BatchSource.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

namespace stepc::rt {

Status BatchSource::open(const std::vector<InputSpec> &inputs, const std::string &dataPath,
                         uint64_t seed, double valFraction, BatchSource &out) {
  BatchSource source;
  source.inputs_ = inputs;
  source.seed_ = seed;
  source.valFraction_ = valFraction;
  if (!(valFraction >= 0.0 && valFraction < 1.0))
    return Status::error("--val-fraction: expected a fraction in [0, 1), found " +
                         std::to_string(valFraction));
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
    std::string why;
    if (!splitTokenStream(source.file_->size(), options.seq, valFraction, source.split_, why))
      return Status::error("--data " + dataPath + ": " + why);
    source.identity_ = source.file_->identity();
    // The split decides which tokens training reads: a resume with another one is other data.
    if (source.split_.heldOutTokens > 0)
      source.identity_ += ":held_out=" + std::to_string(source.split_.heldOutTokens);
  } else {
    source.identity_ = "builtin";
    // Raw bytes: each token input maps them into its own vocabulary when it fills a batch.
    if (tokens) {
      for (unsigned char byte : builtinCorpus(seed, kBuiltinCorpusBytes))
        source.corpus_.push_back(byte);
      for (unsigned char byte : builtinHeldOutCorpus(seed, kBuiltinHeldOutBytes))
        source.heldOutCorpus_.push_back(byte);
    }
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

bool BatchSource::hasHeldOut() const { return !file_ || split_.heldOutTokens > 0; }

std::string BatchSource::describeHeldOut() const {
  char line[512];
  if (file_) {
    if (!hasHeldOut()) return "none (--val-fraction 0: training reads all of " + file_->path() + ")";
    int64_t seq = 0;
    for (const InputSpec &input : inputs_)
      if (input.source == InputSource::kTokenStream) seq = std::max(seq, input.shape[1]);
    std::snprintf(line, sizeof line, "the last %.4g%% of %s: %lld tokens, %lld windows of %lld",
                  100.0 * valFraction_, file_->path().c_str(),
                  static_cast<long long>(split_.heldOutTokens),
                  static_cast<long long>(std::max<int64_t>((split_.heldOutTokens - 1) / seq, 1)),
                  static_cast<long long>(seq));
    return line;
  }
  if (!corpus_.empty()) {
    std::snprintf(line, sizeof line,
                  "the built-in corpus's held-out text (%zu bytes of another stream)",
                  heldOutCorpus_.size());
    return line;
  }
  return "held-out points of the built-in classification set (another stream)";
}

Status BatchSource::fillTokens(const InputSpec &input, bool heldOut, uint64_t index,
                               const TensorBuffer &a, const TensorBuffer &b) const {
  int64_t rows = input.shape[0], seq = input.shape[1], n = a.elements();
  if (!a.i32() || !b.i32() || n != rows * seq || b.elements() != n)
    return Status::error("batch of input '" + input.name + "': wrong buffers");
  if (file_ && !heldOut)
    return file_->sampleWindows(rows, seq, seed_, index, a.i32(), b.i32(), split_.trainTokens);
  if (file_) {
    // Held-out batches read consecutive windows of the file's tail, whatever the seed.
    for (int64_t r = 0; r < rows; ++r) {
      int64_t window = static_cast<int64_t>(index) * rows + r;
      int64_t start = split_.trainTokens + heldOutWindowStart(split_.heldOutTokens, seq, window);
      if (Status s = file_->copyWindow(start, seq, a.i32() + r * seq, b.i32() + r * seq); !s.ok())
        return s;
    }
    return {};
  }
  // The built-in corpus's bytes, modulo this input's vocabulary (a model may have token inputs
  // of different vocabularies; each gets tokens it can embed).
  std::vector<double> first(n), second(n);
  if (!heldOut) {
    sampleTokenWindows(corpus_, rows, seq, seed_, index, first, second);
  } else {
    int64_t length = static_cast<int64_t>(heldOutCorpus_.size());
    for (int64_t r = 0; r < rows; ++r) {
      int64_t start = heldOutWindowStart(length, seq, static_cast<int64_t>(index) * rows + r);
      for (int64_t t = 0; t < seq; ++t) {
        first[r * seq + t] = static_cast<double>(heldOutCorpus_[(start + t) % length]);
        second[r * seq + t] = static_cast<double>(heldOutCorpus_[(start + t + 1) % length]);
      }
    }
  }
  int64_t vocab = input.vocab;
  for (int64_t k = 0; k < n; ++k) {
    a.i32()[k] = static_cast<int32_t>(static_cast<int64_t>(first[k]) % vocab);
    b.i32()[k] = static_cast<int32_t>(static_cast<int64_t>(second[k]) % vocab);
  }
  return {};
}

namespace {

Status fillBatch(const std::vector<InputSpec> &inputs, const std::vector<TensorBuffer> &batch,
                 const std::function<Status(const InputSpec &, const TensorBuffer &,
                                            const TensorBuffer &)> &tokens,
                 const std::function<void(int64_t, int64_t, int64_t, std::vector<double> &,
                                          std::vector<double> &)> &points) {
  if (batch.size() != 2 * inputs.size())
    return Status::error("batch: " + std::to_string(batch.size()) + " buffers for " +
                         std::to_string(inputs.size()) + " inputs (two each are needed)");
  std::vector<double> first, second;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec &input = inputs[i];
    const TensorBuffer &a = batch[2 * i], &b = batch[2 * i + 1];
    if (input.source == InputSource::kTokenStream) {
      if (Status s = tokens(input, a, b); !s.ok()) return s;
      continue;
    }
    int64_t rows = input.shape[0], n = a.elements();
    if (!a.f32() || !b.i32() || b.elements() != rows || n % rows != 0)
      return Status::error("batch of input '" + input.name + "': wrong buffers");
    points(rows, n / rows, input.classes, first, second);
    for (int64_t k = 0; k < n; ++k) a.f32()[k] = static_cast<float>(first[k]);
    for (int64_t k = 0; k < rows; ++k) b.i32()[k] = static_cast<int32_t>(second[k]);
  }
  return {};
}

}  // namespace

Status BatchSource::fill(uint64_t step, const std::vector<TensorBuffer> &batch) const {
  return fillBatch(
      inputs_, batch,
      [&](const InputSpec &input, const TensorBuffer &a, const TensorBuffer &b) {
        return fillTokens(input, /*heldOut=*/false, step, a, b);
      },
      [&](int64_t rows, int64_t features, int64_t classes, std::vector<double> &x,
          std::vector<double> &labels) {
        sampleClassification(rows, features, classes, seed_, step, x, labels);
      });
}

Status BatchSource::fillHeldOut(uint64_t index, const std::vector<TensorBuffer> &batch) const {
  if (!hasHeldOut())
    return Status::error("--val-fraction 0 holds no data out of " + file_->path() +
                         ": nothing to validate on (give a fraction such as 0.05)");
  return fillBatch(
      inputs_, batch,
      [&](const InputSpec &input, const TensorBuffer &a, const TensorBuffer &b) {
        return fillTokens(input, /*heldOut=*/true, index, a, b);
      },
      [&](int64_t rows, int64_t features, int64_t classes, std::vector<double> &x,
          std::vector<double> &labels) {
        sampleHeldOutClassification(rows, features, classes, seed_, index, x, labels);
      });
}

}  // namespace stepc::rt
