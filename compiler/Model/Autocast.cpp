//===- Autocast.cpp - --precision=bf16: bf16 GEMMs, f32 master weights ---===//
//
// Mixed precision the way PyTorch's autocast does it, applied to the model before the
// training step is built, so the interpreter (the oracle) and every backend see the same
// program:
//   - the contractions (matmul, batch_matmul, conv1d) take bf16 operands: f32 operands are
//     cast to bf16 at the op, and their results are bf16;
//   - ops that need range or precision (softmax, log_softmax, layer_norm, rms_norm,
//     cross_entropy, sum, mean, cumsum, exp, log, pow) compute in f32: bf16 operands are cast
//     up;
//   - any other op promotes: if its float operands mix bf16 and f32, the bf16 ones are cast to
//     f32; if all are bf16 it stays bf16 (a relu of a GEMM output, say);
//   - what the model declares keeps its type: parameters (the f32 master weights; the
//     optimizer and its state stay f32), inputs, values carried or stacked by step.repeat,
//     operands of calls, custom gradients and step.loss. Where a value reaching them became
//     bf16, it is cast back.
// Differentiation then runs through the casts: the gradient of a cast to bf16 is a cast of the
// bf16 gradient back to f32, so every parameter gets an f32 gradient.
// Not autocast: the bodies of step.func and step.custom_grad (they keep their declared types).
//
//===----------------------------------------------------------------------===//
#include "compiler/Model/ModelLoader.h"
#include "dialects/step/IR/ShapeRules.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

namespace stepc {

namespace {

enum class Policy { kLow, kHigh, kPromote };

Policy policyOf(mlir::Operation *op) {
  if (llvm::isa<step::MatmulOp, step::BatchMatmulOp, step::Conv1dOp>(op)) return Policy::kLow;
  if (llvm::isa<step::SoftmaxOp, step::LogSoftmaxOp, step::LayerNormOp, step::RmsNormOp,
                step::CrossEntropyOp, step::SumOp, step::MeanOp, step::CumsumOp, step::ExpOp,
                step::LogOp, step::PowOp>(op))
    return Policy::kHigh;
  return Policy::kPromote;
}

mlir::Type elementOf(mlir::Value v) {
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
  return type ? type.getElementType() : mlir::Type();
}

// Replaces operand `operand` by a step.cast of it to `element`, created before its owner.
void castOperand(mlir::OpOperand &operand, mlir::Type element) {
  mlir::Operation *owner = operand.getOwner();
  mlir::OpBuilder b(owner);
  auto cast = b.create<step::CastOp>(owner->getLoc(), operand.get(), mlir::TypeAttr::get(element));
  operand.set(cast.getResult());
}

struct Autocast {
  llvm::DenseMap<mlir::Value, mlir::Type> declared;  // every value's type before autocast
  mlir::Type bf16, f32;

  mlir::LogicalResult run(mlir::Block &block) {
    for (mlir::Operation &op : llvm::make_early_inc_range(block)) {
      if (llvm::isa<step::CastOp>(op)) {
        if (failed(step::reinferResultTypes(&op))) return mlir::failure();
        continue;
      }
      if (!llvm::isa<mlir::InferTypeOpInterface>(op) || op.getNumRegions() != 0) {
        // Declared types are kept: cast back whatever changed.
        for (mlir::OpOperand &operand : op.getOpOperands()) {
          mlir::Type was = declared.lookup(operand.get());
          if (was && was != operand.get().getType())
            castOperand(operand, llvm::cast<mlir::RankedTensorType>(was).getElementType());
        }
        if (auto repeat = llvm::dyn_cast<step::RepeatOp>(op))
          if (failed(run(repeat.getBody().front()))) return mlir::failure();
        continue;
      }
      bool changed = false;
      for (mlir::Value v : op.getOperands()) {
        mlir::Type was = declared.lookup(v);
        changed |= was && was != v.getType();
      }
      if (!changed && policyOf(&op) != Policy::kLow) continue;  // as declared
      bool anyLow = false, anyHigh = false;
      for (mlir::Value v : op.getOperands()) {
        anyLow |= elementOf(v) == bf16;
        anyHigh |= elementOf(v) == f32;
      }
      Policy policy = policyOf(&op);
      for (mlir::OpOperand &operand : op.getOpOperands()) {
        mlir::Type element = elementOf(operand.get());
        if (policy == Policy::kLow && element == f32)
          castOperand(operand, bf16);
        else if (element == bf16 &&
                 (policy == Policy::kHigh || (policy == Policy::kPromote && anyHigh && anyLow)))
          castOperand(operand, f32);
      }
      if (failed(step::reinferResultTypes(&op))) return mlir::failure();
    }
    return mlir::success();
  }
};

}  // namespace

mlir::LogicalResult applyAutocastBf16(step::ModelOp model) {
  Autocast autocast;
  mlir::MLIRContext *ctx = model.getContext();
  autocast.bf16 = mlir::BFloat16Type::get(ctx);
  autocast.f32 = mlir::Float32Type::get(ctx);
  model.getBody().walk([&](mlir::Operation *op) {
    for (mlir::Value v : op->getResults()) autocast.declared[v] = v.getType();
    for (mlir::Region &region : op->getRegions())
      for (mlir::Block &block : region)
        for (mlir::Value v : block.getArguments()) autocast.declared[v] = v.getType();
  });
  return autocast.run(model.getBody().front());
}

}  // namespace stepc
