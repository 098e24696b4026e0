//===- RunCommand.cpp - `stepc run`: the model in the reference interpreter ===//
#include "compiler/Driver/RunCommand.h"

#include "compiler/Interpreter/ModelData.h"
#include "compiler/Reference/InterpretedTrainer.h"
#include "compiler/Training/LossFunction.h"
#include "llvm/Support/Format.h"

namespace stepc {

int runInInterpreter(mlir::ModuleOp module, const RunOptions &options, llvm::raw_ostream &os) {
  interp::Options interpOptions;
  interpOptions.precision = options.precision;
  if (options.steps == 0) {
    auto models = llvm::to_vector(module.getOps<step::ModelOp>());
    auto fn = train::buildLossFunction(module, models.front(), "stepc_run_loss", false);
    if (failed(fn)) return 1;
    std::map<std::string, interp::Tensor> params = interp::initModelParams(models.front(), options.seed);
    auto inputs = interp::sampleModelInputs(models.front(), options.seed, 0);
    std::vector<interp::Tensor> args;
    for (unsigned i = 0; i < fn->getNumArguments(); ++i) {
      auto attrs = fn->getArgAttrDict(i);
      std::string name = llvm::cast<mlir::StringAttr>(attrs.get("step.name")).getValue().str();
      if (llvm::cast<mlir::StringAttr>(attrs.get("step.role")).getValue() == "param")
        args.push_back(params.at(name));
      else
        args.push_back(inputs.at(name).at(llvm::cast<mlir::IntegerAttr>(attrs.get("step.index")).getInt()));
    }
    auto loss = interp::Interpreter(interpOptions).run(*fn, args);
    fn->erase();
    if (failed(loss)) return 1;
    os << "loss " << llvm::format("%.6f", loss->front().data.at(0)) << "\n";
    return 0;
  }
  auto trainer = ref::InterpretedTrainer::create(module, options.seed, interpOptions);
  if (failed(trainer)) return 1;
  for (int64_t s = 0; s < options.steps; ++s) {
    auto metrics = trainer->step();
    if (failed(metrics)) return 1;
    os << "step " << s;
    for (const char *key : {"loss", "grad_norm", "lr", "sam_loss"}) {
      auto it = metrics->find(key);
      if (it != metrics->end()) os << " " << key << " " << llvm::format("%.6f", it->second);
    }
    os << "\n";
    os.flush();
  }
  return 0;
}

}  // namespace stepc
