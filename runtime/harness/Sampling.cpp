//===- Sampling.cpp - the training executable's `sample` ------------------===//
#include "runtime/harness/Sampling.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "runtime/base/Philox.h"
#include "runtime/formats/Tokenizer.h"
#include "runtime/harness/TrainingLoop.h"

namespace stepc::rt {

int64_t drawToken(const float *logits, int64_t vocab, const SampleOptions &options, double u) {
  if (options.temperature == 0.0)
    return std::max_element(logits, logits + vocab) - logits;  // greedy (the first maximum)
  std::vector<int64_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  // Most likely first; ties by id, so the cut below is deterministic.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  int64_t keep = options.topK > 0 ? std::min(options.topK, vocab) : vocab;
  double top = logits[order[0]];
  std::vector<double> p(static_cast<size_t>(keep));
  double total = 0;
  for (int64_t i = 0; i < keep; ++i) total += p[i] = std::exp((logits[order[i]] - top) / options.temperature);
  // Top-p: the smallest prefix whose probability reaches P.
  if (options.topP < 1.0) {
    double mass = 0;
    for (int64_t i = 0; i < keep; ++i) {
      mass += p[i] / total;
      if (mass >= options.topP) {
        keep = i + 1;
        break;
      }
    }
    total = std::accumulate(p.begin(), p.begin() + keep, 0.0);
  }
  // The draw walks the kept tokens in id order, not in probability order: two near-equal
  // logits swap places in the sorted order under a last-bit rounding difference (a GEMM over
  // one row vs a whole window), which would hand the same u to the other token. In id order,
  // such noise moves a boundary by its own size only.
  std::vector<int64_t> byId(order.begin(), order.begin() + keep);
  std::vector<double> q(p.begin(), p.begin() + keep);
  std::vector<int64_t> rank(static_cast<size_t>(keep));
  std::iota(rank.begin(), rank.end(), 0);
  std::sort(rank.begin(), rank.end(), [&](int64_t a, int64_t b) { return byId[a] < byId[b]; });
  double target = u * total, acc = 0;
  for (int64_t i : rank) {
    acc += q[i];
    if (target < acc) return byId[i];
  }
  return byId[rank.back()];
}

namespace {

// A token as text: a byte of a byte model, its bytes through a tokenizer, else its id.
void writeToken(FILE *out, int64_t token, bool bytes, const Tokenizer *tokenizer = nullptr) {
  if (tokenizer) {
    std::string text = tokenizer->decode(token);
    std::fwrite(text.data(), 1, text.size(), out);
  } else if (bytes) {
    std::fputc(static_cast<int>(token), out);
  } else {
    std::fprintf(out, "%lld ", static_cast<long long>(token));
  }
}

}  // namespace

Status sample(StepProgram &program, const SampleOptions &options, FILE *out, FILE *err,
              SampleResult *result) {
  const ProgramInfo &info = program.info();
  if (!program.canSample()) {
    std::vector<float> none;
    return program.sampleLogits({}, 0, none);  // the program's reason
  }
  if (info.inputs.size() != 1 || info.inputs[0].source != InputSource::kTokenStream)
    return Status::error("sample: the model must take one token input");
  const InputSpec &input = info.inputs[0];
  int64_t batch = input.shape.at(0), window = input.shape.at(1), vocab = input.vocab;
  bool bytes = vocab == 256;
  if (options.tokens < 1) return Status::error("--tokens must be at least 1");
  if (!(options.temperature >= 0) || !std::isfinite(options.temperature))
    return Status::error("--temperature must be a number >= 0 (0: greedy)");
  if (!(options.topP > 0 && options.topP <= 1))
    return Status::error("--top-p must be in (0, 1]");
  if (options.topK < 0) return Status::error("--top-k must be >= 0 (0: every token)");
  if (options.samples < 1 || options.samples > batch)
    return Status::error("--samples must be in [1, " + std::to_string(batch) +
                         "]: the model's batch generates that many at once");
  if (!options.prompt.empty() && options.hasPromptIds)
    return Status::error("--prompt and --prompt-ids exclude each other");
  std::vector<int64_t> context;
  Tokenizer tokenizer;
  const Tokenizer *text = nullptr;
  if (!options.tokenizer.empty()) {
    if (Status s = Tokenizer::open(options.tokenizer, vocab, tokenizer); !s.ok()) return s;
    text = &tokenizer;
  }
  if (options.hasPromptIds) {
    context = options.promptIds;
  } else if (text) {
    if (Status s = text->encode(options.prompt, context); !s.ok()) return s;
  } else {
    if (!bytes && !options.prompt.empty())
      return Status::error("--prompt: this model's vocabulary is " + std::to_string(vocab) +
                           " tokens, not bytes; give the token ids with --prompt-ids 1,2,3, or "
                           "a --tokenizer");
    for (unsigned char c : options.prompt) context.push_back(c);
  }
  for (int64_t t : context)
    if (t < 0 || t >= vocab)
      return Status::error("--prompt-ids: token " + std::to_string(t) +
                           " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  if (static_cast<int64_t>(context.size()) > window)
    return Status::error("the prompt is " + std::to_string(context.size()) +
                         " tokens, longer than the model's window of " + std::to_string(window) +
                         " (its sequence length); shorten it");
  if (Status s = program.setThreads(options.threads); !s.ok()) return s.withContext("--threads");
  bool incremental = program.canSampleIncrementally() && !options.fullWindow;
  // A full window starts again from its last half: both paths see the same tokens at the same
  // positions, so they draw the same text (a sliding window would move every position, which
  // no per-position state can follow).
  int64_t keep = std::max<int64_t>(1, window / 2);
  bool startToken = context.empty();
  if (startToken) context.push_back(0);  // an empty prompt starts from token 0 (not printed)
  return withParameters(info, options.checkpointDir, options.initFrom, options.seed,
                        [&](const StepBuffers &buffers) -> Status {
    TensorBuffer tokens = buffers.batch.at(0);
    std::vector<std::vector<int64_t>> rows(static_cast<size_t>(options.samples), context);
    std::vector<std::vector<int64_t>> generated(static_cast<size_t>(options.samples));
    for (size_t i = startToken ? 1 : 0; i < context.size(); ++i) writeToken(out, context[i], bytes, text);
    std::fflush(out);
    std::vector<float> logits;
    std::vector<int32_t> fed(static_cast<size_t>(batch), 0);
    int64_t start = 0, length = static_cast<int64_t>(context.size()), steps = 0;
    // The logits after rows[r][start, length), one way or the other.
    auto feed = [&](int64_t from) -> Status {  // incremental: the tokens [from, length)
      for (int64_t i = from; i < length; ++i, ++steps) {
        for (int64_t r = 0; r < options.samples; ++r) fed[r] = static_cast<int32_t>(rows[r][i]);
        if (Status s = program.sampleStep(buffers, fed, i - start, logits); !s.ok()) return s;
      }
      return Status();
    };
    auto recompute = [&]() -> Status {  // the whole window, right-padded with token 0
      std::fill(tokens.i32(), tokens.i32() + batch * window, 0);
      for (int64_t r = 0; r < options.samples; ++r)
        for (int64_t i = start; i < length; ++i)
          tokens.i32()[r * window + (i - start)] = static_cast<int32_t>(rows[r][i]);
      ++steps;
      return program.sampleLogits(buffers, length - start - 1, logits);
    };
    auto begin = [&]() -> Status {  // a new window from `start`
      if (!incremental) return recompute();
      if (Status s = program.resetSampleState(); !s.ok()) return s;
      return feed(start);
    };
    auto clock = std::chrono::steady_clock::now();
    if (Status s = begin(); !s.ok()) return s;
    int64_t restarts = 0;
    for (int64_t n = 0; n < options.tokens; ++n) {
      for (int64_t r = 0; r < options.samples; ++r) {
        double u = uniform01(options.seed, rngStream(RngPurpose::kSampling, static_cast<uint64_t>(n)),
                             static_cast<uint64_t>(r));
        int64_t token = drawToken(logits.data() + r * vocab, vocab, options, u);
        rows[r].push_back(token);
        generated[r].push_back(token);
        if (r == 0) {
          writeToken(out, token, bytes, text);
          std::fflush(out);
        }
      }
      ++length;
      if (n + 1 == options.tokens) break;
      Status s;
      if (length - start > window) {
        start = length - keep;
        ++restarts;
        s = begin();
      } else {
        s = incremental ? feed(length - 1) : recompute();
      }
      if (!s.ok()) return s;
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - clock).count();
    std::fputc('\n', out);
    for (int64_t r = 1; r < options.samples; ++r) {
      std::fprintf(out, "--- sample %lld\n", static_cast<long long>(r + 1));
      for (size_t i = startToken ? 1 : 0; i < context.size(); ++i) writeToken(out, context[i], bytes, text);
      for (int64_t t : generated[r]) writeToken(out, t, bytes, text);
      std::fputc('\n', out);
    }
    std::fflush(out);
    std::string how =
        incremental ? "incremental: one position per token fed, " + std::to_string(steps) +
                          " positions in all"
                    : "the whole window of " + std::to_string(window) + " recomputed per token" +
                          (program.canSampleIncrementally() ? " (--full-window)" : "");
    if (restarts > 0)
      how += "; the window restarted " + std::to_string(restarts) + " time(s) from its last " +
             std::to_string(keep) + " tokens";
    std::fprintf(err, "sampled %lld x %lld tokens in %.2f s (%.1f tokens/s; %s)\n",
                 static_cast<long long>(options.samples), static_cast<long long>(options.tokens),
                 seconds, seconds > 0 ? options.samples * options.tokens / seconds : 0.0,
                 how.c_str());
    if (result) {
      result->tokens = generated;
      result->seconds = seconds;
    }
    return Status();
  }, &program);
}

}  // namespace stepc::rt
