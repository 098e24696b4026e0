//===- ScanLoop.h - a cumsum's loop, recognised and split ----*- C++ -*-===//
//
// A cumsum lowers to an scf.for marked `step.scan` (ScanPatterns.cpp) that, bufferized, reads
// `state += x[..., at, ...]; y[..., at, ...] = state` for at = s (or trip - 1 - s from the
// end), on slices with the state's shape (1 along the axis). The backends map such a loop as a
// whole: the GPU as a block scan (BlockScan.h), the CPU split over its independent columns
// (splitScanOverForall, for --step-parallelize-kernels' threads).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_SCANLOOP_H
#define STEPC_COMPILER_CODEGEN_SCANLOOP_H

#include <optional>

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace stepc::codegen {

struct ScanLoop {
  mlir::Value x, y, state;           // x and y: [..., length, ...]; state: 1 along the axis
  mlir::Type element;                // f32, or i32 (an MoE routing's counts)
  llvm::SmallVector<int64_t> shape;  // the state's
  int64_t axis = -1, length = 0;
  bool reverse = false;
  mlir::linalg::GenericOp add;       // state += x slice
  mlir::linalg::CopyOp copy;         // y slice = state
};

// The parts of an f32 or i32 cumsum loop (a constant trip count, an add of one slice into the running
// sum and a copy of the sum into the result's slice at the same position), or std::nullopt.
std::optional<ScanLoop> matchScanLoop(mlir::scf::ForOp loop);

// Rewrites the loop as an scf.forall over the state's first non-axis dimension longer than 1,
// each iteration the same scan on its slice of the columns; fails (nothing changed) when
// there is no such dimension.
mlir::LogicalResult splitScanOverForall(mlir::scf::ForOp loop, ScanLoop scan);

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_SCANLOOP_H
