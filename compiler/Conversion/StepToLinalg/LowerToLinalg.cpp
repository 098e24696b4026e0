//===- LowerToLinalg.cpp - the --step-lower-to-linalg pass ---------------===//
//
// Rewrites the covered step ops of func.func bodies into linalg on tensors, tensor, scf,
// arith and math (patterns by op family: ElementwisePatterns, ReductionPatterns,
// ContractionPatterns, ShapePatterns, SoftmaxPatterns, NormPatterns, ScanPatterns,
// ConvolutionPatterns, DropoutPattern, LowPrecisionPatterns; step.custom_grad is inlined). The ops are offered to the patterns in program order (operands are
// lowered before their users); step ops nested in other step ops are not offered. After a sweep in which a rewrite succeeded, the
// ops are collected and offered again, so that the body a step.repeat lowering cloned into an
// scf.for is lowered too. An op without a pattern, or one a pattern declines, stays as it is,
// and nothing else is touched (no folding, no dead-code removal).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/Passes.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Rewrite/PatternApplicator.h"

namespace stepc::lowering {

#define GEN_PASS_DEF_LOWERTOLINALG
#include "compiler/Conversion/StepToLinalg/Passes.h.inc"

namespace {

// After autodiff, a step.custom_grad is just its forward region (the backward region was
// already applied by the sweep): inline it, and its ops are lowered like any others.
struct CustomGradForward : mlir::OpRewritePattern<step::CustomGradOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::CustomGradOp op,
                                      mlir::PatternRewriter &rw) const override {
    mlir::Block &forward = op.getForward().front();
    mlir::Operation *yield = forward.getTerminator();
    rw.inlineBlockBefore(&forward, op, op.getInputs());
    llvm::SmallVector<mlir::Value> results(yield->getOperands());
    rw.eraseOp(yield);
    rw.replaceOp(op, results);
    return mlir::success();
  }
};

struct LowerToLinalgPass : impl::LowerToLinalgBase<LowerToLinalgPass> {
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    populateElementwisePatterns(patterns);
    populateDropoutPatterns(patterns);
    populateLowPrecisionPatterns(patterns);
    populateReductionPatterns(patterns);
    populateContractionPatterns(patterns);
    populateShapePatterns(patterns);
    populateSoftmaxPatterns(patterns);
    populateNormPatterns(patterns);
    populateScanPatterns(patterns);
    populateConvolutionPatterns(patterns);
    patterns.add<CustomGradForward>(&getContext());
    mlir::FrozenRewritePatternSet frozen(std::move(patterns));

    // The step ops of func.func bodies, including those nested in non-step ops (the scf.for
    // a step.repeat becomes), but not those inside step regions. Offered in program order;
    // when a rewrite succeeded, the ops are collected again, so the clone of a repeat's body
    // is lowered too (declined ops are offered again and decline again).
    mlir::PatternApplicator applicator(frozen);
    applicator.applyDefaultCostModel();
    mlir::PatternRewriter rewriter(&getContext());
    for (bool changed = true; changed;) {
      changed = false;
      llvm::SmallVector<mlir::Operation *> ops;
      for (auto fn : getOperation().getOps<mlir::func::FuncOp>())
        fn.getBody().walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation *op) {
          if (!llvm::isa_and_nonnull<step::StepDialect>(op->getDialect()))
            return mlir::WalkResult::advance();
          ops.push_back(op);
          return mlir::WalkResult::skip();
        });
      for (mlir::Operation *op : ops) {
        rewriter.setInsertionPoint(op);
        if (mlir::succeeded(applicator.matchAndRewrite(op, rewriter))) changed = true;
      }
    }
  }
};

}  // namespace
}  // namespace stepc::lowering
