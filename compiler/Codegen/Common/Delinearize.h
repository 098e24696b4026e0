//===- Delinearize.h - a linear index back to loop indices ------*- C++ -*-===//
//
// Kernels run the iterations of a multi-dimensional loop (an scf.forall of tiles, an
// scf.parallel of elements) from one linear index: a CPU thread's range, a GPU block or thread.
// This turns that index back into the loop's indices, innermost dimension fastest (the loop's
// own order), for constant bounds or sizes given as values; and moves the loop's body to where
// that index is.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CODEGEN_DELINEARIZE_H
#define STEPC_COMPILER_CODEGEN_DELINEARIZE_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace stepc::codegen {

/// Trip counts of a loop with constant bounds, or none if one is not constant.
inline std::optional<llvm::SmallVector<int64_t>> tripCounts(llvm::ArrayRef<int64_t> lbs,
                                                            llvm::ArrayRef<int64_t> ubs,
                                                            llvm::ArrayRef<int64_t> steps) {
  llvm::SmallVector<int64_t> trips;
  for (size_t d = 0; d < lbs.size(); ++d) {
    if (mlir::ShapedType::isDynamic(lbs[d]) || mlir::ShapedType::isDynamic(ubs[d]) ||
        mlir::ShapedType::isDynamic(steps[d]) || steps[d] <= 0)
      return std::nullopt;
    trips.push_back(std::max<int64_t>(0, (ubs[d] - lbs[d] + steps[d] - 1) / steps[d]));
  }
  return trips;
}

/// The loop indices lb + step · i_d of linear iteration `linear`.
inline llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b, mlir::Location loc,
                                                  mlir::Value linear,
                                                  llvm::ArrayRef<int64_t> trips,
                                                  llvm::ArrayRef<int64_t> lbs,
                                                  llvm::ArrayRef<int64_t> steps) {
  mlir::Value rest = linear;
  llvm::SmallVector<mlir::Value> ivs(trips.size());
  for (int d = static_cast<int>(trips.size()) - 1; d >= 0; --d) {
    mlir::Value index = rest;
    if (d > 0) {
      mlir::Value trip = b.create<mlir::arith::ConstantIndexOp>(loc, trips[d]);
      index = b.create<mlir::arith::RemUIOp>(loc, rest, trip);
      rest = b.create<mlir::arith::DivUIOp>(loc, rest, trip);
    }
    if (steps[d] != 1)
      index = b.create<mlir::arith::MulIOp>(
          loc, index, b.create<mlir::arith::ConstantIndexOp>(loc, steps[d]));
    if (lbs[d] != 0)
      index = b.create<mlir::arith::AddIOp>(
          loc, index, b.create<mlir::arith::ConstantIndexOp>(loc, lbs[d]));
    ivs[d] = index;
  }
  return ivs;
}

/// `linear` split into indices 0 <= i_d < sizes[d] (innermost fastest), for sizes known only
/// as values (a partial tile's extents, a reduction's lengths).
inline llvm::SmallVector<mlir::Value> split(mlir::OpBuilder &b, mlir::Location loc,
                                            mlir::Value linear,
                                            llvm::ArrayRef<mlir::Value> sizes) {
  llvm::SmallVector<mlir::Value> ivs(sizes.size());
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    if (d == 0) {
      ivs[d] = linear;
      break;
    }
    ivs[d] = b.create<mlir::arith::RemUIOp>(loc, linear, sizes[d]);
    linear = b.create<mlir::arith::DivUIOp>(loc, linear, sizes[d]);
  }
  return ivs;
}

/// Moves the body of a loop without results (an scf.forall or scf.parallel on buffers) to just
/// before `before`, its induction variables replaced by `ivs`, drops the body's terminator
/// (an empty scf.forall.in_parallel or scf.reduce) and erases the loop.
inline void inlineLoopBody(mlir::Operation *loop, mlir::Block *body, mlir::ValueRange ivs,
                           mlir::Operation *before) {
  for (auto [arg, iv] : llvm::zip(body->getArguments(), ivs)) arg.replaceAllUsesWith(iv);
  body->getTerminator()->erase();
  before->getBlock()->getOperations().splice(before->getIterator(), body->getOperations());
  loop->erase();
}

}  // namespace stepc::codegen

#endif  // STEPC_COMPILER_CODEGEN_DELINEARIZE_H
