//===- Vjp.cpp - registering the vector-Jacobian products of step ops ----===//
#include "compiler/Autodiff/Vjp.h"

#include "compiler/Autodiff/VjpModel.h"

namespace stepc::ad {

void registerVjpModels(mlir::DialectRegistry &registry) {
  registry.addExtension(+[](mlir::MLIRContext *ctx, step::StepDialect *) {
    attachElementwiseVjps(ctx);
    attachStructuredVjps(ctx);
    attachRoutingVjps(ctx);
  });
}

}  // namespace stepc::ad
