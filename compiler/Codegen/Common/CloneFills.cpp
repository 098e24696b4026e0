//===- CloneFills.cpp - --step-clone-fills --------------------------------===//
//
// Gives every linalg op that accumulates into a fill made outside its block (a loop's body)
// a fill of its own, placed just before it (on tensors, before bufferization). The autodiff and CSE share one zero tensor among
// several accumulators, and LICM-like hoisting leaves it outside the layer loop: byte_lm's
// reverse loop accumulated each layer's input gradient `dx = dz · W0ᵀ` into a [B, S, F] zero
// tensor made once before the loop. One-shot bufferization must then keep those zeros and
// copy them into a new buffer on every iteration (4 MB read and written per layer), and the
// GEMM reads them back (`+=`). With its own fill just before it, the accumulator bufferizes in
// place, --step-contractions-to-library folds the fill into the GEMM (beta = 0), and the add
// of dx into the carried gradient can become the GEMM's epilogue.
// Users in the fill's own block keep sharing it: cloning those too made the memory plan larger
// (GPT-2 124M's arena +227 MB, tiny byte_lm's +7%) for no copy saved that bufferization
// did not already avoid. Users that only read the fill (an input operand) or only overwrite
// it are left alone too.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_CLONEFILLS
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

struct CloneFillsPass : impl::CloneFillsBase<CloneFillsPass> {
  void runOnOperation() override {
    llvm::SmallVector<mlir::linalg::FillOp> fills;
    getOperation().walk([&](mlir::linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics()) fills.push_back(fill);
    });
    for (mlir::linalg::FillOp fill : fills) {
      mlir::Value result = fill.getResult(0);
      llvm::SmallVector<mlir::OpOperand *> inits;
      for (mlir::OpOperand &use : result.getUses()) {
        // Only accumulators (an init the op's body reads): an init that is only written
        // needs no zeros, and bufferization already gives it a buffer without a copy.
        auto writer = llvm::dyn_cast<mlir::linalg::LinalgOp>(use.getOwner());
        if (writer && writer.isDpsInit(&use) && writer.payloadUsesValueFromOperand(&use) &&
            use.getOwner()->getBlock() != fill->getBlock())
          inits.push_back(&use);
      }
      for (mlir::OpOperand *use : inits) {
        mlir::OpBuilder builder(use->getOwner());
        mlir::Value dest = fill.getOutputs().front();
        // A fresh empty tensor too, so that each fill has a destination of its own and
        // --eliminate-empty-tensors / bufferization see no sharing.
        if (auto empty = dest.getDefiningOp<mlir::tensor::EmptyOp>())
          dest = builder.clone(*empty)->getResult(0);
        mlir::Operation *copy = builder.clone(*fill);
        copy->setOperand(copy->getNumOperands() - 1, dest);
        use->set(copy->getResult(0));
      }
      if (result.use_empty()) fill->erase();
    }
  }
};

}  // namespace

}  // namespace stepc::codegen
