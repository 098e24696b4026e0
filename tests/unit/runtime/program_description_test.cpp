// The compiled program's description (JSON embedded in the object stepc emits) and the
// StepProgram that drives compiled entry points: round trip, damaged descriptions refused with
// a message naming the problem, and CompiledProgram's buffer wiring checked with a hand-written
// entry point.
#include <cstring>

#include "gtest/gtest.h"
#include "runtime/hal/CompiledProgram.h"
#include "runtime/formats/ProgramDescription.h"

namespace stepc::rt {
namespace {

// One parameter w [2], its Adam slot m, a token input [1, 2]; train: (w, m, tokens, targets,
// step) -> (w', m', loss, lr, grad_norm, sam_loss); eval: (w, tokens, targets) -> loss.
ProgramDescription sample() {
  ProgramDescription d;
  d.info.name = "toy";
  d.info.fingerprint = "toy-1";
  d.info.flopsPerStep = 123.5;
  d.info.executedFlopsPerStep = 456.25;
  d.info.samFlopsPerStep = 78.5;
  d.info.kernelCount = 4;
  d.info.kernelNames = {"kernel_0_generic [2xf32]", "gemm NN = [1x2xf32]"};
  d.info.kernelBytes = {8, 24.5};
  d.info.kernelFlops = {0, 4};
  d.info.extraMetrics = {"sam_loss"};
  ParamSpec w;
  w.name = "w";
  w.shape = {2};
  w.init.kind = "normal";
  w.init.std = 0.5;
  w.init.mean = -1.25;
  d.info.params = {w};
  StateSpec m;
  m.slot = "m";
  m.param = "w";
  m.shape = {2};
  d.info.state = {m};
  InputSpec in;
  in.name = "bytes";
  in.shape = {1, 2};
  in.vocab = 256;
  d.info.inputs = {in};
  using K = Binding::Kind;
  d.train.symbol = "stepc_train_step";
  d.train.args = {{K::kParam, 0, ""}, {K::kState, 0, ""}, {K::kBatch, 0, ""}, {K::kBatch, 1, ""},
                  {K::kStep, 0, ""}};
  d.train.results = {{K::kParam, 0, ""},          {K::kState, 0, ""},
                     {K::kMetric, 0, "loss"},     {K::kMetric, 0, "lr"},
                     {K::kMetric, 0, "grad_norm"}, {K::kMetric, 0, "sam_loss"}};
  d.eval.symbol = "stepc_eval_loss";
  d.eval.args = {{K::kParam, 0, ""}, {K::kBatch, 0, ""}, {K::kBatch, 1, ""}};
  d.eval.results = {{K::kMetric, 0, "loss"}};
  d.target = "x86_64 test";
  return d;
}

TEST(ProgramDescription, RoundTrips) {
  ProgramDescription in = sample(), out;
  std::string text = writeProgramDescription(in);
  Status s = parseProgramDescription(text, out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(out.info.name, "toy");
  EXPECT_EQ(out.info.fingerprint, "toy-1");
  EXPECT_EQ(out.info.flopsPerStep, 123.5);
  EXPECT_EQ(out.info.executedFlopsPerStep, 456.25);
  EXPECT_EQ(out.info.samFlopsPerStep, 78.5);
  EXPECT_EQ(out.info.kernelCount, 4);
  EXPECT_EQ(out.info.kernelNames, in.info.kernelNames);
  EXPECT_EQ(out.info.kernelBytes, in.info.kernelBytes);
  EXPECT_EQ(out.info.kernelFlops, in.info.kernelFlops);
  EXPECT_EQ(out.info.params.at(0).init.mean, -1.25);
  EXPECT_EQ(out.info.params.at(0).init.std, 0.5);
  EXPECT_EQ(out.info.state.at(0).slot, "m");
  EXPECT_EQ(out.info.inputs.at(0).vocab, 256);
  ASSERT_EQ(out.train.results.size(), 6u);
  EXPECT_EQ(out.train.results[5].metric, "sam_loss");
  EXPECT_EQ(out.train.args[4].kind, Binding::Kind::kStep);
  EXPECT_EQ(out.eval.args[2].index, 1);
  EXPECT_EQ(writeProgramDescription(out), text);
}

TEST(ProgramDescription, RefusesDamage) {
  ProgramDescription d;
  Status s = parseProgramDescription("{not json", d);
  EXPECT_NE(s.message().find("program description: JSON byte"), std::string::npos) << s.message();

  std::string text = writeProgramDescription(sample());
  std::string noName = text;
  noName.replace(noName.find("\"fingerprint\""), 13, "\"fingerprunt\"");
  s = parseProgramDescription(noName, d);
  EXPECT_NE(s.message().find("'fingerprint' is missing"), std::string::npos) << s.message();

  ProgramDescription bad = sample();
  bad.train.args[1].index = 7;  // there is one state buffer
  s = parseProgramDescription(writeProgramDescription(bad), d);
  EXPECT_NE(s.message().find("train: a state binding has index 7 out of range"),
            std::string::npos)
      << s.message();

  bad = sample();
  bad.info.state[0].param = "v";  // no such parameter
  s = parseProgramDescription(writeProgramDescription(bad), d);
  EXPECT_NE(s.message().find("no such parameter"), std::string::npos) << s.message();

  bad = sample();
  bad.info.kernelFlops.pop_back();  // the profile's rates need one entry per kernel
  s = parseProgramDescription(writeProgramDescription(bad), d);
  EXPECT_NE(s.message().find("one entry per kernel name"), std::string::npos) << s.message();

  bad = sample();
  bad.info.state[0].shards = 2;  // --shard-optimizer's blocks, but the step is not sharded
  s = parseProgramDescription(writeProgramDescription(bad), d);
  EXPECT_NE(s.message().find("is split into 2 blocks, which must divide its first axis and be "
                             "the step's rank count (0)"),
            std::string::npos)
      << s.message();
}

// --shard-optimizer: a state tensor's blocks and the step's rank count come back, and the
// step's buffer is the block (localShape).
TEST(ProgramDescription, ShardedStateRoundTrips) {
  ProgramDescription in = sample(), out;
  in.info.shardedOver = 2;
  in.info.allGathers = 1;
  in.info.allGatherBytes = 8;
  in.info.dataParallelMicroBatches = 2;
  in.info.overlappedReductions = 3;
  in.info.state[0].shards = 2;
  Status s = parseProgramDescription(writeProgramDescription(in), out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(out.info.shardedOver, 2);
  EXPECT_EQ(out.info.allGathers, 1);
  EXPECT_EQ(out.info.allGatherBytes, 8);
  EXPECT_EQ(out.info.overlappedReductions, 3);
  EXPECT_EQ(out.info.state.at(0).shards, 2);
  EXPECT_EQ(out.info.state.at(0).shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(localShape(out.info.state.at(0)), (std::vector<int64_t>{1}));
}

// A hand-written entry point with the sample's train interface: w' = w - 0.5, m' = m + w,
// loss = w[0] + tokens[0], lr = step, grad_norm = 2, sam_loss = 3.
void fakeTrain(void **b) {
  const float *w = static_cast<float *>(b[0]), *m = static_cast<float *>(b[1]);
  const int32_t *tokens = static_cast<int32_t *>(b[2]);
  int64_t step = *static_cast<int64_t *>(b[4]);
  float *w2 = static_cast<float *>(b[5]), *m2 = static_cast<float *>(b[6]);
  for (int i = 0; i < 2; ++i) {
    w2[i] = w[i] - 0.5f;
    m2[i] = m[i] + w[i];
  }
  *static_cast<float *>(b[7]) = w[0] + static_cast<float>(tokens[0]);
  *static_cast<float *>(b[8]) = static_cast<float>(step);
  *static_cast<float *>(b[9]) = 2.0f;
  *static_cast<float *>(b[10]) = 3.0f;
}

void fakeEval(void **b) {
  *static_cast<float *>(b[3]) = static_cast<float *>(b[0])[1] * 10.0f;
}

TEST(CompiledProgram, WiresBuffersAndCopiesResultsBack) {
  std::unique_ptr<CompiledProgram> program;
  Status s = CompiledProgram::create(writeProgramDescription(sample()), fakeTrain, fakeEval,
                                     program);
  ASSERT_TRUE(s.ok()) << s.message();
  float w[2] = {1.0f, 2.0f}, m[2] = {0.0f, 0.0f};
  int32_t tokens[2] = {7, 8}, targets[2] = {8, 9};
  StepBuffers buffers;
  buffers.params = {{"w", DType::kF32, {2}, w}};
  buffers.state = {{"m/w", DType::kF32, {2}, m}};
  buffers.batch = {{"bytes", DType::kI32, {1, 2}, tokens},
                   {"bytes.targets", DType::kI32, {1, 2}, targets}};
  StepMetrics metrics;
  ASSERT_TRUE(program->run(buffers, 41, metrics).ok());
  EXPECT_EQ(w[0], 0.5f);
  EXPECT_EQ(w[1], 1.5f);
  EXPECT_EQ(m[0], 1.0f);
  EXPECT_EQ(m[1], 2.0f);
  EXPECT_EQ(metrics.loss, 8.0);  // w[0] before the step + tokens[0]
  EXPECT_EQ(metrics.lr, 41.0);
  EXPECT_EQ(metrics.gradNorm, 2.0);
  ASSERT_EQ(metrics.extra.size(), 1u);
  EXPECT_EQ(metrics.extra[0].first, "sam_loss");
  EXPECT_EQ(metrics.extra[0].second, 3.0);
  double loss = 0;
  ASSERT_TRUE(program->evaluate(buffers, 0, loss).ok());
  EXPECT_EQ(loss, 15.0);
  EXPECT_EQ(w[1], 1.5f);  // eval leaves the parameters alone
}

TEST(CompiledProgram, RefusesADescriptionThatReturnsTheBatch) {
  ProgramDescription d = sample();
  d.train.results[0] = {Binding::Kind::kBatch, 0, ""};
  std::unique_ptr<CompiledProgram> program;
  Status s = CompiledProgram::create(writeProgramDescription(d), fakeTrain, fakeEval, program);
  EXPECT_NE(s.message().find("cannot return a batch"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace stepc::rt
