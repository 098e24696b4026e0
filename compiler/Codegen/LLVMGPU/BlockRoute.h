//===- BlockRoute.h - the MoE routings as GPU block kernels -----*- C++ -*-===//
//
// Part of --step-kernels-to-gpu (KernelsToGpu.cpp). A GPU target lowers token choice's
// route_tokens (ParallelRoutingPatterns.cpp) to one kernel: a loop over the experts, marked
// `step.block_route`, in which expert e walks the k·T choices in priority order (q = j·T + t),
// counting those that name it, writing each one's slot (e·C + count, or −1 once full) and its
// choice into row e of the choices, then −1 past its count. Run as written, that is E·k·T
// dependent steps on one GPU thread. Here expert e is block e, 1024 threads, each a segment of
// ⌈k·T / 1024⌉ consecutive choices:
//   1. each thread counts its segment's choices of e;
//   2. the block's exclusive prefix of those counts: a warp scan with `gpu.shuffle up`, the
//      warps' totals through a 32-entry workgroup buffer (one barrier), then every warp scans
//      the 32 totals alike and takes its warp's prefix and the block's total with
//      `gpu.shuffle idx`;
//   3. each thread walks its segment again from its prefix, writing the slots and choices of
//      its hits (block 0 also writes −1 for choices naming no expert);
//   4. the threads write −1 into row e of the choices from the total up to C.
// The counts are integers: the same numbers as the sequential walk in any order, and no
// atomics. With top_k, token choice's forward routing is two kernels (issue 16's bound).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_BLOCKROUTE_H
#define STEPC_COMPILER_CODEGEN_BLOCKROUTE_H

#include "compiler/Codegen/LLVMGPU/BlockScan.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/LogicalResult.h"

namespace stepc::codegen {

// Replaces the `step.block_route` loop at the top level of `fn` by the block per expert above
// and returns the launch (E blocks of 1024 threads); std::nullopt when `fn` has no such loop;
// failure (reported at the loop) when the loop is not the lowering's shape.
mlir::FailureOr<std::optional<BlockScanLaunch>> mapBlockRoute(mlir::gpu::GPUFuncOp fn);

// Expert choice's routing (RoutingPatterns.cpp's loop nest in its block form, the experts'
// loop marked `step.block_route_experts`) as one block of 1024 threads, each owning a segment
// of ⌈T / 1024⌉ consecutive tokens (their counts, slots and experts), the experts in turn:
//   1. the C-th largest key among the eligible tokens (fewer than k experts so far), a byte a
//      round from the top (4 rounds): the matching keys' histogram of their next byte in
//      workgroup memory (integer atomic adds: the same counts in any order), its counts from
//      the top by a block scan, the bin where they reach what is still needed;
//   2. a block scan of each segment's tokens above that key and at it;
//   3. each thread's takes, in token order: above the key, or at it among the first C − above;
//   4. −1 in the expert's row past its takes.
// The CPU's halvings and this select find the same key (the largest with at least C eligible
// keys at or above it), so the numbers are the same. Returns the launch (one block), nullopt
// without such a loop, failure (reported) when the loop is not the lowering's shape.
mlir::FailureOr<std::optional<BlockScanLaunch>> mapBlockRouteExperts(mlir::gpu::GPUFuncOp fn);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_BLOCKROUTE_H
