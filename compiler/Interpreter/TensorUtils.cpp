//===- TensorUtils.cpp - indexing and rounding helpers of the interpreter -===//
#include "compiler/Interpreter/TensorUtils.h"

#include <cmath>
#include <cstring>

#include "llvm/ADT/APFloat.h"

namespace stepc::interp {

Tensor Tensor::zeros(mlir::RankedTensorType type) { return filled(type, 0.0); }

Tensor Tensor::filled(mlir::RankedTensorType type, double value) {
  return Tensor{type, std::vector<double>(elementCount(type.getShape()), value)};
}

llvm::SmallVector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

int64_t elementCount(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

std::vector<int64_t> broadcastIndices(llvm::ArrayRef<int64_t> inShape,
                                      llvm::ArrayRef<int64_t> outShape) {
  size_t rank = outShape.size(), offset = rank - inShape.size();
  // Stride of each output dimension in the input: 0 where the input is stretched or absent.
  llvm::SmallVector<int64_t> inStrides = rowMajorStrides(inShape), strides(rank, 0);
  for (size_t d = offset; d < rank; ++d)
    strides[d] = inShape[d - offset] == 1 ? 0 : inStrides[d - offset];
  std::vector<int64_t> indices(elementCount(outShape));
  llvm::SmallVector<int64_t> counter(rank, 0);
  int64_t in = 0;
  for (int64_t &out : indices) {
    out = in;
    // Odometer increment of the output index, keeping the input index in step.
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      in += strides[d];
      if (++counter[d] < outShape[d]) break;
      in -= strides[d] * outShape[d];
      counter[d] = 0;
    }
  }
  return indices;
}

AxisView axisView(llvm::ArrayRef<int64_t> shape, int64_t axis) {
  AxisView view;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis) view.outer *= shape[d];
    else if (d == axis) view.size = shape[d];
    else view.inner *= shape[d];
  }
  return view;
}

int64_t positiveAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

bool isFloatElement(mlir::Type type) { return llvm::isa<mlir::FloatType>(type); }

namespace {

// Round-to-nearest-even of an f32 to its upper 16 bits (bf16), NaN kept quiet.
double roundF32ToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (std::isnan(value)) {
    bits = (bits | 0x00400000u) & 0xFFFF0000u;
  } else {
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    bits &= 0xFFFF0000u;
  }
  float rounded;
  std::memcpy(&rounded, &bits, sizeof rounded);
  return rounded;
}

double roundF32ToF16(float value) {
  llvm::APFloat half(value);
  bool losesInfo;
  half.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return half.convertToDouble();
}

}  // namespace

double roundToElementType(double value, mlir::Type elementType) {
  if (elementType.isF32()) return static_cast<float>(value);
  if (elementType.isBF16()) return roundF32ToBF16(static_cast<float>(value));
  if (elementType.isF16()) return roundF32ToF16(static_cast<float>(value));
  return value;
}

void roundToElementType(Tensor &tensor) {
  mlir::Type element = tensor.type.getElementType();
  if (!isFloatElement(element) || element.isF64()) return;
  for (double &v : tensor.data) v = roundToElementType(v, element);
}

}  // namespace stepc::interp
