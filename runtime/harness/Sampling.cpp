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
  double target = u * total, acc = 0;
  for (int64_t i = 0; i < keep; ++i) {
    acc += p[i];
    if (target < acc) return order[i];
  }
  return order[keep - 1];
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
    return program.sampleLogits({}, none);  // the program's reason
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
  return withParameters(info, options.checkpointDir, options.initFrom, options.seed,
                        [&](const StepBuffers &buffers) -> Status {
    TensorBuffer tokens = buffers.batch.at(0);
    std::vector<std::vector<int64_t>> rows(static_cast<size_t>(options.samples), context);
    std::vector<std::vector<int64_t>> generated(static_cast<size_t>(options.samples));
    for (int64_t t : context) writeToken(out, t, bytes, text);
    std::fflush(out);
    std::vector<float> logits;
    auto start = std::chrono::steady_clock::now();
    for (int64_t n = 0; n < options.tokens; ++n) {
      // Each row's last `window` tokens, left-padded with token 0; unused rows stay zero.
      std::fill(tokens.i32(), tokens.i32() + batch * window, 0);
      for (int64_t r = 0; r < options.samples; ++r) {
        const std::vector<int64_t> &row = rows[r];
        int64_t have = std::min<int64_t>(static_cast<int64_t>(row.size()), window);
        for (int64_t i = 0; i < have; ++i)
          tokens.i32()[r * window + (window - have) + i] =
              static_cast<int32_t>(row[row.size() - have + i]);
      }
      if (Status s = program.sampleLogits(buffers, logits); !s.ok()) return s;
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
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fputc('\n', out);
    for (int64_t r = 1; r < options.samples; ++r) {
      std::fprintf(out, "--- sample %lld\n", static_cast<long long>(r + 1));
      for (int64_t t : context) writeToken(out, t, bytes, text);
      for (int64_t t : generated[r]) writeToken(out, t, bytes, text);
      std::fputc('\n', out);
    }
    std::fflush(out);
    std::fprintf(err, "sampled %lld x %lld tokens in %.2f s (%.1f tokens/s; the whole window of %lld "
                      "recomputed per token)\n",
                 static_cast<long long>(options.samples), static_cast<long long>(options.tokens),
                 seconds, seconds > 0 ? options.samples * options.tokens / seconds : 0.0,
                 static_cast<long long>(window));
    if (result) {
      result->tokens = generated;
      result->seconds = seconds;
    }
    return Status();
  });
}

}  // namespace stepc::rt
