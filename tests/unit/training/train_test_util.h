// Helpers of the train-step tests: build the `train` stage of a model given as text, and run it
// in the reference interpreter. Expected values are computed in the tests themselves.
#ifndef STEPC_TESTS_UNIT_TRAINING_TRAIN_TEST_UTIL_H
#define STEPC_TESTS_UNIT_TRAINING_TRAIN_TEST_UTIL_H

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/Autodiff/Passes.h"
#include "compiler/Autodiff/Vjp.h"
#include "compiler/Reference/InterpretedTrainer.h"
#include "compiler/Training/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

namespace stepc::testing {

struct Compiled {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string diagnostics;
};

inline std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  registry.insert<step::StepDialect, mlir::func::FuncDialect>();
  ad::registerVjpModels(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

/// Parses `modelText` and builds its train step (`options` as for --step-build-train-step).
inline Compiled compileTrain(const std::string &modelText,
                             train::BuildTrainStepOptions options = {}) {
  Compiled c;
  c.context = makeContext();
  mlir::ScopedDiagnosticHandler capture(c.context.get(), [&](mlir::Diagnostic &d) {
    c.diagnostics += d.str() + "\n";
    return mlir::success();
  });
  c.module = mlir::parseSourceString<mlir::ModuleOp>(modelText, c.context.get());
  if (!c.module) return c;
  mlir::PassManager pm(c.context.get());
  pm.addPass(train::createBuildTrainStep(options));
  if (failed(pm.run(*c.module))) c.module = nullptr;
  return c;
}

/// Values of a tensor as doubles.
inline std::vector<double> values(const interp::Tensor &t) { return t.data; }

}  // namespace stepc::testing

#endif  // STEPC_TESTS_UNIT_TRAINING_TRAIN_TEST_UTIL_H
