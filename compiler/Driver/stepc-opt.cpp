//===- stepc-opt.cpp - mlir-opt for the step dialect ---------------------===//
//
// Parses, verifies, runs passes on and prints IR holding `step` ops; used by the lit tests
// (round trips, --verify-diagnostics, one test file per pass) and to read back any
// `stepc --emit` dump.
//
//===----------------------------------------------------------------------===//
#include "compiler/Autodiff/Passes.h"
#include "compiler/Autodiff/Vjp.h"
#include "compiler/Codegen/Pipelines.h"
#include "compiler/Training/Passes.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<stepc::step::StepDialect, mlir::func::FuncDialect>();
  // What --step-lower-to-linalg produces, so its output parses back in.
  registry.insert<mlir::arith::ArithDialect, mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::tensor::TensorDialect>();
  stepc::ad::registerVjpModels(registry);
  stepc::ad::registerAutodiffPasses();
  // Every stage's pipeline by name (stepc-linalg, stepc-buffers, stepc-ptx{gpu-arch=...}, ...),
  // stepc's passes and the upstream passes the pipelines name.
  stepc::codegen::registerCodegenDialects(registry);
  stepc::codegen::registerCodegenPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "stepc-opt: the step dialect's optimizer driver\n", registry));
}
