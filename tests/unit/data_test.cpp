// The built-in data: the corpus, token windows and the classification set.
#include "runtime/formats/Data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace stepc::rt {
namespace {

TEST(Corpus, IsDeterministicAndHasTheRequestedLength) {
  std::string a = builtinCorpus(3, 5000), b = builtinCorpus(3, 5000);
  EXPECT_EQ(a.size(), 5000u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, builtinCorpus(4, 5000));
  // A longer corpus of the same seed extends the shorter one.
  EXPECT_EQ(builtinCorpus(3, 8000).substr(0, 5000), a);
}

TEST(Corpus, IsPrintableEnglishLikeText) {
  std::string text = builtinCorpus(1, 20000);
  for (char c : text) ASSERT_TRUE(std::isprint(static_cast<unsigned char>(c)) || c == '\n');
  EXPECT_NE(text.find(". "), std::string::npos);
  EXPECT_NE(text.find(" the "), std::string::npos);
  EXPECT_NE(text.find('\n'), std::string::npos);
}

// The unigram entropy of the bytes is well below 8 bits (learnable at all), and the entropy of
// a byte given the previous one is lower still (sequential structure to learn).
TEST(Corpus, HasLowByteEntropyAndBigramStructure) {
  std::string text = builtinCorpus(2, 200000);
  std::map<int, double> unigram;
  std::map<std::pair<int, int>, double> bigram;
  for (size_t i = 0; i < text.size(); ++i) {
    unigram[static_cast<unsigned char>(text[i])] += 1;
    if (i) bigram[{static_cast<unsigned char>(text[i - 1]), static_cast<unsigned char>(text[i])}] += 1;
  }
  double n = text.size(), h1 = 0.0, h2 = 0.0;
  for (auto &[c, count] : unigram) h1 -= count / n * std::log2(count / n);
  for (auto &[pair, count] : bigram) {
    double prevCount = unigram[pair.first];
    h2 -= count / (n - 1) * std::log2(count / prevCount);
  }
  EXPECT_LT(unigram.size(), 40u);
  EXPECT_LT(h1, 4.5);
  EXPECT_LT(h2, 3.0);
  EXPECT_LT(h2, h1 - 1.0);
}

TEST(TokenWindows, TargetsAreTokensShiftedByOne) {
  std::vector<int64_t> stream;
  for (int i = 0; i < 1000; ++i) stream.push_back(i * 7 % 256);
  std::vector<double> tokens, targets;
  sampleTokenWindows(stream, 4, 16, 9, 2, tokens, targets);
  ASSERT_EQ(tokens.size(), 64u);
  ASSERT_EQ(targets.size(), 64u);
  for (int r = 0; r < 4; ++r) {
    // The window is a contiguous piece of the stream: find where it starts.
    int64_t start = -1;
    for (int64_t s = 0; s + 16 < 1000; ++s)
      if (stream[s] == tokens[r * 16] && stream[s + 1] == tokens[r * 16 + 1]) start = s;
    ASSERT_GE(start, 0);
    for (int t = 0; t < 16; ++t) {
      EXPECT_EQ(tokens[r * 16 + t], stream[start + t]);
      EXPECT_EQ(targets[r * 16 + t], stream[start + t + 1]);
    }
  }
}

TEST(TokenWindows, DependOnStepAndSeedAndRepeatExactly) {
  std::vector<int64_t> stream;
  for (int i = 0; i < 5000; ++i) stream.push_back(i % 251);
  std::vector<double> a, at, b, bt, c, ct, d, dt;
  sampleTokenWindows(stream, 2, 8, 1, 0, a, at);
  sampleTokenWindows(stream, 2, 8, 1, 0, b, bt);
  sampleTokenWindows(stream, 2, 8, 1, 1, c, ct);
  sampleTokenWindows(stream, 2, 8, 2, 0, d, dt);
  EXPECT_EQ(a, b);
  EXPECT_EQ(at, bt);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
}

TEST(TokenWindows, ShortStreamsWrapAround) {
  std::vector<int64_t> stream = {1, 2, 3};
  std::vector<double> tokens, targets;
  sampleTokenWindows(stream, 1, 5, 0, 0, tokens, targets);
  for (int t = 0; t < 5; ++t) {
    int64_t next = static_cast<int64_t>(tokens[t]) % 3 + 1;
    EXPECT_EQ(targets[t], next);
    if (t) {
      EXPECT_EQ(tokens[t], targets[t - 1]);
    }
  }
}

TEST(Classification, LabelsAreInRangeAndEveryClassOccurs) {
  std::vector<double> x, labels;
  sampleClassification(400, 8, 5, 11, 3, x, labels);
  ASSERT_EQ(x.size(), 3200u);
  ASSERT_EQ(labels.size(), 400u);
  std::vector<int> counts(5, 0);
  for (double l : labels) {
    ASSERT_EQ(l, std::floor(l));
    ASSERT_GE(l, 0);
    ASSERT_LT(l, 5);
    counts[static_cast<int>(l)]++;
  }
  for (int c : counts) EXPECT_GT(c, 40);
  for (double v : x) EXPECT_TRUE(std::isfinite(v));
}

// Points of one class scatter around a fixed centre that does not change from step to step,
// and class means are far apart relative to that scatter: the set is learnable.
TEST(Classification, ClassesAreClustersWithFixedCentres) {
  auto classMeans = [](uint64_t step) {
    std::vector<double> x, labels;
    sampleClassification(4000, 4, 2, 5, step, x, labels);
    std::vector<double> mean(8, 0.0), count(2, 0.0);
    for (size_t r = 0; r < labels.size(); ++r) {
      int c = static_cast<int>(labels[r]);
      count[c] += 1;
      for (int f = 0; f < 4; ++f) mean[c * 4 + f] += x[r * 4 + f];
    }
    for (int c = 0; c < 2; ++c)
      for (int f = 0; f < 4; ++f) mean[c * 4 + f] /= count[c];
    return mean;
  };
  std::vector<double> m0 = classMeans(0), m1 = classMeans(1);
  double drift = 0.0, separation = 0.0;
  for (int f = 0; f < 4; ++f) {
    drift = std::max(drift, std::abs(m0[f] - m1[f]));
    separation += (m0[f] - m0[4 + f]) * (m0[f] - m0[4 + f]);
  }
  EXPECT_LT(drift, 0.1);
  EXPECT_GT(std::sqrt(separation), 1.0);
}

}  // namespace
}  // namespace stepc::rt
