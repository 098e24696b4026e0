//===- Data.cpp - the built-in data generators ---------------------------===//
//
// Every draw is a Philox function of (seed, purpose, index), so the data of a step is the same
// on every machine and does not depend on what was drawn before.
//
//===----------------------------------------------------------------------===//
#include "runtime/formats/Data.h"

#include <algorithm>
#include <cmath>

#include "runtime/base/Init.h"
#include "runtime/base/Philox.h"

namespace stepc::rt {
namespace {

// A sequential reader of one Philox stream, for generators that make many small choices.
class Draws {
 public:
  Draws(uint64_t seed, uint64_t stream) : seed_(seed), stream_(stream) {}
  // An index uniform in [0, n).
  size_t below(size_t n) {
    size_t i = static_cast<size_t>(uniform01(seed_, stream_, next_++) * static_cast<double>(n));
    return std::min(i, n - 1);
  }
  bool chance(double p) { return uniform01(seed_, stream_, next_++) < p; }
  template <size_t N>
  const char *pick(const char *const (&words)[N]) { return words[below(N)]; }

 private:
  uint64_t seed_, stream_, next_ = 0;
};

// The grammar's word lists. Small on purpose: a model can learn the spelling of every word, the
// word classes and which class follows which, so the loss falls far below 8 bits per byte.
constexpr const char *kDeterminers[] = {"the", "a", "every", "some", "this", "that", "my", "our"};
constexpr const char *kAdjectives[] = {"small", "big", "old", "young", "red", "green",
                                       "quiet", "happy", "bright", "dark", "cold", "warm",
                                       "quick", "slow", "wise", "strange"};
constexpr const char *kNouns[] = {"cat", "dog", "bird", "child", "farmer", "river",
                                  "tree", "house", "king", "ship", "teacher", "garden",
                                  "letter", "stone", "window", "horse"};
constexpr const char *kTransitive[] = {"sees", "finds", "likes", "follows", "carries", "watches",
                                       "builds", "opens", "reads", "paints", "helps",
                                       "remembers"};
constexpr const char *kIntransitive[] = {"sleeps", "runs", "sings", "waits",
                                         "laughs", "falls", "shines", "grows"};
constexpr const char *kAdverbs[] = {"slowly", "quickly", "quietly", "often",
                                    "never",  "always",  "again",   "softly"};
constexpr const char *kPrepositions[] = {"near", "under", "behind", "beside",
                                         "over", "across", "into",  "without"};
constexpr const char *kConjunctions[] = {"and", "but", "because", "while", "so"};

bool startsWithVowel(const char *word) {
  return std::string("aeiou").find(word[0]) != std::string::npos;
}

// Determiner [adjective] noun, with "a" becoming "an" before a vowel.
void nounPhrase(Draws &d, std::string &out) {
  const char *det = d.pick(kDeterminers);
  const char *adj = d.chance(0.5) ? d.pick(kAdjectives) : nullptr;
  const char *noun = d.pick(kNouns);
  std::string article = det;
  if (article == "a" && startsWithVowel(adj ? adj : noun)) article = "an";
  out += article + " ";
  if (adj) out += std::string(adj) + " ";
  out += noun;
}

// noun-phrase verb-phrase [prepositional phrase].
void clause(Draws &d, std::string &out) {
  nounPhrase(d, out);
  if (d.chance(0.6)) {
    out += std::string(" ") + d.pick(kTransitive) + " ";
    nounPhrase(d, out);
  } else {
    out += std::string(" ") + d.pick(kIntransitive);
    if (d.chance(0.5)) out += std::string(" ") + d.pick(kAdverbs);
  }
  if (d.chance(0.3)) {
    out += std::string(" ") + d.pick(kPrepositions) + " ";
    nounPhrase(d, out);
  }
}

// A sentence: one or two clauses, capitalised, ending in a full stop.
void sentence(Draws &d, std::string &out) {
  size_t start = out.size();
  clause(d, out);
  if (d.chance(0.35)) {
    out += std::string(", ") + d.pick(kConjunctions) + " ";
    clause(d, out);
  }
  out[start] = static_cast<char>(out[start] - 'a' + 'A');
  out += ".";
}

// Streams of the generators, named so they are disjoint from the per-step streams (a step
// number) and from parameter streams (hashes of parameter names).
uint64_t corpusStream() { return hashName("data.corpus"); }
uint64_t heldOutCorpusStream() { return hashName("data.corpus.held_out"); }
uint64_t centresStream() { return hashName("data.classification.centres"); }

constexpr double kCentreScale = 1.0;  // per-feature spread of the class centres
constexpr double kPointNoise = 1.0;   // per-feature spread of points around their centre

std::string generateCorpus(uint64_t seed, uint64_t stream, size_t bytes) {
  Draws d(seed, stream);
  std::string text;
  text.reserve(bytes + 256);
  while (text.size() < bytes) {
    // Paragraphs of 3 to 7 sentences.
    size_t sentences = 3 + d.below(5);
    for (size_t i = 0; i < sentences; ++i) {
      if (i) text += " ";
      sentence(d, text);
    }
    text += "\n";
  }
  text.resize(bytes);
  return text;
}

void classificationPoints(int64_t batch, int64_t features, int64_t classes, uint64_t seed,
                          uint64_t stream, std::vector<double> &x, std::vector<double> &labels) {
  x.assign(batch * features, 0.0);
  labels.assign(batch, 0.0);
  if (classes <= 0) return;
  // Row r uses indices r * (features + 1) .. + features of the stream: one for the label, one
  // per feature, so no two draws share a Philox block.
  for (int64_t r = 0; r < batch; ++r) {
    uint64_t base = static_cast<uint64_t>(r) * static_cast<uint64_t>(features + 1);
    int64_t label = std::min(
        static_cast<int64_t>(uniform01(seed, stream, base) * static_cast<double>(classes)),
        classes - 1);
    labels[r] = static_cast<double>(label);
    for (int64_t f = 0; f < features; ++f) {
      double centre = kCentreScale * standardNormal(seed, centresStream(),
                                                    static_cast<uint64_t>(label * features + f));
      x[r * features + f] = centre + kPointNoise * standardNormal(seed, stream, base + 1 + f);
    }
  }
}

}  // namespace

std::string builtinCorpus(uint64_t seed, size_t bytes) {
  return generateCorpus(seed, corpusStream(), bytes);
}

std::string builtinHeldOutCorpus(uint64_t seed, size_t bytes) {
  return generateCorpus(seed, heldOutCorpusStream(), bytes);
}

bool splitTokenStream(int64_t length, int64_t seq, double fraction, TokenSplit &out,
                      std::string &why) {
  out = {length, 0};
  if (!(fraction >= 0.0 && fraction < 1.0)) {
    why = "the held-out fraction must be in [0, 1), found " + std::to_string(fraction);
    return false;
  }
  if (fraction == 0.0) return true;
  int64_t window = seq + 1;
  int64_t held = std::max(static_cast<int64_t>(std::ceil(fraction * static_cast<double>(length))),
                          window);
  if (length - held < window) {
    why = "holds " + std::to_string(length) + " tokens: holding out " + std::to_string(held) +
          " (at least one window of seq + 1 = " + std::to_string(window) +
          ") leaves fewer than one window to train on; lower --val-fraction (0 holds nothing "
          "out) or give more data";
    return false;
  }
  out = {length - held, held};
  return true;
}

int64_t heldOutWindowStart(int64_t heldOutTokens, int64_t seq, int64_t window) {
  int64_t windows = std::max<int64_t>((heldOutTokens - 1) / seq, 1);
  return (window % windows) * seq;
}

int64_t tokenWindowStart(int64_t length, int64_t seq, uint64_t seed, uint64_t step, int64_t row) {
  // Windows fit without wrapping when the stream holds seq + 1 tokens; a shorter stream is
  // read cyclically so any stream gives full windows.
  int64_t starts = length > seq ? length - seq : length;
  double u = uniform01(seed, rngStream(RngPurpose::kTokenWindows, step), static_cast<uint64_t>(row));
  return std::min(static_cast<int64_t>(u * static_cast<double>(starts)), starts - 1);
}

void sampleTokenWindows(const std::vector<int64_t> &stream, int64_t batch, int64_t seq,
                        uint64_t seed, uint64_t step, std::vector<double> &tokens,
                        std::vector<double> &targets) {
  tokens.assign(batch * seq, 0.0);
  targets.assign(batch * seq, 0.0);
  int64_t n = static_cast<int64_t>(stream.size());
  if (n == 0) return;
  for (int64_t r = 0; r < batch; ++r) {
    int64_t start = tokenWindowStart(n, seq, seed, step, r);
    for (int64_t t = 0; t < seq; ++t) {
      tokens[r * seq + t] = static_cast<double>(stream[(start + t) % n]);
      targets[r * seq + t] = static_cast<double>(stream[(start + t + 1) % n]);
    }
  }
}

void sampleClassification(int64_t batch, int64_t features, int64_t classes, uint64_t seed,
                          uint64_t step, std::vector<double> &x, std::vector<double> &labels) {
  classificationPoints(batch, features, classes, seed,
                       rngStream(RngPurpose::kClassification, step), x, labels);
}

void sampleHeldOutClassification(int64_t batch, int64_t features, int64_t classes,
                                 uint64_t seed, uint64_t index, std::vector<double> &x,
                                 std::vector<double> &labels) {
  classificationPoints(batch, features, classes, seed,
                       rngStream(RngPurpose::kHeldOutClassification, index), x, labels);
}

}  // namespace stepc::rt
