//===- ConvolutionHelpers.h - pieces shared by the convolution lowerings -*- C++ -*-===//
#ifndef STEPC_COMPILER_CONVERSION_STEPTOLINALG_CONVOLUTIONHELPERS_H
#define STEPC_COMPILER_CONVERSION_STEPTOLINALG_CONVOLUTIONHELPERS_H

#include "mlir/IR/Builders.h"

namespace stepc::lowering {

/// `value` [B, S, C] with `left` and `right` zero rows on the sequence axis.
mlir::Value padSequence(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value, int64_t left,
                        int64_t right);
/// acc[(β,) m, n] += op(a)[(β,) m, k] · op(b)[(β,) k, n] as one linalg.generic contraction,
/// with a leading batch dim β when acc has rank 3 (a library GEMM, or a batch of them, once
/// bufferized).
mlir::Value matmulInto(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lhs, mlir::Value rhs,
                       mlir::Value acc, bool transLhs, bool transRhs);
/// wf[s, j, i] = w[K-1-s, i, j]: a [K, Cin, Cout] weight's taps reversed and transposed.
mlir::Value flippedTaps(mlir::OpBuilder &b, mlir::Location loc, mlir::Value weight);
/// Tap k of a [K, Cin, Cout] weight as [Cin, Cout].
mlir::Value tap(mlir::OpBuilder &b, mlir::Location loc, mlir::Value weight, int64_t k);
/// `value` [B, S, C] as rows [B·S, C].
mlir::Value rows(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value);

}  // namespace stepc::lowering

#endif  // STEPC_COMPILER_CONVERSION_STEPTOLINALG_CONVOLUTIONHELPERS_H
