//===- BlockScan.h - a cumsum's scan shared by a GPU block's warps --------===//
//
// Part of --step-kernels-to-gpu (KernelsToGpu.cpp). A cumsum is one scan kernel (its loop,
// outlined whole: `state += x[..., s, ...]; y[..., s, ...] = state` for s along the axis).
// Giving each GPU thread one column's whole sequential scan leaves the GPU mostly idle (byte_lm_residual:
// 8192 columns, 256 steps each). Here a block of 32 warps takes 32 columns and splits the axis
// into 32 segments, a warp per segment and a lane per column (a warp reads 32 consecutive
// floats when the axis is not the innermost dimension and the innermost one has 32 or more
// columns, as in byte_lm_residual's cumsum over the sequence; a cumsum over the last axis reads with
// a stride):
//   1. each thread sums its segment of its column; the totals go to a 32 x 33 workgroup
//      buffer (padded against bank conflicts); barrier;
//   2. warp w scans column w's 32 segment totals across its lanes with `gpu.shuffle up`
//      (offsets 1, 2, 4, 8, 16, then 1 more for the exclusive prefix), lane 0 adding the
//      column's running sum from before the kernel; the prefixes go back to the buffer; barrier;
//   3. each thread re-runs its segment from its prefix, writing the result; the thread of the
//      last segment leaves the total in the running sum, as the sequential loop does.
// Reads of x: 2 per element (phases 1 and 3); parallelism: 32 x the columns.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_BLOCKSCAN_H
#define STEPC_COMPILER_CODEGEN_BLOCKSCAN_H

#include <optional>

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace stepc::codegen {

// The launch of a block scan: 1024 threads (32 warps) per block.
struct BlockScanLaunch {
  int64_t blocks = 0;
  int64_t threads = 0;
};

// Replaces the `step.scan` loop at the top level of `fn` by the block scan above and returns
// its launch; std::nullopt (nothing changed) when the loop is not an f32 or i32 cumsum's (a
// constant trip count, an add of one slice into the running sum and a copy of the sum into the
// result's slice at the same position, forwards or from the end). The i32 one is token
// choice's count of each expert's earlier choices (ParallelRoutingPatterns.cpp): E columns of
// k·T steps, which one thread per column ran one after the other.
std::optional<BlockScanLaunch> mapBlockScan(mlir::gpu::GPUFuncOp fn);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_BLOCKSCAN_H
