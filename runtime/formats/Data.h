//===- Data.h - the built-in data generators --------------------*- C++ -*-===//
//
// With no data file, training runs on generated data that has learnable structure, so the
// first run works anywhere and its loss visibly falls. Deterministic from (seed, step).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_DATA_H
#define STEPC_RUNTIME_DATA_H

#include <cstdint>
#include <string>
#include <vector>

namespace stepc::rt {

/// The built-in byte corpus: English-like text generated from a fixed grammar (so bigram and
/// word structure are learnable), `bytes` long, identical for a given seed.
std::string builtinCorpus(uint64_t seed, size_t bytes);

/// The built-in corpus's held-out text: the same grammar drawn from another stream, so no
/// sentence sequence of it is one training saw (validation on the built-in data).
std::string builtinHeldOutCorpus(uint64_t seed, size_t bytes);

/// How a token stream of `length` tokens splits for windows of seq + 1 tokens: the first
/// `trainTokens` are training data, the last `heldOutTokens` held out (validation, `eval`).
struct TokenSplit {
  int64_t trainTokens = 0;
  int64_t heldOutTokens = 0;
};

/// The split holding out the last max(ceil(fraction * length), seq + 1) tokens (at least one
/// window), or none for fraction 0. False, with the reason in `why`, when what remains for
/// training is shorter than one window or fraction is outside [0, 1).
bool splitTokenStream(int64_t length, int64_t seq, double fraction, TokenSplit &out,
                      std::string &why);

/// Where held-out window `window` starts, relative to the held-out tokens: consecutive windows
/// that do not overlap (window w covers tokens [w seq, w seq + seq], targets included), read
/// cyclically once all (heldOutTokens - 1) / seq of them are used. Evaluation covers the held
/// out data in order rather than sampling it, so M batches score M * batch distinct windows.
int64_t heldOutWindowStart(int64_t heldOutTokens, int64_t seq, int64_t window);

/// Where batch row `row`'s window of `seq + 1` tokens starts in a stream of `length` (> 0)
/// tokens at `step`: uniform over the `length - seq` starts where the window fits (HomebrewNLP's
/// random windows), or over all `length` positions, read cyclically, when the stream holds at
/// most `seq` tokens. Drawn from Philox(seed, step, row): a pure function of its arguments, so
/// the data position of a run is just (seed, step) and a resumed run sees the same windows.
/// Every token source (the built-in corpus, data files) samples through this.
int64_t tokenWindowStart(int64_t length, int64_t seq, uint64_t seed, uint64_t step, int64_t row);

/// Token windows from a token stream: for batch row r, the window at
/// tokenWindowStart(stream.size(), seq, seed, step, r); tokens = window[0..seq), targets =
/// window[1..seq]. `tokens`/`targets` are [batch * seq], row-major. Tokens must be < vocab.
void sampleTokenWindows(const std::vector<int64_t> &stream, int64_t batch, int64_t seq,
                        uint64_t seed, uint64_t step, std::vector<double> &tokens,
                        std::vector<double> &targets);

/// The built-in classification set: `classes` Gaussian clusters in `features` dimensions with
/// fixed centres (from seed); each step draws `batch` labelled points. features: [batch *
/// features], labels: [batch].
void sampleClassification(int64_t batch, int64_t features, int64_t classes, uint64_t seed,
                          uint64_t step, std::vector<double> &x, std::vector<double> &labels);

/// Held-out points of the same classification set (the same centres; labels and noise from a
/// stream training never draws): batch `index` of the validation split.
void sampleHeldOutClassification(int64_t batch, int64_t features, int64_t classes,
                                 uint64_t seed, uint64_t index, std::vector<double> &x,
                                 std::vector<double> &labels);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_DATA_H
