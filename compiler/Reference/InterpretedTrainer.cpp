//===- InterpretedTrainer.cpp - train a model in the reference interpreter ===//
#include "compiler/Reference/InterpretedTrainer.h"

#include "compiler/Interpreter/ModelData.h"
#include "dialects/step/IR/ModelInstances.h"

namespace stepc::ref {
namespace {

llvm::StringRef attrString(mlir::DictionaryAttr attrs, llvm::StringRef key) {
  auto s = attrs ? llvm::dyn_cast_or_null<mlir::StringAttr>(attrs.get(key)) : nullptr;
  return s ? s.getValue() : "";
}

}  // namespace

mlir::FailureOr<InterpretedTrainer> InterpretedTrainer::create(mlir::ModuleOp module,
                                                               uint64_t seed,
                                                               interp::Options options) {
  auto fn = module.lookupSymbol<mlir::func::FuncOp>("train_step");
  auto models = step::trainedModels(module);
  if (!fn || models.size() != 1)
    return mlir::emitError(module.getLoc())
           << "expected the train stage: one step.model and func @train_step";
  InterpretedTrainer trainer(fn, models[0], seed, options);
  trainer.params_ = interp::initModelParams(models[0], seed);
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    mlir::DictionaryAttr attrs = fn.getArgAttrDict(i);
    llvm::StringRef role = attrString(attrs, "step.role"), name = attrString(attrs, "step.name");
    auto type = llvm::cast<mlir::RankedTensorType>(fn.getArgument(i).getType());
    if (role == "param" && !trainer.params_.count(name.str()))
      return fn.emitError() << "no initial value for parameter '" << name << "'";
    if (role == "state")
      trainer.state_[attrString(attrs, "step.slot").str()][name.str()] = interp::Tensor::zeros(type);
  }
  return trainer;
}

mlir::FailureOr<std::map<std::string, double>> InterpretedTrainer::step() {
  return step(interp::sampleModelInputs(model_, seed_, step_));
}

mlir::FailureOr<std::map<std::string, double>> InterpretedTrainer::step(
    const std::map<std::string, std::vector<interp::Tensor>> &inputs) {
  std::vector<interp::Tensor> args;
  for (unsigned i = 0; i < fn_.getNumArguments(); ++i) {
    mlir::DictionaryAttr attrs = fn_.getArgAttrDict(i);
    std::string role = attrString(attrs, "step.role").str(), name = attrString(attrs, "step.name").str();
    auto type = llvm::cast<mlir::RankedTensorType>(fn_.getArgument(i).getType());
    if (role == "param") {
      args.push_back(params_.at(name));
    } else if (role == "state") {
      args.push_back(state_.at(attrString(attrs, "step.slot").str()).at(name));
    } else if (role == "input") {
      auto index = llvm::cast<mlir::IntegerAttr>(attrs.get("step.index")).getInt();
      auto it = inputs.find(name);
      if (it == inputs.end() || static_cast<size_t>(index) >= it->second.size())
        return fn_.emitError() << "no batch for input '" << name << "' result " << index;
      args.push_back(it->second[index]);
    } else if (role == "step") {
      args.push_back(interp::Tensor::filled(type, static_cast<double>(step_)));
    } else {
      return fn_.emitError() << "argument " << i << " has no step.role";
    }
  }
  auto results = interpreter_.run(fn_, args);
  if (failed(results)) return mlir::failure();
  std::map<std::string, double> metrics;
  for (unsigned i = 0; i < fn_.getNumResults(); ++i) {
    mlir::DictionaryAttr attrs = fn_.getResultAttrDict(i);
    std::string role = attrString(attrs, "step.role").str(), name = attrString(attrs, "step.name").str();
    interp::Tensor &value = (*results)[i];
    if (role == "param")
      params_[name] = std::move(value);
    else if (role == "state")
      state_[attrString(attrs, "step.slot").str()][name] = std::move(value);
    else if (role == "metric")
      metrics[name] = value.data.at(0);
  }
  ++step_;
  return metrics;
}

}  // namespace stepc::ref
