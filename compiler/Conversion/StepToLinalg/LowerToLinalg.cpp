//===- LowerToLinalg.cpp - the --step-lower-to-linalg pass ---------------===//
//
// Rewrites the covered step ops of func.func bodies into linalg on tensors, tensor, scf,
// arith and math (patterns by op family: ElementwisePatterns, ReductionPatterns,
// ContractionPatterns, ShapePatterns, SoftmaxPatterns, NormPatterns, ScanPatterns,
// ConvolutionPatterns, RandomPatterns, LowPrecisionPatterns; step.custom_grad is inlined). The ops are offered to the patterns in program order (operands are
// lowered before their users); step ops nested in other step ops are not offered. After a sweep in which a rewrite succeeded, the
// ops are collected and offered again, so that the body a step.repeat lowering cloned into an
// scf.for is lowered too. An op without a pattern, or one a pattern declines, stays as it is,
// and nothing else is touched (no folding, no dead-code removal).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/Passes.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"

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
  using LowerToLinalgBase::LowerToLinalgBase;
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    populateElementwisePatterns(patterns);
    populateRandomPatterns(patterns);
    populateLowPrecisionPatterns(patterns);
    populateReductionPatterns(patterns);
    populateContractionPatterns(patterns);
    populateShapePatterns(patterns);
    populateSoftmaxPatterns(patterns);
    populateNormPatterns(patterns);
    populateScanPatterns(patterns);
    populateRoutingPatterns(patterns, parallelRouting);
    populateCollectivePatterns(patterns);
    populateConvolutionPatterns(patterns);
    populateWinogradPatterns(patterns);
    patterns.add<CustomGradForward>(&getContext());

    // The lowered ops keep the model's locations; naming each with its step op (a NameLoc
    // around the file location) lets later stages say which model op a kernel came from
    // (--debug-nan: "model.mlir:12:8: op 'step.rsqrt' produced Inf"). Diagnostics still print
    // the file location.
    getOperation().walk([](mlir::Operation *op) {
      if (!llvm::isa<step::StepDialect>(op->getDialect()) ||
          !op->getParentOfType<mlir::func::FuncOp>() || llvm::isa<mlir::NameLoc>(op->getLoc()))
        return;
      op->setLoc(mlir::NameLoc::get(
          mlir::StringAttr::get(op->getContext(), op->getName().getStringRef()), op->getLoc()));
    });

    // Every step op in a func.func body must go: one that no pattern takes (or that its
    // pattern declines) is a located error of the conversion itself. step.model and step.func
    // declarations outside the program functions stay (they are the interface until
    // `buffers`). The driver visits ops in program order, so operands are lowered before their
    // users, and legalizes the ops a rewrite creates (a step.repeat's body cloned into an
    // scf.for) in turn.
    lowerRepeatsToLoops(getOperation());
    mlir::ConversionTarget target(getContext());
    target.markUnknownOpDynamicallyLegal([](mlir::Operation *) { return true; });
    target.addDynamicallyLegalDialect<step::StepDialect>([](mlir::Operation *op) {
      return !op->getParentOfType<mlir::func::FuncOp>();
    });
    if (failed(mlir::applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};

}  // namespace
}  // namespace stepc::lowering
