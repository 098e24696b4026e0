//===- Sampling.h - the training executable's `sample` ----------*- C++ -*-===//
//
// Generates text from a language model (one token input, trained to predict the next token):
// each row of the model's batch is a sample; its window (the model's sequence length T) holds
// the context from position 0 (the prompt must fit it; an empty prompt starts from token 0),
// and once it is full it starts again from its last T / 2 tokens. Each new token is drawn from
// the logits after the window's last token: temperature 0 takes the most likely token;
// otherwise softmax(logits / temperature), cut to the top-k tokens and to the smallest set
// whose probability reaches top-p, sampled with Philox(seed, RngPurpose::kSampling, token
// index), so a seed gives the same text on every machine.
//
// Two ways to the logits, which give the same tokens: a model whose ops allow it carries
// @sample_step (compiler/Training/BuildSampleStep.cpp) and feeds one position per token,
// keeping each causal convolution's, running sum's and attention's (key/value cache) state; otherwise, or with --full-window,
// the whole window is recomputed for each token (StepProgram::sampleLogits, right-padded).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_HARNESS_SAMPLING_H
#define STEPC_RUNTIME_HARNESS_SAMPLING_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/base/Status.h"
#include "runtime/harness/StepProgram.h"

namespace stepc::rt {

struct SampleOptions {
  std::string checkpointDir;      // --checkpoint-dir: the newest checkpoint's parameters
  std::string initFrom;           // --init-from FILE.safetensors
  std::string prompt;             // --prompt TEXT: bytes (byte models, vocabulary 256)
  std::vector<int64_t> promptIds;  // --prompt-ids 1,2,3: token ids (any vocabulary)
  std::string tokenizer;          // --tokenizer FILE: llm.c's gpt2_tokenizer.bin (Tokenizer.h)
  bool hasPromptIds = false;
  int64_t tokens = 200;           // --tokens N to generate
  double temperature = 1.0;       // --temperature T >= 0; 0: greedy
  int64_t topK = 0;               // --top-k K; 0: all tokens
  double topP = 1.0;              // --top-p P in (0, 1]
  uint64_t seed = 0;              // --seed S
  int64_t samples = 1;            // --samples M: rows generated together (<= the batch)
  int threads = 0;                // --threads
  bool fullWindow = false;        // --full-window: recompute the window even when incremental
};

/// What a run produced, for callers and tests.
struct SampleResult {
  std::vector<std::vector<int64_t>> tokens;  // per sample: the generated tokens only
  double seconds = 0;                        // generation time (sampleLogits calls)
};

/// Generates `options.tokens` tokens for each of `options.samples` rows, streaming sample 0's
/// text to `out` as it is generated (the others are printed after it); a summary line (tokens/s)
/// goes to `err`. Errors: a model that cannot sample, a prompt longer than the window or with a
/// token outside the vocabulary, bad options.
Status sample(StepProgram &program, const SampleOptions &options, FILE *out, FILE *err,
              SampleResult *result = nullptr);

/// Token `n` from `logits` (one row of `vocab` values) with `options`' temperature, top-k and
/// top-p, drawn with uniform `u` in [0, 1). Exposed for the unit tests.
int64_t drawToken(const float *logits, int64_t vocab, const SampleOptions &options, double u);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_HARNESS_SAMPLING_H
