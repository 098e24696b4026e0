// Unit tests of model loading: overrides (--batch, --dim), specs, and error reporting.
#include "compiler/Model/ModelLoader.h"

#include <gtest/gtest.h>

#include "dialects/step/IR/StepSpecs.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/Diagnostics.h"

namespace stepc {
namespace {

constexpr const char *kModel = R"(
step.model @m dims(B = 4, D = 8, C = 3, N = 2) {
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 3)
  %h = step.repeat "layer" N (%a = %x) {
    %w = step.param "w" [D, D] f32 = orthogonal(gain = 2.0)
    %b = step.matmul %a, %w
    %c = step.tanh %b
    step.yield %c
  }
  %head = step.param "head" [D, C] f32 = normal(std = 0.5)
  %logits = step.matmul %h, %head
  %loss = step.cross_entropy %logits, %y
  step.loss %loss
  step.config { optimizer = adam(lr = 0.01), sam = sam(rho = 0.1, adaptive = true) }
}
)";

struct Loaded {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string diagnostics;
};

std::unique_ptr<Loaded> load(const std::string &text, const ModelOverrides &overrides = {}) {
  auto loaded = std::make_unique<Loaded>();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "model.mlir"),
                               llvm::SMLoc());
  llvm::raw_string_ostream os(loaded->diagnostics);
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &loaded->context, os);
  loaded->module = loadModel(sourceMgr, loaded->context, overrides);
  return loaded;
}

step::ParamOp findParam(step::ModelOp model, llvm::StringRef fullName) {
  step::ParamOp found;
  model.walk([&](step::ParamOp p) {
    if (p.getDeclName() == fullName) found = p;
  });
  return found;
}

TEST(ModelLoader, LoadsAndInfersTypes) {
  auto loaded = load(kModel);
  ASSERT_TRUE(loaded->module) << loaded->diagnostics;
  step::ModelOp model = getSingleModel(*loaded->module);
  ASSERT_TRUE(model);
  auto loss = model.getLossOp().getLoss().getType();
  EXPECT_EQ(llvm::cast<mlir::RankedTensorType>(loss).getRank(), 0);
  step::ParamOp w = findParam(model, "layer.w");
  ASSERT_TRUE(w);
  EXPECT_EQ(w.getStoredType().getShape(), (llvm::ArrayRef<int64_t>{2, 8, 8}));
}

TEST(ModelLoader, BatchOverrideReinfersEveryShape) {
  ModelOverrides overrides;
  overrides.batch = 7;
  auto loaded = load(kModel, overrides);
  ASSERT_TRUE(loaded->module) << loaded->diagnostics;
  step::ModelOp model = getSingleModel(*loaded->module);
  bool sawLogits = false;
  model.walk([&](step::CrossEntropyOp ce) {
    auto logits = llvm::cast<mlir::RankedTensorType>(ce.getLogits().getType());
    EXPECT_EQ(logits.getShape(), (llvm::ArrayRef<int64_t>{7, 3}));
    sawLogits = true;
  });
  EXPECT_TRUE(sawLogits);
  model.walk([&](step::RepeatOp r) {
    auto t = llvm::cast<mlir::RankedTensorType>(r.getResult(0).getType());
    EXPECT_EQ(t.getDimSize(0), 7);
  });
}

TEST(ModelLoader, DimOverrideChangesDeclaredShapesAndDepth) {
  ModelOverrides overrides;
  overrides.dims = {{"D", 16}, {"N", 5}};
  auto loaded = load(kModel, overrides);
  ASSERT_TRUE(loaded->module) << loaded->diagnostics;
  step::ParamOp w = findParam(getSingleModel(*loaded->module), "layer.w");
  ASSERT_TRUE(w);
  EXPECT_EQ(w.getStoredType().getShape(), (llvm::ArrayRef<int64_t>{5, 16, 16}));
}

TEST(ModelLoader, UnknownDimOverrideIsALocatedError) {
  ModelOverrides overrides;
  overrides.dims = {{"width", 16}};
  auto loaded = load(kModel, overrides);
  EXPECT_FALSE(loaded->module);
  EXPECT_NE(loaded->diagnostics.find("model.mlir:2:"), std::string::npos) << loaded->diagnostics;
  EXPECT_NE(loaded->diagnostics.find("--dim width=16 names no dim"), std::string::npos)
      << loaded->diagnostics;
}

TEST(ModelLoader, SpecsReadWithSchemaDefaults) {
  auto loaded = load(kModel);
  ASSERT_TRUE(loaded->module) << loaded->diagnostics;
  step::ConfigOp config = getSingleModel(*loaded->module).getConfigOp();
  ASSERT_TRUE(config);
  mlir::DictionaryAttr adam = *config.getOptimizer();
  EXPECT_EQ(step::specKind(adam), "adam");
  EXPECT_DOUBLE_EQ(step::specFloat(adam, "lr"), 0.01);
  EXPECT_DOUBLE_EQ(step::specFloat(adam, "beta2"), 0.999);  // default
  mlir::DictionaryAttr sam = *config.getSam();
  EXPECT_DOUBLE_EQ(step::specFloat(sam, "rho"), 0.1);
  EXPECT_TRUE(step::specBool(sam, "adaptive"));
  EXPECT_FALSE(step::specBool(sam, "next_batch"));  // default
}

TEST(ModelLoader, ShapeErrorPointsAtTheOp) {
  std::string bad = kModel;
  bad.replace(bad.find("%logits = step.matmul %h, %head"), 31, "%logits = step.matmul %head, %h");
  auto loaded = load(bad);
  EXPECT_FALSE(loaded->module);
  EXPECT_NE(loaded->diagnostics.find("model.mlir:11:13: error: contraction sizes differ"),
            std::string::npos)
      << loaded->diagnostics;
}

TEST(ModelLoader, FileWithoutModelIsRejected) {
  auto loaded = load("module {}");
  ASSERT_TRUE(loaded->module);
  mlir::ScopedDiagnosticHandler silence(&loaded->context,
                                        [](mlir::Diagnostic &) { return mlir::success(); });
  EXPECT_FALSE(getSingleModel(*loaded->module));
}

}  // namespace
}  // namespace stepc
