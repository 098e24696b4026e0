//===- stepc-opt.cpp - mlir-opt for the step dialect ---------------------===//
//
// Parses, verifies, runs passes on and prints IR holding `step` ops; used by the lit tests
// (round trips, --verify-diagnostics, one test file per pass) and to read back any
// `stepc --emit` dump.
//
//===----------------------------------------------------------------------===//
#include "compiler/Autodiff/Passes.h"
#include "compiler/Autodiff/Vjp.h"
#include "compiler/Training/Passes.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<stepc::step::StepDialect, mlir::func::FuncDialect>();
  stepc::ad::registerVjpModels(registry);
  stepc::ad::registerAutodiffPasses();
  stepc::train::registerTrainingPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "stepc-opt: the step dialect's optimizer driver\n", registry));
}
