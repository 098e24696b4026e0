//===- ModelData.cpp - parameters and inputs of a model for the interpreter ===//
#include "compiler/Interpreter/ModelData.h"

#include <memory>
#include <mutex>

#include "compiler/Interpreter/TensorUtils.h"
#include "dialects/step/IR/StepSpecs.h"
#include "runtime/harness/BatchSource.h"
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

Tensor makeTensor(mlir::RankedTensorType type, std::vector<double> data) {
  Tensor tensor{type, std::move(data)};
  roundToElementType(tensor);
  return tensor;
}

// The runtime's description of a step.input: what BatchSource draws its batches from.
rt::InputSpec inputSpecOf(step::InputOp input) {
  rt::InputSpec spec;
  spec.name = input.getDeclName();
  mlir::RankedTensorType type = input.getDeclaredType();
  spec.shape.assign(type.getShape().begin(), type.getShape().end());
  if (step::specKind(input.getSource()) == "token_stream") {
    spec.source = rt::InputSource::kTokenStream;
    spec.dtype = rt::DType::kI32;
    spec.vocab = step::specInt(input.getSource(), "vocab");
  } else {
    spec.source = rt::InputSource::kClassification;
    spec.dtype = rt::DType::kF32;
    spec.classes = step::specInt(input.getSource(), "classes");
  }
  return spec;
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

// The batch is the training executable's: rt::BatchSource draws it (one piece of code for the
// compiled step, `stepc interpret`, `stepc run` and the tests), then each buffer becomes a
// tensor of the input's declared type.
std::map<std::string, std::vector<Tensor>> sampleModelInputs(step::ModelOp model, uint64_t seed,
                                                             uint64_t step) {
  llvm::SmallVector<step::InputOp> ops;
  std::vector<rt::InputSpec> specs;
  model.walk([&](step::InputOp input) {
    ops.push_back(input);
    specs.push_back(inputSpecOf(input));
  });
  std::map<std::string, std::vector<Tensor>> inputs;
  // Opening a source generates the 1 MiB built-in corpus; callers draw step after step of the
  // same model (InterpretedTrainer), so the last source opened is kept.
  static std::mutex mutex;
  static std::string lastKey;
  static std::shared_ptr<const rt::BatchSource> last;  // fill() is const: shared, not copied
  std::string key = std::to_string(seed);
  for (const rt::InputSpec &spec : specs)
    key += ";" + spec.name + ":" + std::to_string(static_cast<int>(spec.source)) + ":" +
           rt::formatShape(spec.shape) + ":" + std::to_string(spec.vocab) + ":" +
           std::to_string(spec.classes);
  std::shared_ptr<const rt::BatchSource> source;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (key != lastKey) {
      auto opened = std::make_shared<rt::BatchSource>();
      if (rt::Status s = rt::BatchSource::open(specs, "", seed, 0.0, *opened); !s.ok()) {
        mlir::emitError(model.getLoc()) << "the built-in data: " << s.message();
        return inputs;
      }
      last = std::move(opened);
      lastKey = key;
    }
    source = last;
  }
  // Two buffers per input (StepProgram.h): tokens and targets, or features and labels.
  std::vector<std::vector<int32_t>> ints;
  std::vector<std::vector<float>> floats;
  std::vector<rt::TensorBuffer> batch;
  ints.reserve(2 * specs.size());
  floats.reserve(specs.size());
  for (const rt::InputSpec &spec : specs) {
    auto [first, second] = rt::batchBufferNames(spec);
    int64_t n = 1;
    for (int64_t d : spec.shape) n *= d;
    if (spec.source == rt::InputSource::kTokenStream) {
      ints.emplace_back(n);
      batch.push_back({first, rt::DType::kI32, spec.shape, ints.back().data()});
      ints.emplace_back(n);
      batch.push_back({second, rt::DType::kI32, spec.shape, ints.back().data()});
    } else {
      floats.emplace_back(n);
      batch.push_back({first, rt::DType::kF32, spec.shape, floats.back().data()});
      ints.emplace_back(spec.shape[0]);
      batch.push_back({second, rt::DType::kI32, {spec.shape[0]}, ints.back().data()});
    }
  }
  if (rt::Status s = source->fill(step, batch); !s.ok()) {
    mlir::emitError(model.getLoc()) << "the built-in data: " << s.message();
    return {};
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    std::vector<Tensor> pair;
    for (unsigned r = 0; r < 2; ++r) {
      const rt::TensorBuffer &buffer = batch[2 * i + r];
      std::vector<double> values(buffer.elements());
      for (int64_t k = 0; k < buffer.elements(); ++k)
        values[k] = buffer.dtype == rt::DType::kF32 ? buffer.f32()[k] : buffer.i32()[k];
      auto type = llvm::cast<mlir::RankedTensorType>(ops[i]->getResult(r).getType());
      pair.push_back(makeTensor(type, std::move(values)));
    }
    inputs[ops[i].getDeclName()] = std::move(pair);
  }
  return inputs;
}

}  // namespace stepc::interp
