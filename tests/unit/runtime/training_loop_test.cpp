// The training loop on hand-written step programs: the loss falls, runs are reproducible,
// resume is bit-identical, other models' checkpoints are refused, and bad data, init files and
// checkpoint directories get clear errors.
#include "runtime/harness/TrainingLoop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/harness/BatchSource.h"
#include "runtime/formats/Checkpoint.h"
#include "runtime/base/Json.h"
#include "runtime/formats/Safetensors.h"
#include "tests/unit/runtime/TestFiles.h"
#include "tests/unit/runtime/ToyPrograms.h"

namespace stepc::rt {
namespace {

using testing::BigramLM;
using testing::readBytes;
using testing::SoftmaxRegression;
using testing::TempDir;
using testing::writeBytes;
using testing::writeText;

// A reporter that writes only the metrics file, with a clock advancing 0.5 s per reading (exact
// in binary, so every step_ms and tokens_per_s is the same in every run).
struct QuietReporter {
  double t = 0;
  Reporter reporter;
  explicit QuietReporter(const std::string &metrics = "")
      : reporter([this, metrics] {
          ReporterOptions o;
          o.mode = ReporterOptions::Mode::kQuiet;
          o.out = nullptr;
          o.metricsPath = metrics;
          o.clock = [this] { return t += 0.5; };
          return o;
        }()) {}
};

Status runTrain(StepProgram &program, const TrainOptions &options,
                const std::string &metrics = "", TrainResult *result = nullptr) {
  QuietReporter r(metrics);
  return train(program, options, r.reporter, result);
}

std::vector<JsonValue> readMetrics(const std::string &path) {
  std::vector<uint8_t> bytes = readBytes(path);
  std::string text(bytes.begin(), bytes.end());
  std::vector<JsonValue> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    EXPECT_NE(end, std::string::npos) << "the last line lacks a newline";
    if (end == std::string::npos) break;
    JsonValue value;
    Status s = parseJson(std::string_view(text).substr(begin, end - begin), value);
    EXPECT_TRUE(s.ok()) << s.message();
    lines.push_back(value);
    begin = end + 1;
  }
  return lines;
}

double numberOf(const JsonValue &object, const char *key) {
  const JsonValue *v = object.find(key);
  EXPECT_TRUE(v && v->isNumber()) << key;
  return v && v->isNumber() ? std::stod(v->text) : NAN;
}

TEST(TrainingLoop, LossDecreasesOnClassification) {
  TempDir dir;
  SoftmaxRegression program;
  TrainOptions options;
  options.steps = 80;
  options.seed = 3;
  ASSERT_TRUE(runTrain(program, options, dir.path("m.jsonl")).ok());
  std::vector<JsonValue> lines = readMetrics(dir.path("m.jsonl"));
  ASSERT_EQ(lines.size(), 80u);
  double early = 0, late = 0;
  for (int i = 0; i < 10; ++i) early += numberOf(lines[i], "loss");
  for (int i = 70; i < 80; ++i) late += numberOf(lines[i], "loss");
  EXPECT_LT(late, 0.6 * early) << "mean loss of the first 10 steps " << early / 10
                               << ", of the last 10 " << late / 10;
  EXPECT_EQ(numberOf(lines[0], "step"), 0);
  EXPECT_EQ(numberOf(lines[79], "step"), 79);
}

TEST(TrainingLoop, LossDecreasesOnTheBuiltinCorpusAndOnADataFile) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the cat sat on the mat. ";
  writeText(dir.path("corpus.txt"), text);
  for (bool file : {false, true}) {
    SCOPED_TRACE(file ? "data file" : "built-in corpus");
    BigramLM program;
    TrainOptions options;
    options.steps = 60;
    if (file) options.data = dir.path("corpus.txt");
    std::string metrics = dir.path(file ? "file.jsonl" : "builtin.jsonl");
    ASSERT_TRUE(runTrain(program, options, metrics).ok());
    std::vector<JsonValue> lines = readMetrics(metrics);
    ASSERT_EQ(lines.size(), 60u);
    EXPECT_NEAR(numberOf(lines[0], "loss"), std::log(256.0), 0.05);
    EXPECT_LT(numberOf(lines[59], "loss"), 0.75 * numberOf(lines[0], "loss"));
    EXPECT_EQ(numberOf(lines[0], "tokens_per_s"), 4 * 16 / 0.5);
    EXPECT_EQ(numberOf(lines[0], "step_ms"), 500);
  }
}

// An llm.c GPT-2 shard (uint16 tokens) trains like raw bytes; a token beyond the model's
// vocabulary is refused before any step runs.
TEST(TrainingLoop, TrainsOnAnLlmcShard) {
  TempDir dir;
  auto shard = [](const std::vector<uint32_t> &tokens) {
    std::vector<uint8_t> out;
    testing::appendLe32(out, 20240520);
    testing::appendLe32(out, 1);
    testing::appendLe32(out, static_cast<uint32_t>(tokens.size()));
    out.resize(256 * 4, 0);
    for (uint32_t t : tokens) {
      out.push_back(static_cast<uint8_t>(t));
      out.push_back(static_cast<uint8_t>(t >> 8));
    }
    return out;
  };
  std::vector<uint32_t> tokens;
  for (int i = 0; i < 500; ++i) tokens.push_back(static_cast<uint32_t>(i % 7 * 3));
  writeBytes(dir.path("ok.bin"), shard(tokens));
  BigramLM program(32);
  TrainOptions options;
  options.steps = 30;
  options.data = dir.path("ok.bin");
  ASSERT_TRUE(runTrain(program, options, dir.path("m.jsonl")).ok());
  std::vector<JsonValue> lines = readMetrics(dir.path("m.jsonl"));
  ASSERT_EQ(lines.size(), 30u);
  EXPECT_LT(numberOf(lines[29], "loss"), 0.5 * numberOf(lines[0], "loss"));
  tokens[100] = 32;
  writeBytes(dir.path("bad.bin"), shard(tokens));
  options.data = dir.path("bad.bin");
  Status s = runTrain(program, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("token 32 at position 100 is outside the model's vocabulary of 32"),
            std::string::npos)
      << s.message();
}

TEST(TrainingLoop, MetricsHaveTheRequiredKeys) {
  TempDir dir;
  SoftmaxRegression program;
  TrainOptions options;
  options.steps = 3;
  ASSERT_TRUE(runTrain(program, options, dir.path("m.jsonl")).ok());
  for (const JsonValue &line : readMetrics(dir.path("m.jsonl"))) {
    ASSERT_TRUE(line.isObject());
    for (const char *key :
         {"step", "loss", "lr", "grad_norm", "tokens_per_s", "step_ms", "accuracy"})
      EXPECT_TRUE(line.find(key) && line.find(key)->isNumber()) << key;
  }
}

TEST(TrainingLoop, TheSameSeedGivesIdenticalMetrics) {
  TempDir dir;
  TrainOptions options;
  options.steps = 25;
  options.seed = 11;
  for (const char *name : {"a.jsonl", "b.jsonl"}) {
    SoftmaxRegression program;
    ASSERT_TRUE(runTrain(program, options, dir.path(name)).ok());
  }
  options.seed = 12;
  SoftmaxRegression program;
  ASSERT_TRUE(runTrain(program, options, dir.path("c.jsonl")).ok());
  EXPECT_FALSE(readBytes(dir.path("a.jsonl")).empty());
  EXPECT_EQ(readBytes(dir.path("a.jsonl")), readBytes(dir.path("b.jsonl")));
  EXPECT_NE(readBytes(dir.path("a.jsonl")), readBytes(dir.path("c.jsonl")));
}

// An uninterrupted run of 20 steps against one that dies at step 13 (after a checkpoint at
// step 10) and is resumed: final checkpoint, saved parameters and metrics file are identical
// byte for byte.
TEST(TrainingLoop, ResumeIsBitIdenticalToAnUninterruptedRun) {
  TempDir dir;
  TrainOptions options;
  options.steps = 20;
  options.seed = 5;
  options.checkpointEvery = 5;
  options.checkpointDir = dir.path("straight");
  options.saveParams = dir.path("straight.safetensors");
  {
    SoftmaxRegression program;
    ASSERT_TRUE(runTrain(program, options, dir.path("straight.jsonl")).ok());
  }
  options.checkpointDir = dir.path("resumed");
  options.saveParams = dir.path("resumed.safetensors");
  {
    SoftmaxRegression program;
    program.beforeStep = [](int64_t step) {
      return step == 13 ? Status::error("simulated crash") : Status();
    };
    Status s = runTrain(program, options, dir.path("resumed.jsonl"));
    ASSERT_FALSE(s.ok());
    // The error names the checkpoint to continue from.
    EXPECT_EQ(s.message(), "step 13: simulated crash; the newest checkpoint is " +
                               checkpointPath(options.checkpointDir, 10) +
                               " (--resume continues from it)");
    std::string latest;
    int64_t step;
    ASSERT_TRUE(findLatestCheckpoint(options.checkpointDir, latest, step).ok());
    EXPECT_EQ(step, 10);
    EXPECT_EQ(readMetrics(dir.path("resumed.jsonl")).size(), 13u);
  }
  {
    SoftmaxRegression program;
    options.resume = true;
    options.seed = 999;  // ignored: the checkpoint's seed continues
    TrainResult result;
    Status s = runTrain(program, options, dir.path("resumed.jsonl"), &result);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(result.firstStep, 10);
    EXPECT_EQ(result.endStep, 20);
  }
  EXPECT_EQ(readBytes(dir.path("straight.safetensors")), readBytes(dir.path("resumed.safetensors")));
  EXPECT_EQ(readBytes(checkpointPath(dir.path("straight"), 20)),
            readBytes(checkpointPath(dir.path("resumed"), 20)));
  EXPECT_EQ(readBytes(dir.path("straight.jsonl")), readBytes(dir.path("resumed.jsonl")));
  // Only the newest two checkpoints are kept.
  std::vector<std::string> kept;
  for (int64_t step : {5, 10, 15, 20})
    if (::access(checkpointPath(dir.path("straight"), step).c_str(), F_OK) == 0)
      kept.push_back(std::to_string(step));
  EXPECT_EQ(kept, (std::vector<std::string>{"15", "20"}));
}

// An interruption (Ctrl-C) stops after the step in progress with a checkpoint; resuming from
// it gives the uninterrupted run's result.
TEST(TrainingLoop, AnInterruptedRunCheckpointsAndResumesExactly) {
  TempDir dir;
  TrainOptions options;
  options.steps = 12;
  options.checkpointDir = dir.path("straight");
  options.saveParams = dir.path("straight.safetensors");
  {
    SoftmaxRegression program;
    ASSERT_TRUE(runTrain(program, options).ok());
  }
  volatile std::sig_atomic_t flag = 0;
  options.interrupted = &flag;
  options.checkpointDir = dir.path("stopped");
  options.saveParams = dir.path("stopped.safetensors");
  {
    SoftmaxRegression program;
    program.beforeStep = [&](int64_t step) {
      if (step == 6) flag = 1;
      return Status();
    };
    Status s = runTrain(program, options);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), "interrupted after step 7 of 12; checkpoint " +
                               checkpointPath(dir.path("stopped"), 7) +
                               " (continue with --resume)");
  }
  flag = 0;
  options.resume = true;
  SoftmaxRegression program;
  ASSERT_TRUE(runTrain(program, options).ok());
  EXPECT_EQ(readBytes(dir.path("straight.safetensors")),
            readBytes(dir.path("stopped.safetensors")));
}

TEST(TrainingLoop, ResumingAFinishedRunRunsNothing) {
  TempDir dir;
  TrainOptions options;
  options.steps = 4;
  options.checkpointDir = dir.dir();
  SoftmaxRegression program;
  ASSERT_TRUE(runTrain(program, options).ok());
  options.resume = true;
  TrainResult result;
  ASSERT_TRUE(runTrain(program, options, "", &result).ok());
  EXPECT_EQ(result.firstStep, 4);
  EXPECT_EQ(result.endStep, 4);
  // Going on to more steps works.
  options.steps = 6;
  ASSERT_TRUE(runTrain(program, options, "", &result).ok());
  EXPECT_EQ(result.firstStep, 4);
  EXPECT_EQ(result.endStep, 6);
}

TEST(TrainingLoop, RefusesACheckpointOfAnotherModel) {
  TempDir dir;
  TrainOptions options;
  options.steps = 3;
  options.checkpointDir = dir.dir();
  SoftmaxRegression writer;
  ASSERT_TRUE(runTrain(writer, options).ok());
  options.resume = true;
  // Same tensors, another training configuration.
  SoftmaxRegression other(16, 8, 4, ":lr=0.5");
  Status s = runTrain(other, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--resume: "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("checkpoint of another model"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(":lr=0.5"), std::string::npos) << s.message();
  // Another model altogether.
  BigramLM bigram;
  s = runTrain(bigram, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("checkpoint of another model"), std::string::npos) << s.message();
}

TEST(TrainingLoop, CheckpointDirectoryErrors) {
  TempDir dir;
  TrainOptions options;
  options.steps = 2;
  options.checkpointDir = dir.path("ckpt");
  options.resume = true;
  SoftmaxRegression program;
  Status s = runTrain(program, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--resume: no checkpoint in '" + dir.path("ckpt") + "'"),
            std::string::npos)
      << s.message();
  // A fresh run does not write into another run's checkpoints.
  options.resume = false;
  ASSERT_TRUE(runTrain(program, options).ok());
  s = runTrain(program, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("already holds checkpoints"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--resume"), std::string::npos) << s.message();
  // A damaged checkpoint is refused with the checkpoint reader's message.
  std::string path = checkpointPath(dir.path("ckpt"), 2);
  std::vector<uint8_t> bytes = readBytes(path);
  bytes[bytes.size() - 1] ^= 1;
  writeBytes(path, bytes);
  options.resume = true;
  s = runTrain(program, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("damaged checkpoint"), std::string::npos) << s.message();
  // Nested directories are created.
  options.resume = false;
  options.checkpointDir = dir.path("a/b/c");
  ASSERT_TRUE(runTrain(program, options).ok());
  std::string latest;
  int64_t step;
  ASSERT_TRUE(findLatestCheckpoint(dir.path("a/b/c"), latest, step).ok());
  EXPECT_EQ(latest, checkpointPath(dir.path("a/b/c"), 2));
}

TEST(TrainingLoop, ResumeOnOtherDataIsRefused) {
  TempDir dir;
  writeText(dir.path("a.txt"), std::string(300, 'a'));
  writeText(dir.path("b.txt"), std::string(300, 'b'));
  BigramLM program;
  TrainOptions options;
  options.steps = 2;
  options.data = dir.path("a.txt");
  options.checkpointDir = dir.path("ckpt");
  ASSERT_TRUE(runTrain(program, options).ok());
  options.steps = 4;
  options.resume = true;
  options.data = dir.path("b.txt");
  Status s = runTrain(program, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("resume with the same --data"), std::string::npos) << s.message();
  options.data = dir.path("a.txt");
  EXPECT_TRUE(runTrain(program, options).ok());
}

TEST(TrainingLoop, DataFileErrors) {
  TempDir dir;
  BigramLM program;  // seq 16: a file needs 17 tokens
  TrainOptions options;
  options.steps = 1;
  struct Case {
    const char *file;
    std::string contents;  // not written if "-"
    const char *expected;
  };
  for (const Case &c : {Case{"missing.txt", "-", "no such file"},
                        Case{"empty.txt", "", "the file is empty"},
                        Case{"short.txt", std::string(16, 'x'), "fewer than one window"}}) {
    SCOPED_TRACE(c.file);
    if (c.contents != "-") writeText(dir.path(c.file), c.contents);
    options.data = dir.path(c.file);
    Status s = runTrain(program, options);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message().rfind("--data: " + dir.path(c.file) + ": ", 0), 0u) << s.message();
    EXPECT_NE(s.message().find(c.expected), std::string::npos) << s.message();
  }
  // One window is enough with nothing held out; holding out one more window needs 34 tokens.
  writeText(dir.path("ok.txt"), std::string(17, 'x'));
  options.data = dir.path("ok.txt");
  Status held = runTrain(program, options);
  ASSERT_FALSE(held.ok());
  EXPECT_NE(held.message().find("leaves fewer than one window to train on; lower --val-fraction"),
            std::string::npos)
      << held.message();
  options.valFraction = 0;
  EXPECT_TRUE(runTrain(program, options).ok());
  options.valFraction = kDefaultValFraction;
  writeText(dir.path("ok34.txt"), std::string(34, 'x'));
  options.data = dir.path("ok34.txt");
  EXPECT_TRUE(runTrain(program, options).ok());
  // A directory is not a data file.
  options.data = dir.dir();
  EXPECT_FALSE(runTrain(program, options).ok());
  // A classification model takes no data file.
  SoftmaxRegression classifier;
  options.data = dir.path("ok.txt");
  Status s = runTrain(classifier, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("takes no token stream"), std::string::npos) << s.message();
}

TEST(TrainingLoop, InitFromAndSaveParams) {
  TempDir dir;
  TrainOptions options;
  options.steps = 40;
  options.saveParams = dir.path("trained.safetensors");
  SoftmaxRegression program;
  ASSERT_TRUE(runTrain(program, options, dir.path("first.jsonl")).ok());
  SafetensorsFile file;
  ASSERT_TRUE(SafetensorsFile::read(dir.path("trained.safetensors"), file).ok());
  ASSERT_NE(file.find("linear.w"), nullptr);
  EXPECT_EQ(file.find("linear.w")->shape, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(file.metadata().at("stepc.step"), "40");

  // Starting from the trained parameters starts from a lower loss.
  options.steps = 1;
  options.initFrom = dir.path("trained.safetensors");
  options.saveParams.clear();
  ASSERT_TRUE(runTrain(program, options, dir.path("second.jsonl")).ok());
  EXPECT_LT(numberOf(readMetrics(dir.path("second.jsonl"))[0], "loss"),
            0.8 * numberOf(readMetrics(dir.path("first.jsonl"))[0], "loss"));

  // A file of another model's parameters.
  SoftmaxRegression wider(16, 8, 5);
  Status s = runTrain(wider, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("tensor 'linear.w' is [8, 4], this model's parameter is [8, 5]"),
            std::string::npos)
      << s.message();
  BigramLM bigram;
  s = runTrain(bigram, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no tensor named 'table'"), std::string::npos) << s.message();
  // Non-finite values are refused, naming the tensor and the element.
  std::vector<float> w(8 * 4, 0.5f), b(4, 0.0f);
  w[5] = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(writeSafetensors(dir.path("nan.safetensors"),
                               {{"linear.w", DType::kF32, {8, 4}, w.data()},
                                {"linear.b", DType::kF32, {4}, b.data()}})
                  .ok());
  options.initFrom = dir.path("nan.safetensors");
  s = runTrain(program, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("tensor 'linear.w' holds NaN at element 5; parameters must be finite"),
            std::string::npos)
      << s.message();
  options.initFrom = dir.path("missing.safetensors");
  s = runTrain(program, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--init-from: " + dir.path("missing.safetensors")),
            std::string::npos)
      << s.message();
}

TEST(TrainingLoop, ANonFiniteLossStopsTheRun) {
  SoftmaxRegression program;
  program.afterStep = [](int64_t step, StepMetrics &m) {
    if (step == 2) m.loss = NAN;
  };
  TrainOptions options;
  options.steps = 10;
  Status s = runTrain(program, options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("step 2: the loss is NaN"), std::string::npos) << s.message();
}

TEST(TrainingLoop, Evaluate) {
  TempDir dir;
  SoftmaxRegression program;
  TrainOptions options;
  options.steps = 40;
  options.checkpointDir = dir.dir();
  ASSERT_TRUE(runTrain(program, options).ok());
  EvalOptions eval;
  double initial = 0, trained = 0;
  ASSERT_TRUE(evaluate(program, eval, initial).ok());
  eval.checkpointDir = dir.dir();
  ASSERT_TRUE(evaluate(program, eval, trained).ok());
  EXPECT_LT(trained, 0.8 * initial);
  BigramLM bigram;
  EvalOptions plain;
  double loss;
  Status s = evaluate(bigram, plain, loss);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "this executable does not support eval");
}

TEST(TrainingLoop, InvalidProgramsAreRejected) {
  SoftmaxRegression program;
  ProgramInfo info = program.info();
  EXPECT_TRUE(validateProgramInfo(info).ok());
  ProgramInfo bad = info;
  bad.fingerprint.clear();
  EXPECT_FALSE(validateProgramInfo(bad).ok());
  bad = info;
  bad.state[0].param = "nope";
  Status s = validateProgramInfo(bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no such parameter"), std::string::npos);
  bad = info;
  bad.params.push_back(bad.params[0]);
  EXPECT_FALSE(validateProgramInfo(bad).ok());
  bad = info;
  bad.extraMetrics = {"loss"};
  EXPECT_FALSE(validateProgramInfo(bad).ok());
}

TEST(BatchSource, BatchesArePureFunctionsOfSeedAndStep) {
  BigramLM program;
  BatchSource a, b;
  ASSERT_TRUE(BatchSource::open(program.info().inputs, "", 7, kDefaultValFraction, a).ok());
  ASSERT_TRUE(BatchSource::open(program.info().inputs, "", 7, kDefaultValFraction, b).ok());
  EXPECT_EQ(a.identity(), "builtin");
  EXPECT_EQ(a.tokensPerStep(), 64);
  std::vector<int32_t> t1(64), y1(64), t2(64), y2(64);
  auto buffers = [](std::vector<int32_t> &t, std::vector<int32_t> &y) {
    return std::vector<TensorBuffer>{{"tokens", DType::kI32, {4, 16}, t.data()},
                                     {"tokens.targets", DType::kI32, {4, 16}, y.data()}};
  };
  ASSERT_TRUE(a.fill(3, buffers(t1, y1)).ok());
  ASSERT_TRUE(b.fill(3, buffers(t2, y2)).ok());
  EXPECT_EQ(t1, t2);
  EXPECT_EQ(y1, y2);
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i + 1 < 16; ++i) EXPECT_EQ(t1[r * 16 + i + 1], y1[r * 16 + i]);
  ASSERT_TRUE(b.fill(4, buffers(t2, y2)).ok());
  EXPECT_NE(t1, t2);
}

// Two token inputs of different vocabularies each get built-in tokens of their own vocabulary
// (the built-in corpus is bytes, mapped into each input's vocabulary), the same windows.
TEST(BatchSource, EachTokenInputGetsTokensOfItsOwnVocabulary) {
  InputSpec bytes{"bytes", InputSource::kTokenStream, {2, 8}, DType::kI32, 256, 0};
  InputSpec small{"small", InputSource::kTokenStream, {2, 8}, DType::kI32, 10, 0};
  BatchSource source;
  ASSERT_TRUE(BatchSource::open({bytes, small}, "", 5, kDefaultValFraction, source).ok());
  std::vector<int32_t> b(16), by(16), s(16), sy(16);
  std::vector<TensorBuffer> batch = {{"bytes", DType::kI32, {2, 8}, b.data()},
                                     {"bytes.targets", DType::kI32, {2, 8}, by.data()},
                                     {"small", DType::kI32, {2, 8}, s.data()},
                                     {"small.targets", DType::kI32, {2, 8}, sy.data()}};
  ASSERT_TRUE(source.fill(0, batch).ok());
  bool aboveTen = false;
  for (int k = 0; k < 16; ++k) {
    EXPECT_EQ(s[k], b[k] % 10) << k;
    EXPECT_EQ(sy[k], by[k] % 10) << k;
    aboveTen = aboveTen || b[k] >= 10;
  }
  EXPECT_TRUE(aboveTen) << "the byte input's tokens were folded into the smaller vocabulary";
}

// A data file's held-out tail is never read by training, and held-out batches read it in
// consecutive windows: the file's first 300 bytes are below 100, its last 100 at least 200.
TEST(BatchSource, TrainingNeverReadsTheHeldOutTail) {
  TempDir dir;
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 400; ++i) bytes.push_back(static_cast<uint8_t>(i < 300 ? i % 100 : 200 + i % 50));
  writeBytes(dir.path("data.bin"), bytes);
  InputSpec input{"tokens", InputSource::kTokenStream, {4, 8}, DType::kI32, 256, 0};
  BatchSource source;
  ASSERT_TRUE(BatchSource::open({input}, dir.path("data.bin"), 3, 0.25, source).ok());
  EXPECT_TRUE(source.hasHeldOut());
  EXPECT_NE(source.describeHeldOut().find("the last 25% of"), std::string::npos)
      << source.describeHeldOut();
  EXPECT_NE(source.describeHeldOut().find("100 tokens, 12 windows of 8"), std::string::npos)
      << source.describeHeldOut();
  std::vector<int32_t> x(32), y(32);
  std::vector<TensorBuffer> batch = {{"tokens", DType::kI32, {4, 8}, x.data()},
                                     {"tokens.targets", DType::kI32, {4, 8}, y.data()}};
  for (uint64_t step = 0; step < 200; ++step) {
    ASSERT_TRUE(source.fill(step, batch).ok());
    for (int k = 0; k < 32; ++k) ASSERT_TRUE(x[k] < 100 && y[k] < 100) << "step " << step;
  }
  // Held-out batch 0 is windows 0..3 of the tail (tokens 300 + 8 r ..), batch 3 wraps around
  // the 12 windows to windows 0..3 again.
  ASSERT_TRUE(source.fillHeldOut(0, batch).ok());
  for (int r = 0; r < 4; ++r)
    for (int t = 0; t < 8; ++t) {
      EXPECT_EQ(x[r * 8 + t], bytes[300 + 8 * r + t]);
      EXPECT_EQ(y[r * 8 + t], bytes[300 + 8 * r + t + 1]);
    }
  std::vector<int32_t> first = x;
  ASSERT_TRUE(source.fillHeldOut(3, batch).ok());
  EXPECT_EQ(x, first);
  // The split changes what training reads, so it is part of the data's identity.
  BatchSource other;
  ASSERT_TRUE(BatchSource::open({input}, dir.path("data.bin"), 3, 0.1, other).ok());
  EXPECT_NE(other.identity(), source.identity());
  // Nothing held out: no validation. Too much held out: a clear error.
  BatchSource none;
  ASSERT_TRUE(BatchSource::open({input}, dir.path("data.bin"), 3, 0.0, none).ok());
  EXPECT_FALSE(none.hasHeldOut());
  EXPECT_NE(none.fillHeldOut(0, batch).message().find("--val-fraction 0 holds no data out"),
            std::string::npos);
  BatchSource greedy;
  Status s = BatchSource::open({input}, dir.path("data.bin"), 3, 0.99, greedy);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("leaves fewer than one window to train on"), std::string::npos)
      << s.message();
}

// Built-in data holds out a stream of its own: held-out batches are not training batches.
TEST(BatchSource, BuiltinDataHasItsOwnHeldOutStream) {
  InputSpec tokens{"tokens", InputSource::kTokenStream, {4, 16}, DType::kI32, 256, 0};
  InputSpec points{"data", InputSource::kClassification, {8, 4}, DType::kF32, 0, 3};
  BatchSource text, classes;
  ASSERT_TRUE(BatchSource::open({tokens}, "", 1, kDefaultValFraction, text).ok());
  ASSERT_TRUE(BatchSource::open({points}, "", 1, kDefaultValFraction, classes).ok());
  EXPECT_TRUE(text.hasHeldOut());
  std::vector<int32_t> x(64), y(64), hx(64), hy(64);
  auto tokenBatch = [](std::vector<int32_t> &a, std::vector<int32_t> &b) {
    return std::vector<TensorBuffer>{{"tokens", DType::kI32, {4, 16}, a.data()},
                                     {"tokens.targets", DType::kI32, {4, 16}, b.data()}};
  };
  ASSERT_TRUE(text.fill(0, tokenBatch(x, y)).ok());
  ASSERT_TRUE(text.fillHeldOut(0, tokenBatch(hx, hy)).ok());
  EXPECT_NE(x, hx);
  std::vector<float> f(32), hf(32);
  std::vector<int32_t> l(8), hl(8);
  ASSERT_TRUE(classes.fill(0, {{"data", DType::kF32, {8, 4}, f.data()},
                               {"data.labels", DType::kI32, {8}, l.data()}}).ok());
  ASSERT_TRUE(classes.fillHeldOut(0, {{"data", DType::kF32, {8, 4}, hf.data()},
                                      {"data.labels", DType::kI32, {8}, hl.data()}}).ok());
  EXPECT_NE(f, hf);
}

// --eval-every validates on held-out batches: val_loss in the metrics of every Nth step and the
// last, the best reported, and --checkpoint-best keeps its checkpoint.
TEST(TrainingLoop, ValidatesWhileTraining) {
  TempDir dir;
  SoftmaxRegression program;
  TrainOptions options;
  options.steps = 30;
  options.evalEvery = 10;
  options.evalBatches = 3;
  options.checkpointDir = dir.dir();
  options.checkpointBest = true;
  TrainResult result;
  ASSERT_TRUE(runTrain(program, options, dir.path("m.jsonl"), &result).ok());
  std::vector<JsonValue> lines = readMetrics(dir.path("m.jsonl"));
  ASSERT_EQ(lines.size(), 30u);
  std::vector<double> val;
  for (const JsonValue &line : lines)
    if (line.find("val_loss")) val.push_back(numberOf(line, "val_loss"));
  ASSERT_EQ(val.size(), 3u);
  EXPECT_LT(val[2], val[0]);
  EXPECT_GE(result.bestValStep, 10);
  EXPECT_NEAR(result.bestValLoss, *std::min_element(val.begin(), val.end()), 1e-6);
  EXPECT_TRUE(readBytes(bestCheckpointPath(dir.dir())).size() > 0);
  // The validation is the eval command's held-out loss of the same parameters.
  EvalOptions eval;
  eval.checkpointDir = dir.dir();
  eval.batches = 3;
  double loss = 0;
  std::string split;
  ASSERT_TRUE(evaluate(program, eval, loss, &split).ok());
  EXPECT_NEAR(loss, val[2], 1e-6);
  EXPECT_NE(split.find("held out"), std::string::npos);
  EvalOptions training = eval;
  training.trainingSplit = true;
  double trainLoss = 0;
  ASSERT_TRUE(evaluate(program, training, trainLoss).ok());
  EXPECT_NE(trainLoss, loss);
  // --checkpoint-best without validation is refused.
  TrainOptions bad = options;
  bad.evalEvery = 0;
  TempDir other;
  bad.checkpointDir = other.dir();
  Status s = runTrain(program, bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--checkpoint-best needs"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace stepc::rt
