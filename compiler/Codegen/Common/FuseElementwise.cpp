//===- FuseElementwise.cpp - --step-fuse-elementwise ----------------------===//
//
// The `kernels` stage's fusion: an elementwise producer fuses into its consumer (elementwise
// op or reduction), so the pair is one kernel and the intermediate tensor never exists. It is
// upstream's elementwise fusion with a stricter rule than its default (single use), because
// two fusions upstream allows are losses here:
// - into a contraction: the result would no longer be a GEMM the library can run, and the
//   producer would be recomputed once per output column;
// - through a broadcast (the consumer reads the producer with a non-permutation map): the
//   producer would be recomputed for every broadcast element.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

bool shouldFuse(mlir::OpOperand *operand) {
  mlir::Operation *producer = operand->get().getDefiningOp();
  auto consumer = llvm::dyn_cast<mlir::linalg::LinalgOp>(operand->getOwner());
  if (!producer || !consumer || !producer->hasOneUse()) return false;
  // A collective (a marked copy, StepToLinalg's CollectivePatterns.cpp) is a call, not a kernel.
  if (producer->hasAttr("step.collective") || consumer->hasAttr("step.collective")) return false;
  if (mlir::linalg::isaContractionOpInterface(consumer)) return false;
  return consumer.getMatchingIndexingMap(operand).isPermutation();
}

struct FuseElementwisePass : impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    mlir::linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    if (mlir::failed(mlir::applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

}  // namespace

}  // namespace stepc::codegen
