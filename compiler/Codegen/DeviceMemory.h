//===- DeviceMemory.h - which buffers live in host memory, to fit the device -*- C++ -*-===//
//
// `stepc compile --device-memory=BYTES [--offload=planned|sync]`: when the step's planned peak
// (the static memory plan at `buffers`: arena, parameters, optimizer state, batch) exceeds
// the device's memory, the compiler keeps some of the stacked layers' parameters and
// optimizer state in host memory and streams them through the device layer by layer
// (--step-offload-buffers). Candidates are ordered by what streaming them costs per byte
// spared: optimizer state first (moved once per step, by the update), then parameters (read
// by every forward and backward pass, written by the update), largest first; the compiler
// takes the shortest prefix whose real planned peak fits, found by bisection over plans, so
// the device peak the plan reports is the one the step has. A device nothing fits is an error
// with the breakdown. The choice goes on the module as `step.offload` (the pass reads it) and
// its summary into the program description (`info`, `--emit=plan`).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_DEVICEMEMORY_H
#define STEPC_COMPILER_CODEGEN_DEVICEMEMORY_H

#include <cstdint>
#include <string>

#include "compiler/Codegen/Pipelines.h"

namespace stepc::codegen {

/// Chooses what of `module`'s step (at the `model` stage) lives in host memory so that its
/// planned device peak fits `deviceBytes`; `mode` is "planned" or "sync". Fails with a located
/// error and the breakdown when even streaming every candidate does not fit.
mlir::LogicalResult applyDeviceMemory(mlir::ModuleOp module, const StageOptions &options,
                                      int64_t deviceBytes, llvm::StringRef mode);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_DEVICEMEMORY_H
