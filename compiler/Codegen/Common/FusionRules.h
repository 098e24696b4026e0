//===- FusionRules.h - what moving a producer to its readers must respect -*- C++ -*-===//
//
// --step-fuse-elementwise (clones of cheap producers) and --step-fuse-into-gathers (producers
// computed at their gathers' reads) both move a computation from where its producer was to
// where it is read. These are the checks they share.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_COMMON_FUSIONRULES_H
#define STEPC_COMPILER_CODEGEN_COMMON_FUSIONRULES_H

#include <algorithm>
#include <limits>

#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace stepc::codegen {

/// A loop's carried value: --step-carry-in-place later writes the next iteration's value into
/// its buffer right after the kernel that computes it, when nothing reads the old one after
/// that; a computation moved to a later reader would (and cost a copy of the carried buffer
/// per iteration, 8 MiB a layer for byte_lm_small's f64 streams).
inline bool isLoopCarried(mlir::Value v) {
  auto arg = llvm::dyn_cast<mlir::BlockArgument>(v);
  return arg && llvm::isa<mlir::LoopLikeOpInterface>(arg.getOwner()->getParentOp());
}

/// Whether `op` is inside a loop marked `step.scan` (a kernel that is a loop nest of scalar
/// loads and stores: the CPU's routing loops, OutlineKernels.cpp) that runs as written: a
/// tensor.extract there reads one element, as a gather's does. Not inside a GPU's routing nest
/// (`step.block_route*`), which BlockRoute.cpp replaces whole, finding its buffers by the loads
/// it expects: a producer computed at its reads would be dropped there.
inline bool insideScan(mlir::Operation *op) {
  bool scan = false;
  for (mlir::Operation *parent = op->getParentOp(); parent; parent = parent->getParentOp()) {
    if (parent->hasAttr("step.block_route") || parent->hasAttr("step.block_route_experts"))
      return false;
    scan |= parent->hasAttr("step.scan");
  }
  return scan;
}

/// How many times `op` runs each time the op of `block` that holds it runs: the product of the
/// trip counts of the scf.for loops around it up to `block` (unknown bounds: too many). A
/// producer computed at a read in a scan loop must not run more often than it has elements:
/// route_experts' bisection reads each score 33 times per expert.
inline int64_t runsPer(mlir::Operation *op, mlir::Block *block) {
  int64_t runs = 1;
  for (mlir::Operation *parent = op->getParentOp(); parent; parent = parent->getParentOp()) {
    if (auto loop = llvm::dyn_cast<mlir::scf::ForOp>(parent)) {
      std::optional<int64_t> lo = mlir::getConstantIntValue(loop.getLowerBound()),
                             hi = mlir::getConstantIntValue(loop.getUpperBound()),
                             step = mlir::getConstantIntValue(loop.getStep());
      if (!lo || !hi || !step || *step <= 0) return std::numeric_limits<int64_t>::max();
      runs *= std::max<int64_t>(0, (*hi - *lo + *step - 1) / *step);
    }
    if (parent->getBlock() == block) break;
  }
  return runs;
}

/// The bytes of a tensor type; a dynamic shape counts as too large to move.
inline int64_t tensorBytes(mlir::Type type) {
  auto t = llvm::cast<mlir::RankedTensorType>(type);
  if (!t.hasStaticShape()) return std::numeric_limits<int64_t>::max() / 2;
  return t.getNumElements() * std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
}

/// Whether an op after `from` and before `to` (an op of `from`'s block) writes into one of
/// `values` as a destination (a value copied into a loop's iteration argument in place): a
/// computation moved from `from` to `to` would read the new contents.
inline bool writtenBetween(const llvm::SmallPtrSetImpl<mlir::Value> &values, mlir::Operation *from,
                           mlir::Operation *to) {
  for (mlir::Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode()) {
    auto dps = llvm::dyn_cast<mlir::DestinationStyleOpInterface>(op);
    if (!dps) continue;
    for (mlir::OpOperand &init : dps.getDpsInitsMutable())
      if (values.contains(init.get())) return true;
  }
  return false;
}

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_COMMON_FUSIONRULES_H
