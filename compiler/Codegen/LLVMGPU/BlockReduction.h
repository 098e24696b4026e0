//===- BlockReduction.h - a row reduction shared by a GPU block's threads -===//
//
// Part of --step-kernels-to-gpu (KernelsToGpu.cpp). A kernel whose linalg op reduces along its
// innermost loop (row sums, norms, softmax's max and sum, cross-entropy's log-sum-exp, the
// gradient norm's sum of squares) maps better to a block per row than to a thread per row:
// the rows of the block's tile are taken one after another, and for each, thread t combines
// the elements t, t + blockDim, ... (consecutive threads read consecutive elements), then
// `gpu.all_reduce` combines the threads' partials (warp shuffles and shared memory, see
// --step-lower-gpu-reductions) and thread 0 folds the total into the output element. Its
// `scf.if` is marked `step.block_owner`, so --step-emulate-gpu can run the threads one after
// another (each folding its own partial in).
//
// A single row of 2^16 elements or more (the sum of squares of a whole gradient, a loss's
// mean) would leave all but one SM idle. It is split over the grid instead: the grid's threads
// take its elements in turn, each block folds its total into its entry of a device buffer of
// partials (`@<kernel>_partials`, a memref.global of the kernel module holding the identity),
// and a second kernel, `<kernel>_finish`, launched right after, combines the partials in a
// fixed order (strided per thread, then the block's butterfly: the same result every run,
// unlike atomics), puts the identity back and folds the total into the output. (LLVM writes
// an initial splat of -0 as zeros, so a sum's partials start at +0 until the first finish:
// only a row of nothing but -0 then sums to +0.) The partials are the kernel's own global
// state: launches of one kernel must not overlap (one stream: each is followed by its finish).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_BLOCKREDUCTION_H
#define STEPC_COMPILER_CODEGEN_BLOCKREDUCTION_H

#include <optional>

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace stepc::codegen {

// The attribute on the scf.if in which thread 0 writes a block reduction's total.
inline constexpr llvm::StringLiteral kBlockOwnerAttr = "step.block_owner";

// The launch a block reduction needs: threads per block, and (with gridRows) the blocks the
// rows are spread over (-1: not static, launch the most).
struct BlockReductionLaunch {
  int64_t threads = 0;
  int64_t rows = 1;
  // A split row: the kernel leaves a partial per block; this kernel (one block of
  // finishThreads threads, the same arguments) combines them into the output after it.
  mlir::gpu::GPUFuncOp finish;
  int64_t finishThreads = 0;
};

// Replaces `op` by the block-shared reduction above; std::nullopt (nothing changed) when `op`
// is not a single f32 reduction along its innermost loop with one recognised combiner (addf,
// mulf, min/max), or when that reduction is statically shorter than a warp. With `gridRows`
// (an untiled kernel, whose block id is free) the rows are spread over the grid's blocks
// (block b takes rows b, b + gridDim, ...) instead of all running in one block. `maxBlocks`
// bounds a grid (maxGridBlocks of the --gpu-arch, GpuTargets.h).
std::optional<BlockReductionLaunch> mapBlockReduction(mlir::OpBuilder &b,
                                                      mlir::linalg::LinalgOp op, bool gridRows,
                                                      int64_t maxBlocks);

// The combiner's gpu.all_reduce kind, for the ops mapBlockReduction accepts.
std::optional<mlir::gpu::AllReduceOperation> reductionKind(mlir::Operation *combiner);

// The combiner's neutral element (-0, 1, -inf / +inf for maximumf / minimumf, NaN for
// maxnumf / minnumf, which ignore it) and the combining op itself.
mlir::Value reductionIdentity(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::gpu::AllReduceOperation kind, mlir::Type type);
mlir::Value combine(mlir::OpBuilder &b, mlir::Location loc, mlir::gpu::AllReduceOperation kind,
                    mlir::Value lhs, mlir::Value rhs);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_BLOCKREDUCTION_H
