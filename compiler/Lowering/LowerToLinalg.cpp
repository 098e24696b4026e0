//===- LowerToLinalg.cpp - the --step-lower-to-linalg pass ---------------===//
//
// Rewrites the covered step ops directly inside func.func bodies into linalg on tensors,
// tensor, arith and math (patterns by op family: ElementwisePatterns, ReductionPatterns,
// ContractionPatterns, ShapePatterns, SoftmaxPatterns, NormPatterns, ScanPatterns). Each op is offered to
// the patterns once, in program order (operands are lowered before their users): an op without
// a pattern, or one a pattern declines, stays as it is, and nothing else is touched (no
// folding, no dead-code removal).
//
//===----------------------------------------------------------------------===//
#include "compiler/Lowering/Passes.h"
#include "compiler/Lowering/Patterns.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Rewrite/PatternApplicator.h"

namespace stepc::lowering {

#define GEN_PASS_DEF_LOWERTOLINALG
#include "compiler/Lowering/Passes.h.inc"

namespace {

struct LowerToLinalgPass : impl::LowerToLinalgBase<LowerToLinalgPass> {
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    populateElementwisePatterns(patterns);
    populateReductionPatterns(patterns);
    populateContractionPatterns(patterns);
    populateShapePatterns(patterns);
    populateSoftmaxPatterns(patterns);
    populateNormPatterns(patterns);
    populateScanPatterns(patterns);
    mlir::FrozenRewritePatternSet frozen(std::move(patterns));

    // The step ops of func.func bodies (not those nested in step regions).
    llvm::SmallVector<mlir::Operation *> ops;
    for (auto fn : getOperation().getOps<mlir::func::FuncOp>())
      for (mlir::Block &block : fn.getBody())
        for (mlir::Operation &op : block)
          if (llvm::isa_and_nonnull<step::StepDialect>(op.getDialect())) ops.push_back(&op);
    mlir::PatternApplicator applicator(frozen);
    applicator.applyDefaultCostModel();
    mlir::PatternRewriter rewriter(&getContext());
    for (mlir::Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      (void)applicator.matchAndRewrite(op, rewriter);
    }
  }
};

}  // namespace
}  // namespace stepc::lowering
