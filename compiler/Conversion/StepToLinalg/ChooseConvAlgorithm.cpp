//===- ChooseConvAlgorithm.cpp - the --step-choose-conv-algorithm pass ----===//
//
// Marks convolutions for the Winograd lowering (WinogradPatterns.cpp) by shape; see the pass's
// description in Passes.td for the rule and why.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/Passes.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "compiler/Conversion/StepToLinalg/WinogradTransforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace stepc::lowering {

#define GEN_PASS_DEF_CHOOSECONVALGORITHM
#include "compiler/Conversion/StepToLinalg/Passes.h.inc"

namespace {

// The convolution's dimensions, read from whichever of the three ops `op` is.
struct ConvShape {
  int64_t kernel = 0, cin = 0, cout = 0, outSeq = 0, groups = 1, batch = 0;
  bool f32 = true;
};

// The most batch chunks of at least `chunkRows` tile rows each (1 when none splits).
int64_t chunksFor(const ConvShape &s, int64_t tile, int64_t chunkRows) {
  if (chunkRows <= 0) return 1;
  int64_t tiles = (s.outSeq + tile - 1) / tile;
  for (int64_t c = s.batch; c > 1; --c)
    if (s.batch % c == 0 && s.batch / c * tiles >= chunkRows) return c;
  return 1;
}

std::optional<ConvShape> shapeOf(mlir::Operation *op) {
  ConvShape shape;
  llvm::SmallVector<mlir::Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (mlir::Type type : types) {
    auto t = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (!t || t.getRank() != 3 || !t.hasStaticShape()) return std::nullopt;
    shape.f32 = shape.f32 && t.getElementType().isF32();
  }
  auto dims = [](mlir::Value v) { return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape(); };
  if (auto conv = llvm::dyn_cast<step::Conv1dOp>(op)) {
    llvm::ArrayRef<int64_t> w = dims(conv.getWeight());
    shape = {w[0], w[1], w[2], dims(conv.getResult())[1], (int64_t)conv.getGroups(),
             dims(conv.getResult())[0], shape.f32};
  } else if (auto dx = llvm::dyn_cast<step::Conv1dGradInputOp>(op)) {
    llvm::ArrayRef<int64_t> w = dims(dx.getWeight());
    shape = {w[0], w[1], w[2], dims(dx.getGrad())[1], (int64_t)dx.getGroups(),
             dims(dx.getGrad())[0], shape.f32};
  } else if (auto dw = llvm::dyn_cast<step::Conv1dGradWeightOp>(op)) {
    llvm::ArrayRef<int64_t> w = dims(dw.getResult());
    shape = {w[0], w[1], w[2], dims(dw.getGrad())[1], (int64_t)dw.getGroups(),
             dims(dw.getGrad())[0], shape.f32};
  } else {
    return std::nullopt;
  }
  return shape;
}

struct ChooseConvAlgorithmPass : impl::ChooseConvAlgorithmBase<ChooseConvAlgorithmPass> {
  using ChooseConvAlgorithmBase::ChooseConvAlgorithmBase;
  void runOnOperation() override {
    if (algorithm != "direct" && algorithm != "auto" && algorithm != "winograd") {
      getOperation().emitError() << "step-choose-conv-algorithm: algorithm expects direct, auto "
                                    "or winograd, found '" << algorithm << "'";
      return signalPassFailure();
    }
    if (algorithm != "direct" && !winogradTransforms(tile, 2)) {
      getOperation().emitError() << "step-choose-conv-algorithm: tile expects 1 to "
                                 << kMaxWinogradAlpha - 1 << ", found " << static_cast<int64_t>(tile);
      return signalPassFailure();
    }
    if (algorithm == "direct") return;
    mlir::Builder b(&getContext());
    getOperation().walk([&](mlir::func::FuncOp func) {
      func.walk([&](mlir::Operation *op) {
        std::optional<ConvShape> s = shapeOf(op);
        if (!s || !s->f32 || s->groups != 1 || !winogradTransforms(tile, s->kernel)) return;
        if (algorithm == "auto" &&
            (s->kernel < 3 || s->cin < minChannels || s->cout < minChannels ||
             s->outSeq < 2 * tile))
          return;
        op->setAttr(kWinogradTileAttr, b.getI64IntegerAttr(tile));
        if (int64_t chunks = chunksFor(*s, tile, chunkRows); chunks > 1)
          op->setAttr(kWinogradChunksAttr, b.getI64IntegerAttr(chunks));
        if (testOnlyPerturb) op->setAttr(kWinogradPerturbAttr, b.getUnitAttr());
      });
    });
  }
};

}  // namespace
}  // namespace stepc::lowering
