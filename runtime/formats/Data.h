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

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_DATA_H
