//===- RunCommand.cpp - `stepc run`: the model in the reference interpreter ===//
//
// `stepc run` is the training executable's loop (runtime/harness/TrainingLoop.h) with the
// reference interpreter as its step (compiler/Reference/InterpreterProgram.h): the same
// initialisation, batches, parameter files and checks as `stepc interpret -- train` and the
// compiled executables, with the metrics of every step printed as one plain line.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver/RunCommand.h"

#include "compiler/Reference/InterpreterProgram.h"
#include "llvm/Support/Format.h"
#include "runtime/harness/Reporter.h"
#include "runtime/harness/TrainingLoop.h"

namespace stepc {
namespace {

int fail(const std::string &message) {
  llvm::errs() << "stepc: error: " << message << "\n";
  return 1;
}

}  // namespace

int runInInterpreter(mlir::ModuleOp module, const RunOptions &options, llvm::raw_ostream &os) {
  interp::Options interpOptions;
  interpOptions.precision = options.precision;
  auto program = ref::InterpreterProgram::create(module, interpOptions);
  if (failed(program)) return 1;
  if (options.steps == 0) {
    if (!options.saveParams.empty())
      return fail("--save-params needs a training run (--steps >= 1); --steps=0 only "
                  "evaluates the loss");
    rt::EvalOptions eval;
    eval.data = options.data;
    eval.seed = options.seed;
    eval.device = "cpu";
    eval.initFrom = options.initFrom;
    eval.batches = 1;  // step 0's batch
    double loss = 0;
    if (rt::Status s = rt::evaluate(**program, eval, loss); !s.ok()) return fail(s.message());
    os << "loss " << llvm::format("%.6f", loss) << "\n";
    return 0;
  }
  rt::TrainOptions train;
  train.data = options.data;
  train.steps = options.steps;
  train.seed = options.seed;
  train.device = "cpu";
  train.initFrom = options.initFrom;
  train.saveParams = options.saveParams;
  rt::ReporterOptions reporting;
  reporting.mode = rt::ReporterOptions::Mode::kQuiet;
  reporting.onStep = [&](int64_t step, const rt::StepMetrics &m) {
    os << "step " << step << " loss " << llvm::format("%.6f", m.loss) << " grad_norm "
       << llvm::format("%.6f", m.gradNorm) << " lr " << llvm::format("%.6f", m.lr);
    for (const auto &[name, value] : m.extra) os << " " << name << " " << llvm::format("%.6f", value);
    os << "\n";
    os.flush();
  };
  rt::Reporter reporter(reporting);
  if (rt::Status s = rt::train(**program, train, reporter); !s.ok()) return fail(s.message());
  return 0;
}

}  // namespace stepc
