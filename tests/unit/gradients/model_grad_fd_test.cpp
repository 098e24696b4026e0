// Whole-model gradients of the tiny mlp and the tiny byte_lm_residual against central finite differences,
// in float64.
//
// The model text is each zoo model at --config=tiny (models/*.mlir), embedded as parsed, with every f32 made f64 at run time so
// that the whole chain (forward, VJP constants, gradients) is float64. @loss is built with
// buildLossFunction(differentiate = true) and run through --step-differentiate; a second,
// un-differentiated copy (@loss_fwd) gives the finite differences. Parameters come from
// initModelParams(model, seed 1) and the batch from sampleModelInputs(model, seed 1, step 0).
// For every parameter (and every float input) at least 10 elements chosen at random (all when
// there are fewer) are compared, plus up to 10 more drawn among the elements with a non-zero
// gradient (a table's used rows), with (L(θ + h e_i) - L(θ - h e_i)) / 2h,
// h = 1e-6 · max(1, |θ_i|).
//
// Tolerance: |analytic - fd| <= atol + rtol·|fd| with rtol 1e-5, atol 1e-8. Rounding noise of
// the finite differences is ~ε·L/h·(a few) for L ~ 5.8: up to 1.5e-9 seen at h = 1e-6 (it grows
// to 1.5e-8 at h = 1e-7, as 1/h: noise, not a wrong gradient); truncation ~h²|L'''| stays
// below rtol (largest seen 6e-8 relative, an embedding element). A wrong VJP anywhere in the
// model gives errors of the order of the gradient itself (1e-5 .. 1).
//
// byte_lm_residual's head is zero-initialised, so at the initial parameters every gradient but the
// head's is exactly zero (the logits do not depend on them). That case is checked as is, and a
// second case replaces the head by small random values so that gradients reach every parameter.
// TripleNorm has no epsilon; initModelParams gives non-degenerate activations.
#include <cstdlib>
#include <iostream>
#include <set>

#include "compiler/Interpreter/ModelData.h"
#include "compiler/Training/LossFunction.h"
#include "fd_util.h"

namespace stepc::gradtest {
namespace {

constexpr Tolerance kModelTolerance{1e-5, 1e-8};
constexpr double kDefaultStep = 1e-6;
// STEPC_FD_STEP overrides the relative step (to tell rounding noise from a wrong gradient: the
// noise scales as 1/h, a real discrepancy does not).
double fdStep() {
  const char *s = std::getenv("STEPC_FD_STEP");
  return s ? std::atof(s) : kDefaultStep;
}
constexpr int kRandomElements = 10;
constexpr int kNonzeroElements = 10;

// models/mlp.mlir --config=tiny (the step.config is irrelevant to the loss and kept as written).
const char *kMlpTiny = R"(
step.model @mlp_tiny dims(B = 8, D = 8, H = 16, C = 4) {
  %x, %labels = step.input "data" [B, D] f32 = classification(classes = 4)

  %w1 = step.param "w1" [D, H] f32 = normal(std = 0.1768)
  %b1 = step.param "b1" [H] f32 = zeros
  %w2 = step.param "w2" [H, H] f32 = normal(std = 0.0884)
  %b2 = step.param "b2" [H] f32 = zeros
  %w3 = step.param "w3" [H, C] f32 = normal(std = 0.0884)
  %b3 = step.param "b3" [C] f32 = zeros

  %h1 = step.matmul %x, %w1
  %h1b = step.add %h1, %b1
  %a1 = step.gelu %h1b
  %h2 = step.matmul %a1, %w2
  %h2b = step.add %h2, %b2
  %a2 = step.gelu %h2b
  %logits0 = step.matmul %a2, %w3
  %logits = step.add %logits0, %b3
  %loss = step.cross_entropy %logits, %labels
  step.loss %loss

  step.config {
    optimizer = adamw(lr = 1.0e-3, weight_decay = 0.01, no_decay = ["b*"]),
    schedule = warmup_cosine(warmup = 20, total = 500),
    clip = global_norm(max_norm = 1.0),
    sam = none
  }
}
)";

// models/byte_lm_residual.mlir --config=tiny.
const char *kByteLmTiny = R"(
step.model @byte_lm_residual_tiny dims(B = 2, S = 16, F = 16, I = 8, K = 3, depth = 2) {
  %tokens, %targets = step.input "bytes" [B, S] i32 = token_stream(vocab = 256)
  %table = step.param "embedding" [256, F] f32 = orthogonal(gain = 0.70710678)
  %x = step.embedding %table, %tokens                        // [B, S, F]

  %out = step.repeat "cell" depth (%h = %x) {
    %w0 = step.param "w0" [F, 3 * I] f32 = orthogonal(gain = 1.6967316)
    %w1 = step.param "w1" [K, I, 3 * I] f32 = orthogonal(gain = 1.6967316)
    %w2 = step.param "w2" [I, F] f32 = orthogonal(gain = 1.0)

    %p = step.matmul %h, %w0                                 // [B, S, 3I]
    %depth, %scale, %shift = step.split %p {axis = -1, parts = 3}
    %sum = step.cumsum %depth {axis = 1}
    %pos = step.iota %depth {axis = 1, dtype = f32, offset = 1}
    %mean = step.div %sum, %pos                              // causal running mean

    // TripleNorm(mean, scale, shift)
    %r1 = step.relu %mean
    %c1 = step.pow %r1 {exponent = 3.0}
    %g1 = step.mul %c1, %scale
    %t1 = step.add %g1, %shift
    %m1 = step.mean %t1 {axes = [-1], keepdim}
    %z1 = step.sub %t1, %m1
    %q1 = step.mul %z1, %z1
    %v1 = step.mean %q1 {axes = [-1], keepdim}
    %s1 = step.rsqrt %v1
    %n1 = step.mul %z1, %s1                                  // [B, S, I]

    %conv = step.conv1d %n1, %w1 {padding = "causal"}        // [B, S, 3I]
    %a2, %b2, %c2 = step.split %conv {axis = -1, parts = 3}

    // TripleNorm(a2, b2, c2)
    %r2 = step.relu %a2
    %cube2 = step.pow %r2 {exponent = 3.0}
    %g2 = step.mul %cube2, %b2
    %t2 = step.add %g2, %c2
    %m2 = step.mean %t2 {axes = [-1], keepdim}
    %z2 = step.sub %t2, %m2
    %q2 = step.mul %z2, %z2
    %v2 = step.mean %q2 {axes = [-1], keepdim}
    %s2 = step.rsqrt %v2
    %n2 = step.mul %z2, %s2                                  // [B, S, I]

    %y = step.matmul %n2, %w2                                // [B, S, F]
    %next = step.add %h, %y
    step.yield %next
  }

  %head = step.param "head" [F, 256] f32 = zeros
  %logits = step.matmul %out, %head                          // [B, S, 256]
  %loss = step.cross_entropy %logits, %targets
  step.loss %loss

  step.config {
    optimizer = adamw(lr = 1.0e-3, beta1 = 0.9, beta2 = 0.95, eps = 1.0e-8, weight_decay = 0.01),
    schedule = one_cycle(warmup = 100, total = 10000, start_lr = 3.0e-4, final_lr = 3.0e-5),
    clip = agc(lambda = 0.01, eps_param = 1.0e-3, eps_grad = 1.0e-6),
    sam = sam(rho = 0.05, adaptive = true)
  }
}
)";

// models/byte_lm.mlir --config=tiny, from the same cell: a MomentumNet over two
// streams of width F (`reversible`, or with `stored` the same layers differentiated the usual
// way, storing each layer's inputs).
std::string byteLmReversibleTiny(bool reversible, int depth = 2, const char *attributes = "") {
  std::string text = kByteLmTiny;
  auto replace = [&](const std::string &from, const std::string &to) {
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  };
  replace("@byte_lm_residual_tiny", reversible ? "@byte_lm_tiny" : "@byte_lm_stored_tiny");
  replace("depth = 2)", "depth = " + std::to_string(depth) + ")");
  replace(R"(%table = step.param "embedding" [256, F] f32 = orthogonal(gain = 0.70710678)
  %x = step.embedding %table, %tokens                        // [B, S, F])",
          R"(%table = step.param "embedding" [256, 2 * F] f32 = orthogonal(gain = 0.70710678)
  %e = step.embedding %table, %tokens
  %a0, %x = step.split %e {axis = -1, parts = 2})");
  replace("%out = step.repeat \"cell\" depth (%h = %x) {",
          std::string("%aL, %xL = step.repeat \"cell\" depth (%a = %a0, %h = %x)") +
              (reversible ? std::string(" reversible ") + attributes + "{" : std::string(" {")));
  replace(R"(%next = step.add %h, %y
    step.yield %next)",
          R"(%beta = step.constant {value = dense<0.9> : tensor<f32>}
    %one_minus_beta = step.constant {value = dense<0.1> : tensor<f32>}
    %a_next = step.add %a, %y
    %keep = step.mul %h, %beta
    %mix = step.mul %a_next, %one_minus_beta
    %x_next = step.add %keep, %mix
    step.yield %a_next, %x_next)");
  replace(R"(%head = step.param "head" [F, 256] f32 = zeros)",
          R"(%out = step.concat %aL, %xL {axis = -1}
  %head = step.param "head" [2 * F, 256] f32 = zeros)");
  return text;
}

std::string toF64(std::string text) {
  for (size_t at = text.find("f32"); at != std::string::npos; at = text.find("f32", at))
    text.replace(at, 3, "f64");
  return text;
}

using Params = std::map<std::string, Tensor>;

struct Summary {
  std::map<std::string, bool> nonzeroGradient;  // per argument: some gradient element != 0
};

/// Builds @loss and @loss_fwd of `modelText` (made f64), differentiates @loss, and compares
/// sampled gradient elements of every parameter and float input with finite differences.
Summary checkModel(const std::string &modelText, const std::function<void(Params &)> &adjust,
                   const std::string &label) {
  Summary summary;
  auto ctx = makeContext();
  DiagnosticLog log(ctx.get());
  mlir::OwningOpRef<mlir::ModuleOp> module = parseModule(toF64(modelText), ctx.get());
  EXPECT_TRUE(module) << "the model does not parse:\n" << log.text();
  if (!module) return summary;
  auto models = module->getOps<step::ModelOp>();
  EXPECT_FALSE(models.empty());
  if (models.empty()) return summary;
  step::ModelOp model = *models.begin();

  mlir::FailureOr<mlir::func::FuncOp> fwd =
      train::buildLossFunction(*module, model, "loss_fwd", /*differentiate=*/false);
  mlir::FailureOr<mlir::func::FuncOp> fn =
      train::buildLossFunction(*module, model, "loss", /*differentiate=*/true);
  EXPECT_TRUE(succeeded(fwd) && succeeded(fn)) << log.text();
  if (failed(fwd) || failed(fn)) return summary;
  bool differentiated = succeeded(differentiate(*module));
  EXPECT_TRUE(differentiated) << "--step-differentiate failed:\n" << log.text();
  if (!differentiated) return summary;
  mlir::func::FuncOp lossFwd = *fwd, loss = *fn;

  Params params = interp::initModelParams(model, 1);
  std::map<std::string, std::vector<Tensor>> inputs = interp::sampleModelInputs(model, 1, 0);
  adjust(params);

  // Arguments by role and name.
  std::vector<Tensor> args;
  std::vector<std::string> names;
  std::vector<bool> isParam;
  for (unsigned i = 0; i < lossFwd.getNumArguments(); ++i) {
    auto role = lossFwd.getArgAttrOfType<mlir::StringAttr>(i, "step.role");
    auto name = lossFwd.getArgAttrOfType<mlir::StringAttr>(i, "step.name");
    EXPECT_TRUE(role && name) << "argument " << i << " is not named";
    if (!role || !name) return summary;
    if (role.getValue() == "param") {
      EXPECT_TRUE(params.count(name.str())) << "no value for " << name.str();
      if (!params.count(name.str())) return summary;
      args.push_back(params.at(name.str()));
      names.push_back(name.str());
      isParam.push_back(true);
    } else {
      auto index = lossFwd.getArgAttrOfType<mlir::IntegerAttr>(i, "step.index");
      int64_t k = index ? index.getInt() : 0;
      args.push_back(inputs.at(name.str()).at(k));
      names.push_back("input " + name.str() + "#" + std::to_string(k));
      isParam.push_back(false);
    }
    EXPECT_EQ(typeString(args.back().type), typeString(lossFwd.getArgumentTypes()[i])) << names.back();
  }

  mlir::FailureOr<std::vector<Tensor>> results = runF64(loss, args);
  EXPECT_TRUE(succeeded(results)) << "the differentiated loss does not run:\n" << log.text();
  if (failed(results)) return summary;
  mlir::FailureOr<std::vector<Tensor>> plain = runF64(lossFwd, args);
  EXPECT_TRUE(succeeded(plain)) << log.text();
  if (failed(plain)) return summary;
  double lossValue = (*plain)[0].data[0];
  EXPECT_NEAR((*results)[0].data[0], lossValue, 1e-12 * std::max(1.0, std::fabs(lossValue)));
  EXPECT_TRUE(std::isfinite(lossValue));

  auto lossAt = [&](const std::vector<Tensor> &a) {
    mlir::FailureOr<std::vector<Tensor>> r = runF64(lossFwd, a);
    return succeeded(r) ? (*r)[0].data[0] : std::nan("");
  };
  GradientComparison cmp(kModelTolerance);
  Rng rng(hashName(label));
  size_t k = 1;
  int paramsChecked = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!isFloatTensor(args[i].type)) continue;
    EXPECT_LT(k, results->size());
    if (k >= results->size()) break;
    const Tensor &grad = (*results)[k++];
    EXPECT_EQ(typeString(grad.type), typeString(args[i].type)) << "gradient of " << names[i];
    if (grad.type != args[i].type) continue;
    int64_t n = args[i].numElements();
    std::vector<int64_t> nonzero;
    for (int64_t e = 0; e < n; ++e)
      if (grad.data[e] != 0) nonzero.push_back(e);
    summary.nonzeroGradient[names[i]] = !nonzero.empty();
    std::set<int64_t> chosen;
    if (n <= kRandomElements) {
      for (int64_t e = 0; e < n; ++e) chosen.insert(e);
    } else {
      while (static_cast<int>(chosen.size()) < kRandomElements) chosen.insert(rng.below(n));
    }
    for (int j = 0; j < kNonzeroElements && !nonzero.empty(); ++j)
      chosen.insert(nonzero[rng.below(static_cast<int64_t>(nonzero.size()))]);
    for (int64_t e : chosen)
      cmp.add(names[i], e, grad.data[e], centralDifference(args, i, e, fdStep(), lossAt));
    if (isParam[i]) ++paramsChecked;
  }
  EXPECT_EQ(k, results->size()) << "one gradient per float argument";
  EXPECT_EQ(paramsChecked, static_cast<int>(params.size()));
  EXPECT_EQ(cmp.failures(), 0) << label << ": gradients differ from finite differences; "
                               << cmp.report();
  if (std::getenv("STEPC_FD_VERBOSE")) std::cout << "[fd] " << label << " loss " << lossValue
                                                 << "\n" << cmp.report();
  return summary;
}

TEST(ModelGradFd, MlpTiny) {
  Summary s = checkModel(kMlpTiny, [](Params &) {}, "mlp_tiny");
  // Every parameter receives a gradient at the initial point.
  for (const char *p : {"w1", "b1", "w2", "b2", "w3", "b3"})
    EXPECT_TRUE(s.nonzeroGradient[p]) << p;
}

TEST(ModelGradFd, ByteLmTinyAtInitialParams) {
  // The head starts at zero: only its gradient is non-zero, and the FD check confirms the rest
  // are zero too.
  Summary s = checkModel(kByteLmTiny, [](Params &) {}, "byte_lm_residual_tiny_init");
  EXPECT_TRUE(s.nonzeroGradient["head"]);
}

TEST(ModelGradFd, ByteLmTinyWithRandomHead) {
  Summary s = checkModel(
      kByteLmTiny,
      [](Params &params) {
        Rng rng(7);
        for (double &v : params.at("head").data) v = rng.uniform(-0.2, 0.2);
      },
      "byte_lm_residual_tiny_random_head");
  for (const char *p : {"embedding", "cell.w0", "cell.w1", "cell.w2", "head"})
    EXPECT_TRUE(s.nonzeroGradient[p]) << p;
}

// The reversible MomentumNet: its backward rebuilds each layer's inputs from its outputs
// (nothing stored per layer); against finite differences like the others.
TEST(ModelGradFd, ByteLmReversibleTinyWithRandomHead) {
  Summary s = checkModel(
      byteLmReversibleTiny(true),
      [](Params &params) {
        Rng rng(7);
        for (double &v : params.at("head").data) v = rng.uniform(-0.2, 0.2);
      },
      "byte_lm_tiny_random_head");
  for (const char *p : {"embedding", "cell.w0", "cell.w1", "cell.w2", "head"})
    EXPECT_TRUE(s.nonzeroGradient[p]) << p;
}

// In float64 the rebuilt inputs differ from the stored ones by rounding only: every gradient of
// the reversible model equals the stored model's within 1e-10 (relative to the largest of its
// tensor), at a point where every parameter has a gradient.
// Depth 2 (one segment), and depth 16 in segments of 8 (two inner reversible repeats under a
// checkpointed one) and rebuilt through all 16 layers (`segment = 0`).
void expectReversibleEqualsStored(int depth, const char *attributes) {
  SCOPED_TRACE("depth " + std::to_string(depth) + " " + attributes);
  std::vector<std::vector<Tensor>> grads;
  for (bool reversible : {true, false}) {
    auto ctx = makeContext();
    DiagnosticLog log(ctx.get());
    mlir::OwningOpRef<mlir::ModuleOp> module =
        parseModule(toF64(byteLmReversibleTiny(reversible, depth, attributes)), ctx.get());
    ASSERT_TRUE(module) << log.text();
    step::ModelOp model = *module->getOps<step::ModelOp>().begin();
    mlir::FailureOr<mlir::func::FuncOp> fn =
        train::buildLossFunction(*module, model, "loss", /*differentiate=*/true);
    ASSERT_TRUE(succeeded(fn) && succeeded(differentiate(*module))) << log.text();
    Params params = interp::initModelParams(model, 1);
    Rng rng(7);
    for (double &v : params.at("head").data) v = rng.uniform(-0.2, 0.2);
    std::map<std::string, std::vector<Tensor>> inputs = interp::sampleModelInputs(model, 1, 0);
    std::vector<Tensor> args;
    for (unsigned i = 0; i < fn->getNumArguments(); ++i) {
      std::string name = fn->getArgAttrOfType<mlir::StringAttr>(i, "step.name").str();
      if (fn->getArgAttrOfType<mlir::StringAttr>(i, "step.role").getValue() == "param") {
        args.push_back(params.at(name));
      } else {
        auto index = fn->getArgAttrOfType<mlir::IntegerAttr>(i, "step.index");
        args.push_back(inputs.at(name).at(index ? index.getInt() : 0));
      }
    }
    mlir::FailureOr<std::vector<Tensor>> results = runF64(*fn, args);
    ASSERT_TRUE(succeeded(results)) << log.text();
    grads.push_back(*results);
  }
  ASSERT_EQ(grads[0].size(), grads[1].size());
  EXPECT_NEAR(grads[0][0].data[0], grads[1][0].data[0], 1e-12);  // the loss
  for (size_t k = 1; k < grads[0].size(); ++k) {
    const Tensor &rev = grads[0][k], &stored = grads[1][k];
    ASSERT_EQ(rev.data.size(), stored.data.size());
    double scale = 0, worst = 0;
    for (double v : stored.data) scale = std::max(scale, std::fabs(v));
    for (size_t e = 0; e < rev.data.size(); ++e)
      worst = std::max(worst, std::fabs(rev.data[e] - stored.data[e]));
    EXPECT_GT(scale, 0) << "gradient " << k << " is zero: the comparison would prove nothing";
    EXPECT_LE(worst, 1e-10 * scale) << "gradient " << k << ": reversible vs stored";
  }
}

TEST(ModelGradFd, ByteLmReversibleEqualsStoredInF64) {
  expectReversibleEqualsStored(2, "");
  expectReversibleEqualsStored(16, "");
  expectReversibleEqualsStored(16, "attributes {segment = 0} ");
}

}  // namespace
}  // namespace stepc::gradtest
