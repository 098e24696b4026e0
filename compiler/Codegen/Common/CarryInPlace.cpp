//===- CarryInPlace.cpp - --step-carry-in-place ---------------------------===//
//
// A repeat's carried values (a layer's activations) are written into their loop-carried
// buffers in place. The repeat's lowering (StepToLinalg/ScanPatterns.cpp) ends each iteration
// with `linalg.copy` of the layer's new value into the iteration's carried tensor, so that the
// scf.for's yield is equivalent to its iter_arg and bufferizes without a new buffer per
// iteration; but the copy is one more pass over every activation per layer. This replaces each
// such copy with `bufferization.materialize_in_destination`, and gives the kernel computing
// the value an output of its own: --eliminate-empty-tensors then makes the carried buffer that
// kernel's output, and one-shot bufferization writes it in place where nothing still to come
// reads the old value (an elementwise kernel reading it at the same index, e.g. a residual
// add, is fine). Only where nothing after that kernel reads the old value: one-shot
// bufferization must write a materialized value into its destination (it refuses the loop
// otherwise), where the copy it replaces could be made out of place, so other copies stay.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "compiler/Codegen/Common/TieToDestination.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_CARRYINPLACE
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// Whether `op` reads `v` only at the indices where it writes its result: an all-parallel
// linalg.generic whose operand map for `v` is its output's.
bool readsInPlace(mlir::Operation *op, mlir::Value v) {
  auto generic = llvm::dyn_cast<mlir::linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops())
    return false;
  mlir::AffineMap out = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  for (mlir::OpOperand *in : generic.getDpsInputOperands())
    if (in->get() == v && generic.getMatchingIndexingMap(in) != out) return false;
  return true;
}

// Whether the op computing the copied value may write over the carried tensor the copy
// overwrites: every other read of it, or of a view of it (a reshape or slice, which
// bufferizes to the same buffer), comes before that op, or is that op reading it in place.
bool oldValueDeadAfterProducer(mlir::linalg::CopyOp copy, mlir::Block *body) {
  mlir::Operation *producer = copy.getInputs()[0].getDefiningOp();
  mlir::Value dest = copy.getOutputs()[0];
  if (!producer || producer->getBlock() != body) return false;
  llvm::SmallVector<mlir::Value> aliases{dest};
  while (!aliases.empty()) {
    mlir::Value alias = aliases.pop_back_val();
    for (mlir::OpOperand &use : alias.getUses()) {
      mlir::Operation *owner = use.getOwner();
      if (owner == copy.getOperation()) continue;
      if (llvm::isa<mlir::tensor::CollapseShapeOp, mlir::tensor::ExpandShapeOp,
                    mlir::tensor::ExtractSliceOp, mlir::tensor::CastOp>(owner)) {
        aliases.push_back(owner->getResult(0));
        continue;
      }
      if (owner == producer && alias == dest && readsInPlace(producer, dest)) continue;
      mlir::Operation *user = body->findAncestorOpInBlock(*owner);
      if (!user || !user->isBeforeInBlock(producer)) return false;
    }
  }
  return true;
}

struct CarryInPlacePass : impl::CarryInPlaceBase<CarryInPlacePass> {
  void runOnOperation() override {
    llvm::SmallVector<mlir::linalg::CopyOp> copies;
    getOperation().walk([&](mlir::scf::ForOp loop) {
      auto yield = llvm::cast<mlir::scf::YieldOp>(loop.getBody()->getTerminator());
      for (auto [k, value] : llvm::enumerate(yield.getOperands())) {
        auto copy = value.getDefiningOp<mlir::linalg::CopyOp>();
        if (copy && copy.hasPureTensorSemantics() && copy->getBlock() == loop.getBody() &&
            copy.getOutputs()[0] == loop.getRegionIterArgs()[k] && copy->hasOneUse() &&
            oldValueDeadAfterProducer(copy, loop.getBody()))
          copies.push_back(copy);
      }
    });
    for (mlir::linalg::CopyOp copy : copies) {
      mlir::OpBuilder b(copy);
      mlir::Value tied =
          tieToDestination(b, copy.getLoc(), copy.getInputs()[0], copy.getOutputs()[0]);
      copy.getResult(0).replaceAllUsesWith(tied);
      copy.erase();
    }
  }
};

}  // namespace

}  // namespace stepc::codegen
