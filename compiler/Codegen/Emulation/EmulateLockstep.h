//===- EmulateLockstep.h - a GPU block's threads in lock-step on the CPU --===//
//
// Part of --step-emulate-gpu (EmulateGpu.cpp), for kernels whose threads exchange values
// (gpu.barrier, gpu.shuffle: the block scan, and block reductions once lowered by
// --step-lower-gpu-reductions). The kernel's body is cut at its barriers into phases; each
// phase becomes a loop over the block's threads (marked `step.emulated_threads`, its induction
// variable the thread id), so every thread finishes a phase before any starts the next, as the
// barrier guarantees on the GPU. Barriers may also sit in an scf.for or scf.if without results
// whose bounds or condition are the same for all threads (a block reduction's row loop): that
// op runs once, with phases inside.
//
// A loop or branch around a barrier must take the same path in every thread of the block (a
// shuffle's: in every thread of the warp; here, of the block): the emulated program checks
// that its threads agree, and stops with a message if not.
//
// What this cannot see: a shuffle is emulated with block-wide barriers around it, stronger
// than the GPU's exchange within a warp, so a race between warps that a shuffle happens to
// separate goes unseen; within a phase the threads run in ascending order, so a thread reading
// what a lower thread wrote without a barrier gets the value here (the reverse order is
// caught); and blocks run one after another, so races between blocks are unseen too.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_EMULATELOCKSTEP_H
#define STEPC_COMPILER_CODEGEN_EMULATELOCKSTEP_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"

namespace stepc::codegen {

// The attribute on a phase's loop over the threads.
inline constexpr llvm::StringLiteral kEmulatedThreadsAttr = "step.emulated_threads";

// Whether `fn` has a barrier or a shuffle.
bool needsLockstep(mlir::gpu::GPUFuncOp fn);

// Rewrites each full-warp (width 32) gpu.shuffle of `fn` into a store of the value to a block
// buffer, a barrier, a load of the source lane's value and a barrier. Fails (with an error) on
// a shuffle of another width.
mlir::LogicalResult expandShuffles(mlir::gpu::GPUFuncOp fn);

// Emits `fn`'s body (arguments mapped in `map`) at `b` as phases over `threads` threads; the
// workgroup buffers become allocas, values used across a barrier are kept per thread. The
// gpu.thread_id ops inside are left for the caller, which maps them to the loops' variables.
mlir::LogicalResult emitLockstep(mlir::OpBuilder &b, mlir::gpu::GPUFuncOp fn, mlir::IRMapping &map,
                                 mlir::Value threads);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_EMULATELOCKSTEP_H
