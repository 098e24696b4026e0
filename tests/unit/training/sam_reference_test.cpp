// SAM and micro-batching on a real model (a small MLP) against hand-unrolled references built
// from the model's loss gradient (the --step-differentiate function, itself checked against
// finite differences in tests/unit/gradients): the one-function train step must equal
//   g1 = dL/dw (w);  eps = rho d / ||s||;  g2 = dL/dw (w + eps);  w' = w - lr g2
// and K micro-batches must equal one full batch.
#include <cmath>

#include "compiler/Interpreter/ModelData.h"
#include "compiler/Training/LossFunction.h"
#include "train_test_util.h"

namespace stepc::testing {
namespace {

using interp::Tensor;

std::string mlpModel(const std::string &config, int batch = 6) {
  return R"(
step.model @small_mlp dims(B = )" + std::to_string(batch) + R"(, D = 5, H = 7, C = 3) {
  %x, %labels = step.input "data" [B, D] f32 = classification(classes = 3)
  %w1 = step.param "w1" [D, H] f32 = normal(std = 0.5)
  %b1 = step.param "b1" [H] f32 = uniform(a = -0.1, b = 0.1)
  %w2 = step.param "w2" [H, C] f32 = normal(std = 0.5)
  %h = step.matmul %x, %w1
  %hb = step.add %h, %b1
  %a = step.tanh %hb
  %logits = step.matmul %a, %w2
  %loss = step.cross_entropy %logits, %labels
  step.loss %loss
  step.config { )" + config + R"( }
}
)";
}

// The model's loss and parameter gradients, run in the interpreter.
class LossGradient {
 public:
  // Every tensor handed between two LossGradients must share one context (types are uniqued).
  LossGradient(const std::string &modelText, mlir::MLIRContext *context) : context_(context) {
    module_ = mlir::parseSourceString<mlir::ModuleOp>(modelText, context_);
    EXPECT_TRUE(module_);
    model_ = *module_->getOps<step::ModelOp>().begin();
    auto fn = train::buildLossFunction(*module_, model_, "loss", /*differentiate=*/true);
    EXPECT_TRUE(succeeded(fn));
    mlir::PassManager pm(context_);
    pm.addPass(ad::createDifferentiate());
    EXPECT_TRUE(succeeded(pm.run(*module_)));
    fn_ = module_->lookupSymbol<mlir::func::FuncOp>("loss");
  }

  step::ModelOp model() { return model_; }

  // (loss, gradient per parameter name) at `params` on `inputs`.
  std::pair<double, std::map<std::string, Tensor>> operator()(
      const std::map<std::string, Tensor> &params,
      const std::map<std::string, std::vector<Tensor>> &inputs) {
    std::vector<Tensor> args;
    std::vector<std::string> names;
    for (unsigned i = 0; i < fn_.getNumArguments(); ++i) {
      auto attrs = fn_.getArgAttrDict(i);
      std::string name = llvm::cast<mlir::StringAttr>(attrs.get("step.name")).getValue().str();
      if (llvm::cast<mlir::StringAttr>(attrs.get("step.role")).getValue() == "param") {
        args.push_back(params.at(name));
        names.push_back(name);
      } else {
        args.push_back(inputs.at(name).at(llvm::cast<mlir::IntegerAttr>(attrs.get("step.index")).getInt()));
      }
    }
    auto results = interp::Interpreter().run(fn_, args);
    EXPECT_TRUE(succeeded(results));
    std::map<std::string, Tensor> grads;
    for (size_t k = 0; k < names.size(); ++k) grads[names[k]] = (*results)[1 + k];
    return {(*results)[0].data[0], grads};
  }

 private:
  mlir::MLIRContext *context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  step::ModelOp model_;
  mlir::func::FuncOp fn_;
};

double f32(double v) { return static_cast<double>(static_cast<float>(v)); }

// One train-step of `config` in the interpreter: the parameters after it, and its metrics.
std::pair<std::map<std::string, Tensor>, std::map<std::string, double>> trainOneStep(
    const std::string &config, uint64_t seed) {
  Compiled c = compileTrain(mlpModel(config));
  EXPECT_TRUE(c.module) << c.diagnostics;
  auto trainer = ref::InterpretedTrainer::create(*c.module, seed);
  EXPECT_TRUE(succeeded(trainer));
  auto metrics = trainer->step();
  EXPECT_TRUE(succeeded(metrics));
  return {trainer->params(), *metrics};
}

std::map<std::string, std::vector<Tensor>> halfBatch(
    const std::map<std::string, std::vector<Tensor>> &inputs, bool second) {
  std::map<std::string, std::vector<Tensor>> out;
  for (const auto &[name, tensors] : inputs)
    for (const Tensor &t : tensors) {
      llvm::SmallVector<int64_t> shape(t.shape());
      int64_t rows = shape[0] / 2, rowSize = t.numElements() / shape[0];
      shape[0] = rows;
      Tensor half{mlir::RankedTensorType::get(shape, t.type.getElementType()), {}};
      auto begin = t.data.begin() + (second ? rows * rowSize : 0);
      half.data.assign(begin, begin + rows * rowSize);
      out[name].push_back(half);
    }
  return out;
}

void expectParamsNear(const std::map<std::string, Tensor> &got,
                      const std::map<std::string, Tensor> &want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto &[name, w] : want) {
    const Tensor &g = got.at(name);
    ASSERT_EQ(g.data.size(), w.data.size()) << name;
    double maxErr = 0;
    for (size_t i = 0; i < w.data.size(); ++i) maxErr = std::max(maxErr, std::abs(g.data[i] - w.data[i]));
    EXPECT_LT(maxErr, tol) << "parameter " << name;
  }
}

void samReference(bool adaptive, bool nextBatch) {
  const double lr = 0.1, rho = 0.2;
  std::string config = "optimizer = sgd(lr = 0.1), sam = sam(rho = 0.2, adaptive = " +
                       std::string(adaptive ? "true" : "false") +
                       ", next_batch = " + (nextBatch ? "true" : "false") + ")";
  auto [trained, metrics] = trainOneStep(config, /*seed=*/7);

  // With next_batch each pass sees half of the batch: the reference loss takes batch 3.
  auto context = makeContext();
  LossGradient lossGrad(mlpModel(config, nextBatch ? 3 : 6), context.get());
  LossGradient fullBatch(mlpModel(config), context.get());
  auto w = interp::initModelParams(lossGrad.model(), 7);
  auto batch = interp::sampleModelInputs(fullBatch.model(), 7, 0);
  auto first = nextBatch ? halfBatch(batch, false) : batch;
  auto second = nextBatch ? halfBatch(batch, true) : batch;
  auto [loss1, g1] = lossGrad(w, first);
  double s2 = 0;
  for (auto &[name, g] : g1)
    for (size_t i = 0; i < g.data.size(); ++i) {
      // ASAM: T_w = |w| + eta (eta's default 0.01, in f32 as the step computes it).
      double tw = std::abs(w.at(name).data[i]) + f32(0.01);
      double si = adaptive ? tw * g.data[i] : g.data[i];
      s2 += si * si;
    }
  double factor = f32(rho) / (std::sqrt(s2) + f32(1e-12));
  auto perturbed = w;
  for (auto &[name, g] : g1)
    for (size_t i = 0; i < g.data.size(); ++i) {
      double tw = std::abs(w.at(name).data[i]) + f32(0.01);
      perturbed.at(name).data[i] += (adaptive ? tw * tw * g.data[i] : g.data[i]) * factor;
    }
  auto [loss2, g2] = lossGrad(perturbed, second);
  auto want = w;
  for (auto &[name, g] : g2)
    for (size_t i = 0; i < g.data.size(); ++i) want.at(name).data[i] -= f32(lr) * g.data[i];
  expectParamsNear(trained, want, 1e-9);
  EXPECT_NEAR(metrics.at("loss"), loss1, 1e-9);
  EXPECT_NEAR(metrics.at("sam_loss"), loss2, 1e-9);
}

TEST(SamReference, SameBatch) { samReference(false, false); }
TEST(SamReference, Adaptive) { samReference(true, false); }
TEST(SamReference, NextBatch) { samReference(false, true); }

TEST(MicroBatches, AccumulationEqualsTheFullBatch) {
  // Equal up to the f32 constant 1/K the accumulated sums are scaled by (relative 3e-8).
  auto [full, fullMetrics] = trainOneStep("optimizer = sgd(lr = 0.1)", 3);
  auto [micro, microMetrics] = trainOneStep("optimizer = sgd(lr = 0.1), micro_batches = 3", 3);
  expectParamsNear(micro, full, 1e-8);
  EXPECT_NEAR(microMetrics.at("loss"), fullMetrics.at("loss"), 1e-7);
  EXPECT_NEAR(microMetrics.at("grad_norm"), fullMetrics.at("grad_norm"), 1e-7);
}

}  // namespace
}  // namespace stepc::testing
