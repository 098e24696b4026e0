//===- TensorUtils.h - indexing and rounding helpers of the interpreter -*- C++ -*-===//
//
// Row-major index arithmetic shared by the op kernels, and rounding of float64 values to the
// element types `step` declares (f32, bf16, f16).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_INTERPRETER_TENSORUTILS_H
#define STEPC_COMPILER_INTERPRETER_TENSORUTILS_H

#include <vector>

#include "compiler/Interpreter/Interpreter.h"

namespace stepc::interp {

/// Row-major strides of `shape` (the last dimension has stride 1).
llvm::SmallVector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape);

/// The number of elements of `shape` (1 for a scalar).
int64_t elementCount(llvm::ArrayRef<int64_t> shape);

/// For every element of `outShape` in row-major order, the linear index of the element of a
/// tensor of `inShape` that NumPy broadcasting maps to it. `inShape` must broadcast to it.
std::vector<int64_t> broadcastIndices(llvm::ArrayRef<int64_t> inShape,
                                      llvm::ArrayRef<int64_t> outShape);

/// A tensor seen as [outer, size, inner] around one axis: element (o, k, i) is at
/// (o * size + k) * inner + i. Reductions and scans along an axis iterate this way.
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
  int64_t at(int64_t o, int64_t k, int64_t i) const { return (o * size + k) * inner + i; }
};
AxisView axisView(llvm::ArrayRef<int64_t> shape, int64_t axis);

/// `axis` in [-rank, rank) as a non-negative axis (ops were verified, so it is in range).
int64_t positiveAxis(int64_t axis, int64_t rank);

/// The nearest value of `elementType`: f32 by a float cast; bf16 and f16 by rounding that f32
/// to nearest even (as a compiled f32 kernel storing a narrower type does); f64 and integer
/// types unchanged.
double roundToElementType(double value, mlir::Type elementType);

/// Rounds every element of a float tensor to its element type.
void roundToElementType(Tensor &tensor);

/// True for f16, bf16, f32, f64.
bool isFloatElement(mlir::Type type);

}  // namespace stepc::interp

#endif  // STEPC_COMPILER_INTERPRETER_TENSORUTILS_H
