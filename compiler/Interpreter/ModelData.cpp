//===- ModelData.cpp - parameters and inputs of a model for the interpreter ===//
#include "compiler/Interpreter/ModelData.h"

#include <mutex>

#include "compiler/Interpreter/TensorUtils.h"
#include "dialects/step/IR/StepSpecs.h"
#include "runtime/formats/Data.h"
#include "runtime/base/Init.h"

namespace stepc::interp {

rt::InitSpec initSpecOf(mlir::DictionaryAttr init) {
  rt::InitSpec spec;
  spec.kind = step::specKind(init).str();
  spec.gain = step::specFloat(init, "gain");
  if (spec.kind == "constant") spec.value = step::specFloat(init, "value");
  if (spec.kind == "normal") {
    spec.std = step::specFloat(init, "std");
    spec.mean = step::specFloat(init, "mean");
  }
  if (spec.kind == "uniform") {
    spec.a = step::specFloat(init, "a");
    spec.b = step::specFloat(init, "b");
  }
  return spec;
}

namespace {

// The corpus as tokens, generated once per seed: every step windows the same stream.
std::vector<int64_t> corpusTokens(uint64_t seed) {
  static std::mutex mutex;
  static std::map<uint64_t, std::vector<int64_t>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = cache.try_emplace(seed);
  if (inserted)
    for (unsigned char byte : rt::builtinCorpus(seed, kBuiltinCorpusBytes))
      it->second.push_back(byte);
  return it->second;
}

Tensor makeTensor(mlir::RankedTensorType type, std::vector<double> data) {
  Tensor tensor{type, std::move(data)};
  roundToElementType(tensor);
  return tensor;
}

std::vector<Tensor> sampleTokenStream(step::InputOp input, uint64_t seed, uint64_t step) {
  mlir::RankedTensorType type = input.getDeclaredType();
  int64_t vocab = step::specInt(input.getSource(), "vocab");
  std::vector<int64_t> stream = corpusTokens(seed);
  if (vocab != 256)
    for (int64_t &token : stream) token %= vocab;
  std::vector<double> tokens, targets;
  rt::sampleTokenWindows(stream, type.getDimSize(0), type.getDimSize(1), seed, step, tokens,
                         targets);
  return {makeTensor(type, std::move(tokens)), makeTensor(type, std::move(targets))};
}

std::vector<Tensor> sampleClassification(step::InputOp input, uint64_t seed, uint64_t step) {
  mlir::RankedTensorType type = input.getDeclaredType();
  int64_t classes = step::specInt(input.getSource(), "classes");
  int64_t batch = type.getDimSize(0), features = type.getNumElements() / batch;
  std::vector<double> x, labels;
  rt::sampleClassification(batch, features, classes, seed, step, x, labels);
  auto labelType = llvm::cast<mlir::RankedTensorType>(input.getResult(1).getType());
  return {makeTensor(type, std::move(x)), makeTensor(labelType, std::move(labels))};
}

}  // namespace

std::map<std::string, Tensor> initModelParams(step::ModelOp model, uint64_t seed) {
  std::map<std::string, Tensor> params;
  model.walk([&](step::ParamOp param) {
    mlir::RankedTensorType stored = param.getStoredType();
    std::string name = param.getDeclName();
    int stackedDims = static_cast<int>(stored.getRank() - param.getDeclaredType().getRank());
    std::vector<double> values;
    std::string error = rt::initParameter(initSpecOf(param.getInit()), name,
                                          std::vector<int64_t>(stored.getShape().begin(),
                                                               stored.getShape().end()),
                                          stackedDims, seed, values);
    if (!error.empty()) {
      mlir::emitError(param.getLoc()) << error;
      return;
    }
    params.emplace(name, makeTensor(stored, std::move(values)));
  });
  return params;
}

std::map<std::string, std::vector<Tensor>> sampleModelInputs(step::ModelOp model, uint64_t seed,
                                                             uint64_t step) {
  std::map<std::string, std::vector<Tensor>> inputs;
  model.walk([&](step::InputOp input) {
    bool tokens = step::specKind(input.getSource()) == "token_stream";
    inputs[input.getDeclName()] = tokens ? sampleTokenStream(input, seed, step)
                                         : sampleClassification(input, seed, step);
  });
  return inputs;
}

}  // namespace stepc::interp
