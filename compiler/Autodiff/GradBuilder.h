//===- GradBuilder.h - building step ops with inferred types ----*- C++ -*-===//
//
// Autodiff and train-step assembly emit many small step ops. GradBuilder creates them with
// result types from the ops' own shape rules, so emitted IR is valid by construction; a rule that
// rejects an emitted op (a compiler bug) is reported at the location and remembered in failed().
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_AUTODIFF_GRADBUILDER_H
#define STEPC_COMPILER_AUTODIFF_GRADBUILDER_H

#include "dialects/step/IR/StepDialect.h"
#include "mlir/IR/Builders.h"

namespace stepc::ad {

class GradBuilder {
 public:
  GradBuilder(mlir::OpBuilder &builder, mlir::Location loc) : b(builder), loc(loc) {}

  /// Creates OpTy from operands and attributes, inferring its result types.
  template <typename OpTy>
  mlir::Operation *create(mlir::ValueRange operands,
                          llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    mlir::OperationState state(loc, OpTy::getOperationName());
    state.addOperands(operands);
    state.addAttributes(attrs);
    state.name.populateDefaultAttrs(state.attributes);
    llvm::SmallVector<mlir::Type> types;
    typename OpTy::Adaptor adaptor(operands, state.attributes.getDictionary(b.getContext()));
    if (mlir::failed(OpTy::inferReturnTypes(b.getContext(), loc, adaptor, types))) {
      failed_ = true;
      types.clear();
      // Keep going with a well-formed placeholder so callers need no null checks; the pass fails.
      for (unsigned i = 0, e = expectedResults<OpTy>(); i < e; ++i)
        types.push_back(mlir::RankedTensorType::get({}, b.getF32Type()));
    }
    state.addTypes(types);
    return b.create(state);
  }
  template <typename OpTy>
  mlir::Value one(mlir::ValueRange operands, llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    return create<OpTy>(operands, attrs)->getResult(0);
  }

  bool failed() const { return failed_; }
  mlir::OpBuilder &builder() { return b; }
  mlir::Location location() const { return loc; }
  mlir::NamedAttribute attr(llvm::StringRef name, mlir::Attribute value) {
    return b.getNamedAttr(name, value);
  }
  mlir::NamedAttribute i64Attr(llvm::StringRef name, int64_t v) {
    return attr(name, b.getI64IntegerAttr(v));
  }
  mlir::NamedAttribute f64Attr(llvm::StringRef name, double v) {
    return attr(name, b.getF64FloatAttr(v));
  }
  mlir::NamedAttribute arrayAttr(llvm::StringRef name, llvm::ArrayRef<int64_t> v) {
    return attr(name, b.getI64ArrayAttr(v));
  }
  mlir::NamedAttribute unitAttr(llvm::StringRef name) { return attr(name, b.getUnitAttr()); }

  // Elementwise arithmetic (broadcasting).
  mlir::Value add(mlir::Value a, mlir::Value c) { return one<step::AddOp>({a, c}); }
  mlir::Value sub(mlir::Value a, mlir::Value c) { return one<step::SubOp>({a, c}); }
  mlir::Value mul(mlir::Value a, mlir::Value c) { return one<step::MulOp>({a, c}); }
  mlir::Value div(mlir::Value a, mlir::Value c) { return one<step::DivOp>({a, c}); }
  mlir::Value neg(mlir::Value a) { return one<step::NegOp>({a}); }
  mlir::Value compare(mlir::Value a, mlir::Value c, llvm::StringRef predicate) {
    return one<step::CompareOp>({a, c}, {attr("predicate", b.getStringAttr(predicate))});
  }
  mlir::Value select(mlir::Value cond, mlir::Value t, mlir::Value f) {
    return one<step::SelectOp>({cond, t, f});
  }
  /// A rank-0 constant of `elementType`.
  mlir::Value scalar(double value, mlir::Type elementType);
  /// A splat constant of `type`.
  mlir::Value splat(double value, mlir::Type type);
  mlir::Value zerosLike(mlir::Type type) { return splat(0.0, type); }
  mlir::Value scale(mlir::Value a, double factor);

  // Reductions and shapes.
  mlir::Value sum(mlir::Value x, llvm::ArrayRef<int64_t> axes, bool keepdim = false);
  mlir::Value mean(mlir::Value x, llvm::ArrayRef<int64_t> axes, bool keepdim = false);
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm);
  mlir::Value broadcastTo(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  /// Sums a broadcast gradient back to `target`'s shape (the adjoint of NumPy broadcasting).
  mlir::Value reduceToShape(mlir::Value grad, mlir::Type target);
  /// Sum of squares of every element: a rank-0 tensor.
  /// `byColumns`: x viewed as [rows, last] is summed over the rows first (see the .cpp).
  mlir::Value sumOfSquares(mlir::Value x, bool byColumns = false);

 private:
  template <typename OpTy>
  static unsigned expectedResults() {
    return 1;
  }

  mlir::OpBuilder &b;
  mlir::Location loc;
  bool failed_ = false;
};

/// The rank of a ranked tensor value.
int64_t rankOf(mlir::Value v);
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
mlir::Type elementTypeOf(mlir::Value v);
bool isFloatTensor(mlir::Type type);

}  // namespace stepc::ad

#endif  // STEPC_COMPILER_AUTODIFF_GRADBUILDER_H
