//===- VjpModel.h - one external model per op from one function ---*- C++ -*-===//
//
// Each VJP is a plain function `LogicalResult vjpX(XOp, GradBuilder &, ArrayRef<Value> gy,
// SmallVectorImpl<Value> &gx)`; VjpModel adapts it to DifferentiableOpInterface.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_AUTODIFF_VJPMODEL_H
#define STEPC_COMPILER_AUTODIFF_VJPMODEL_H

#include "compiler/Autodiff/GradBuilder.h"

namespace stepc::ad {

template <typename OpTy>
using VjpFn = mlir::LogicalResult (*)(OpTy, GradBuilder &, llvm::ArrayRef<mlir::Value>,
                                      llvm::SmallVectorImpl<mlir::Value> &);

template <typename OpTy, VjpFn<OpTy> Fn>
struct VjpModel
    : public step::DifferentiableOpInterface::ExternalModel<VjpModel<OpTy, Fn>, OpTy> {
  mlir::LogicalResult buildVjp(mlir::Operation *op, mlir::OpBuilder &builder,
                               llvm::ArrayRef<mlir::Value> resultGrads,
                               llvm::SmallVectorImpl<mlir::Value> &operandGrads) const {
    GradBuilder gb(builder, op->getLoc());
    operandGrads.assign(op->getNumOperands(), mlir::Value());
    if (failed(Fn(llvm::cast<OpTy>(op), gb, resultGrads, operandGrads))) return mlir::failure();
    return mlir::failure(gb.failed());
  }
};

template <typename OpTy, VjpFn<OpTy> Fn>
void attachVjp(mlir::MLIRContext *ctx) {
  OpTy::template attachInterface<VjpModel<OpTy, Fn>>(*ctx);
}

void attachElementwiseVjps(mlir::MLIRContext *ctx);
void attachStructuredVjps(mlir::MLIRContext *ctx);
void attachRoutingVjps(mlir::MLIRContext *ctx);

}  // namespace stepc::ad

#endif  // STEPC_COMPILER_AUTODIFF_VJPMODEL_H
