//===- CollectivePatterns.cpp - step.all_reduce ---------------------------===//
//
// step.all_reduce becomes a linalg.copy into a fresh tensor, marked `step.collective`: on
// tensors a copy is what one rank computes (the input), and a copy bufferizes to exactly the
// two buffers the runtime's reduction reads and writes. After bufferization,
// --step-collectives-to-runtime replaces the marked copy by the runtime call; the fusion pass
// leaves marked ops alone.
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace stepc::lowering {
namespace {

struct AllReduceLowering : mlir::OpRewritePattern<step::AllReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::AllReduceOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getResult().getType());
    mlir::Value init =
        rw.create<mlir::tensor::EmptyOp>(op.getLoc(), type.getShape(), type.getElementType());
    auto copy = rw.create<mlir::linalg::CopyOp>(op.getLoc(), op.getInput(), init);
    copy->setAttr(kCollectiveAttr, rw.getStringAttr("all_reduce_sum"));
    rw.replaceOp(op, copy->getResults());
    return mlir::success();
  }
};

}  // namespace

void populateCollectivePatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<AllReduceLowering>(patterns.getContext());
}

}  // namespace stepc::lowering
