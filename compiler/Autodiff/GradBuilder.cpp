//===- GradBuilder.cpp - building step ops with inferred types -----------===//
#include "compiler/Autodiff/GradBuilder.h"

#include <numeric>

namespace stepc::ad {

int64_t rankOf(mlir::Value v) { return llvm::cast<mlir::RankedTensorType>(v.getType()).getRank(); }

llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape();
}

mlir::Type elementTypeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getElementType();
}

bool isFloatTensor(mlir::Type type) {
  auto t = llvm::dyn_cast<mlir::RankedTensorType>(type);
  return t && llvm::isa<mlir::FloatType>(t.getElementType());
}

mlir::Value GradBuilder::splat(double value, mlir::Type type) {
  auto tensorType = llvm::cast<mlir::RankedTensorType>(type);
  mlir::Attribute element;
  if (auto ft = llvm::dyn_cast<mlir::FloatType>(tensorType.getElementType()))
    element = b.getFloatAttr(ft, value);
  else
    element = b.getIntegerAttr(tensorType.getElementType(), static_cast<int64_t>(value));
  auto dense = mlir::DenseElementsAttr::get(tensorType, element);
  return one<step::ConstantOp>({}, {attr("value", dense)});
}

mlir::Value GradBuilder::scalar(double value, mlir::Type elementType) {
  return splat(value, mlir::RankedTensorType::get({}, elementType));
}

mlir::Value GradBuilder::scale(mlir::Value a, double factor) {
  return mul(a, scalar(factor, elementTypeOf(a)));
}

mlir::Value GradBuilder::sum(mlir::Value x, llvm::ArrayRef<int64_t> axes, bool keepdim) {
  llvm::SmallVector<mlir::NamedAttribute> attrs{arrayAttr("axes", axes)};
  if (keepdim) attrs.push_back(unitAttr("keepdim"));
  return one<step::SumOp>({x}, attrs);
}

mlir::Value GradBuilder::mean(mlir::Value x, llvm::ArrayRef<int64_t> axes, bool keepdim) {
  llvm::SmallVector<mlir::NamedAttribute> attrs{arrayAttr("axes", axes)};
  if (keepdim) attrs.push_back(unitAttr("keepdim"));
  return one<step::MeanOp>({x}, attrs);
}

mlir::Value GradBuilder::reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
  if (shapeOf(x) == shape) return x;
  return one<step::ReshapeOp>({x}, {arrayAttr("shape", shape)});
}

mlir::Value GradBuilder::transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm) {
  return one<step::TransposeOp>({x}, {arrayAttr("perm", perm)});
}

mlir::Value GradBuilder::broadcastTo(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
  if (shapeOf(x) == shape) return x;
  return one<step::BroadcastOp>({x}, {arrayAttr("shape", shape)});
}

mlir::Value GradBuilder::reduceToShape(mlir::Value grad, mlir::Type target) {
  auto targetType = llvm::cast<mlir::RankedTensorType>(target);
  llvm::ArrayRef<int64_t> from = shapeOf(grad), to = targetType.getShape();
  if (from == to) return grad;
  // Leading dimensions that broadcasting added, then size-1 dimensions that it stretched.
  int64_t extra = static_cast<int64_t>(from.size()) - static_cast<int64_t>(to.size());
  llvm::SmallVector<int64_t> axes;
  for (int64_t i = 0; i < static_cast<int64_t>(from.size()); ++i)
    if (i < extra || (to[i - extra] == 1 && from[i] != 1)) axes.push_back(i);
  mlir::Value reduced = axes.empty() ? grad : sum(grad, axes);
  return reshape(reduced, to);
}

// byColumns: x is summed over every axis but the last into one partial sum per column,
// then the columns are summed. On the CPU a reduction to one scalar is a single chain of
// dependent adds (no vector lanes, one thread); the column sums are independent lanes that
// vectorise and split over threads, which made the global gradient norm of an MoE's experts
// (millions of elements) several times faster. A GPU splits the whole sum over its grid
// instead, so it keeps the plain form. Either order is fixed, so the bits are too.
mlir::Value GradBuilder::sumOfSquares(mlir::Value x, bool byColumns) {
  llvm::SmallVector<int64_t> all(rankOf(x));
  std::iota(all.begin(), all.end(), 0);
  if (all.empty()) return mul(x, x);
  int64_t columns = shapeOf(x).back(), count = 1;
  for (int64_t d : shapeOf(x)) count *= d;
  if (!byColumns || all.size() < 2 || columns < 16 || count / columns < 16)
    return sum(mul(x, x), all);
  // Every leading axis reduced at once, no reshape: the square (and whatever elementwise work
  // made x, such as adaptive SAM's T_w g) fuses into the column sums; a reshape between them
  // would make it a parameter-sized temporary.
  llvm::SmallVector<int64_t> leading(all.begin(), all.end() - 1);
  return sum(sum(mul(x, x), leading), {0});
}

}  // namespace stepc::ad
