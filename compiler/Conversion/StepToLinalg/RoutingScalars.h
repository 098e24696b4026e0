//===- RoutingScalars.h - scalar code of the routing lowerings -*- C++ -*-===//
//
// The routing ops' lowerings (RoutingPatterns.cpp, the CPU's loops; ParallelRoutingPatterns.cpp,
// a GPU target's parallel forms) build their per-element code from these: integer arithmetic,
// selects instead of branches, and the scores' order-preserving integer key.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_CONVERSION_STEPTOLINALG_ROUTINGSCALARS_H
#define STEPC_COMPILER_CONVERSION_STEPTOLINALG_ROUTINGSCALARS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace stepc::lowering {

struct Scalars {
  mlir::OpBuilder &b;
  mlir::Location l;
  using Value = mlir::Value;
  using CmpI = mlir::arith::CmpIPredicate;
  Value i32(int64_t v) { return b.create<mlir::arith::ConstantIntOp>(l, v, 32); }
  Value i64(int64_t v) { return b.create<mlir::arith::ConstantIntOp>(l, v, 64); }
  Value index(int64_t v) { return b.create<mlir::arith::ConstantIndexOp>(l, v); }
  Value toI32(Value indexValue) {
    return b.create<mlir::arith::IndexCastOp>(l, b.getI32Type(), indexValue);
  }
  Value toIndex(Value v) { return b.create<mlir::arith::IndexCastOp>(l, b.getIndexType(), v); }
  Value cmp(CmpI p, Value x, Value y) { return b.create<mlir::arith::CmpIOp>(l, p, x, y); }
  Value select(Value c, Value x, Value y) { return b.create<mlir::arith::SelectOp>(l, c, x, y); }
  Value both(Value x, Value y) { return b.create<mlir::arith::AndIOp>(l, x, y); }
  Value either(Value x, Value y) { return b.create<mlir::arith::OrIOp>(l, x, y); }
  Value add(Value x, Value y) { return b.create<mlir::arith::AddIOp>(l, x, y); }
  Value sub(Value x, Value y) { return b.create<mlir::arith::SubIOp>(l, x, y); }
  Value mul(Value x, Value y) { return b.create<mlir::arith::MulIOp>(l, x, y); }
  Value minI(Value x, Value y) { return b.create<mlir::arith::MinSIOp>(l, x, y); }
  Value maxI(Value x, Value y) { return b.create<mlir::arith::MaxSIOp>(l, x, y); }
  Value widen(Value flag) { return b.create<mlir::arith::ExtUIOp>(l, b.getI32Type(), flag); }
  Value get(Value t, mlir::ValueRange at) { return b.create<mlir::tensor::ExtractOp>(l, t, at); }
  Value put(Value v, Value t, mlir::ValueRange at) {
    return b.create<mlir::tensor::InsertOp>(l, v, t, at);
  }
  // t[at] = cond ? v : t[at].
  Value putIf(Value cond, Value v, Value t, mlir::ValueRange at) {
    return put(select(cond, v, get(t, at)), t, at);
  }
  // An f32 score's order-preserving key, sign-extended to i64: its bits, the negative ones'
  // magnitude bits flipped, compare as signed integers in the floats' order (NaN above all).
  Value key(Value score) {
    Value bits = b.create<mlir::arith::BitcastOp>(l, b.getI32Type(), score);
    Value flipped = b.create<mlir::arith::XOrIOp>(l, bits, i32(0x7fffffff));
    Value ordered = select(cmp(CmpI::slt, bits, i32(0)), flipped, bits);
    return b.create<mlir::arith::ExtSIOp>(l, b.getI64Type(), ordered);
  }
};

// scf.for iv in [0, n) carrying `init`, marked `step.scan` (outlined whole as one kernel,
// OutlineKernels.cpp). Every loop of a nest is marked: canonicalization inlines a loop of one
// iteration (k = 1, one expert), and the next loop in must still be outlined as the kernel
// (left in the host function, it would run on the host, on a GPU's device pointers).
// Outlining takes the outermost marked loop.
using ScanLoopBody = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Location, mlir::Value, mlir::ValueRange)>;
inline mlir::scf::ForOp scanLoop(mlir::OpBuilder &b, mlir::Location l, int64_t n,
                                 mlir::ValueRange init, ScanLoopBody body) {
  mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(l, 0);
  mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(l, 1);
  mlir::Value upper = b.create<mlir::arith::ConstantIndexOp>(l, n);
  auto result = b.create<mlir::scf::ForOp>(
      l, zero, upper, one, init,
      [&](mlir::OpBuilder &bb, mlir::Location ll, mlir::Value iv, mlir::ValueRange carried) {
        bb.create<mlir::scf::YieldOp>(ll, body(bb, ll, iv, carried));
      });
  result->setAttr("step.scan", b.getUnitAttr());
  return result;
}

inline mlir::RankedTensorType typeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

// A routing's sizes, from its results choices [E, C] and slots [T, k].
struct RoutingShape {
  int64_t experts, capacity, tokens, k;
  static RoutingShape of(mlir::Value choices, mlir::Value slots) {
    auto c = llvm::cast<mlir::RankedTensorType>(choices.getType());
    auto s = llvm::cast<mlir::RankedTensorType>(slots.getType());
    return {c.getDimSize(0), c.getDimSize(1), s.getDimSize(0), s.getDimSize(1)};
  }
};

}  // namespace stepc::lowering

#endif  // STEPC_COMPILER_CONVERSION_STEPTOLINALG_ROUTINGSCALARS_H
