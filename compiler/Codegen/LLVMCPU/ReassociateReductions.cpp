//===- ReassociateReductions.cpp - --step-reassociate-reductions ----------===//
//
// Marks the float add that accumulates a reduction kernel's result (the payload's addf of
// its accumulator) `reassoc`, so that LLVM's loop vectorizer may keep one partial sum per
// vector lane (and per interleaved vector) when the reduction loop is the inner one: a row's
// dot or sum over D runs at memory speed instead of one dependent add per element (4 cycles
// each on Zen 5: an MoE gate gradient's dots over 256 columns ran at a third of the
// bandwidth of the elementwise kernels around them).
//
// The order of the additions changes from the sequential one to the vectorizer's lanes, which
// the compiled code fixes: the bits do not depend on the thread count (threads split parallel
// loops only) or the run, and they stay within float32 rounding of the interpreter's. They may
// differ between machines with other vector widths (AVX2, AVX-512), as library GEMMs do.
// The GPU target has its own reductions (LowerGpuReductions) and does not run this pass.
//
//===----------------------------------------------------------------------===//
#include <functional>

#include "compiler/Codegen/LLVMCPU/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_REASSOCIATEREDUCTIONS
#include "compiler/Codegen/LLVMCPU/Passes.h.inc"

namespace {

// Whether the innermost loop (the last: linalg lowers to loops in dim order) is a reduction
// that every operand reading it reads along its last, contiguous dim. Only then does a vector
// of partial sums read contiguous lanes: over a strided dim (a column sum) the vectorizer would
// gather, which is slower than the scalar loop it replaces, and such a reduction's inner loop
// is parallel anyway after tiling.
bool innerContiguousReduction(mlir::linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  if (loops == 0 || op.getIteratorTypesArray().back() != mlir::utils::IteratorType::reduction)
    return false;
  unsigned inner = loops - 1;
  for (mlir::OpOperand *input : op.getDpsInputOperands()) {
    mlir::AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(inner)) continue;
    auto last = llvm::dyn_cast<mlir::AffineDimExpr>(map.getResults().back());
    if (!last || last.getPosition() != inner) return false;
    for (mlir::AffineExpr expr : map.getResults().drop_back())
      if (expr.isFunctionOfDim(inner)) return false;
  }
  // Loads by index in the payload (a gather: an MoE gate's dot over an expert's row) must read
  // along the inner loop too: the last index that loop's own index, the others fixed in it.
  // (Cross-entropy's pick of the target's logit reads one element per row: it stays scalar.)
  mlir::Block &body = op.getRegion().front();
  std::function<bool(mlir::Value)> variesInner = [&](mlir::Value v) {
    if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(v)) {
      if (arg.getOwner() != &body) return false;
      if (arg.getArgNumber() >= op.getNumDpsInputs()) return true;  // the accumulator
      return op.getMatchingIndexingMap(op.getDpsInputOperand(arg.getArgNumber()))
          .isFunctionOfDim(inner);
    }
    mlir::Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &body) return false;
    if (auto index = llvm::dyn_cast<mlir::linalg::IndexOp>(def)) return index.getDim() == inner;
    return llvm::any_of(def->getOperands(), variesInner);
  };
  auto contiguous = [&](mlir::ValueRange indices) {
    if (indices.empty()) return false;
    auto last = indices.back().getDefiningOp<mlir::linalg::IndexOp>();
    return last && last.getDim() == inner && llvm::none_of(indices.drop_back(), variesInner);
  };
  bool loadsContiguous = true;
  body.walk([&](mlir::Operation *inside) {
    if (auto load = llvm::dyn_cast<mlir::memref::LoadOp>(inside))
      loadsContiguous &= contiguous(load.getIndices());
    else if (auto extract = llvm::dyn_cast<mlir::tensor::ExtractOp>(inside))
      loadsContiguous &= contiguous(extract.getIndices());
  });
  return loadsContiguous;
}

struct ReassociateReductionsPass : impl::ReassociateReductionsBase<ReassociateReductionsPass> {
  void runOnOperation() override {
    getOperation().walk([](mlir::linalg::GenericOp op) {
      if (!innerContiguousReduction(op)) return;
      mlir::Block &body = op.getRegion().front();
      auto yield = llvm::cast<mlir::linalg::YieldOp>(body.getTerminator());
      for (auto [i, value] : llvm::enumerate(yield.getValues())) {
        mlir::BlockArgument acc = body.getArgument(op.getNumDpsInputs() + i);
        auto add = value.getDefiningOp<mlir::arith::AddFOp>();
        if (!add || (add.getLhs() != acc && add.getRhs() != acc)) continue;
        add.setFastmath(add.getFastmath() | mlir::arith::FastMathFlags::reassoc);
      }
    });
  }
};

}  // namespace

}  // namespace stepc::codegen
