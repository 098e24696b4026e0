//===- MergeSlices.cpp - --step-merge-slices ------------------------------===//
//
// An extract_slice that repeats one dominating it (same source, offsets, sizes and strides)
// is replaced by it. The case that matters: a layer's update in a loop over stacked params
// and optimizer state reads this layer's slice (`p = extract %stack[i]`) and, once
// --eliminate-empty-tensors has made the slice its output, writes a second extract_slice of
// the same rows (`outs(extract %stack[i])`). One-shot bufferization lets an elementwise op
// write over what it reads only when the read and the written operand are the same value (or
// equivalent ones); two slices of the same rows are merely aliases, so it copied every layer's
// param, m and v out of the stack before the update (byte_lm: three 21 MiB copies a layer,
// ~20 ms of a 0.5 s step, and with --device-memory the copies read the prefetched slots at the
// top of the loop, so the step waited there for every transfer of the layer). One value for
// both makes the update in place. It runs after --eliminate-empty-tensors, which makes the
// second slice, and not as a general CSE, which would also merge the fills and empty tensors
// that --step-clone-fills and --step-update-in-place give each kernel of its own.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_MERGESLICES
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

bool sameList(llvm::ArrayRef<mlir::OpFoldResult> a, llvm::ArrayRef<mlir::OpFoldResult> b) {
  if (a.size() != b.size()) return false;
  for (auto [x, y] : llvm::zip(a, b))
    if (!mlir::isEqualConstantIntOrValue(x, y)) return false;
  return true;
}

bool sameSlice(mlir::tensor::ExtractSliceOp a, mlir::tensor::ExtractSliceOp b) {
  return a.getType() == b.getType() && sameList(a.getMixedOffsets(), b.getMixedOffsets()) &&
         sameList(a.getMixedSizes(), b.getMixedSizes()) &&
         sameList(a.getMixedStrides(), b.getMixedStrides());
}

struct MergeSlices : impl::MergeSlicesBase<MergeSlices> {
  void runOnOperation() override {
    mlir::DominanceInfo dominance(getOperation());
    llvm::DenseMap<mlir::Value, llvm::SmallVector<mlir::tensor::ExtractSliceOp>> bySource;
    llvm::SmallVector<mlir::tensor::ExtractSliceOp> merged;
    // Pre-order: an op is visited after every op that dominates it.
    getOperation().walk<mlir::WalkOrder::PreOrder>([&](mlir::tensor::ExtractSliceOp slice) {
      auto &earlier = bySource[slice.getSource()];
      for (mlir::tensor::ExtractSliceOp first : earlier)
        if (sameSlice(first, slice) && dominance.properlyDominates(first.getOperation(), slice)) {
          slice.getResult().replaceAllUsesWith(first.getResult());
          merged.push_back(slice);
          return;
        }
      earlier.push_back(slice);
    });
    for (mlir::tensor::ExtractSliceOp slice : merged) slice.erase();
  }
};

}  // namespace
}  // namespace stepc::codegen
