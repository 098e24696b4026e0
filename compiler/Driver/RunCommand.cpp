//===- RunCommand.cpp - `stepc run`: the model in the reference interpreter ===//
#include "compiler/Driver/RunCommand.h"

#include "compiler/Interpreter/ModelData.h"
#include "compiler/Reference/InterpretedTrainer.h"
#include "compiler/Training/LossFunction.h"
#include "dialects/step/IR/StepSpecs.h"
#include "llvm/Support/Format.h"
#include "runtime/formats/DataFile.h"
#include "runtime/formats/Safetensors.h"

namespace stepc {
namespace {

int fail(const std::string &message) {
  llvm::errs() << "stepc: error: " << message << "\n";
  return 1;
}

// Replaces each parameter's values with the tensor of the same name in a safetensors file.
int loadParams(const std::string &path, std::map<std::string, interp::Tensor> &params) {
  rt::SafetensorsFile file;
  if (rt::Status s = rt::SafetensorsFile::read(path, file); !s.ok()) return fail(s.message());
  for (auto &[name, tensor] : params) {
    std::vector<double> values;
    std::vector<int64_t> shape;
    if (rt::Status s = file.readDoubles(name, values, &shape); !s.ok())
      return fail("parameter '" + name + "': " + s.message());
    if (llvm::ArrayRef<int64_t>(shape) != tensor.shape())
      return fail(path + ": parameter '" + name + "' has shape " + rt::formatShape(shape) +
                  ", the model expects " + rt::formatShape(std::vector<int64_t>(tensor.shape())));
    tensor.data = std::move(values);
  }
  return 0;
}

int saveParams(const std::string &path, const std::map<std::string, interp::Tensor> &params) {
  std::vector<std::vector<float>> storage;
  std::vector<rt::TensorView> views;
  storage.reserve(params.size());
  for (const auto &[name, tensor] : params) {
    storage.emplace_back(tensor.data.begin(), tensor.data.end());
    views.push_back({name, rt::DType::kF32, std::vector<int64_t>(tensor.shape()),
                     storage.back().data()});
  }
  if (rt::Status s = rt::writeSafetensors(path, views); !s.ok()) return fail(s.message());
  return 0;
}

// The batch of `step`: built-in data, with token streams drawn from `file` when one is given.
std::map<std::string, std::vector<interp::Tensor>> batchFor(step::ModelOp model,
                                                           const rt::TokenFile *file,
                                                           uint64_t seed, uint64_t step,
                                                           std::string &error) {
  auto inputs = interp::sampleModelInputs(model, seed, step);
  if (!file) return inputs;
  for (mlir::Operation &op : model.getBody().front()) {
    auto input = llvm::dyn_cast<step::InputOp>(op);
    if (!input || step::specKind(input.getSource()) != "token_stream") continue;
    std::vector<interp::Tensor> &pair = inputs[input.getName().str()];
    auto shape = pair[0].shape();
    std::vector<int32_t> tokens(shape[0] * shape[1]), targets(tokens.size());
    if (rt::Status s = file->sampleWindows(shape[0], shape[1], seed, step, tokens.data(),
                                           targets.data());
        !s.ok()) {
      error = s.message();
      return {};
    }
    pair[0].data.assign(tokens.begin(), tokens.end());
    pair[1].data.assign(targets.begin(), targets.end());
  }
  return inputs;
}

}  // namespace

int runInInterpreter(mlir::ModuleOp module, const RunOptions &options, llvm::raw_ostream &os) {
  interp::Options interpOptions;
  interpOptions.precision = options.precision;
  step::ModelOp model = *module.getOps<step::ModelOp>().begin();
  std::optional<rt::TokenFile> file;
  if (!options.data.empty()) {
    rt::TokenFileOptions fileOptions;
    model.walk([&](step::InputOp input) {
      if (step::specKind(input.getSource()) == "token_stream") {
        fileOptions.vocab = step::specInt(input.getSource(), "vocab");
        fileOptions.seq = input.getDeclaredType().getDimSize(1);
      }
    });
    file.emplace();
    if (rt::Status s = rt::TokenFile::open(options.data, fileOptions, *file); !s.ok())
      return fail(s.message());
  }
  std::string error;
  if (options.steps == 0) {
    auto fn = train::buildLossFunction(module, model, "stepc_run_loss", false);
    if (failed(fn)) return 1;
    std::map<std::string, interp::Tensor> params = interp::initModelParams(model, options.seed);
    if (!options.initFrom.empty() && loadParams(options.initFrom, params)) return 1;
    auto inputs = batchFor(model, file ? &*file : nullptr, options.seed, 0, error);
    if (!error.empty()) return fail(error);
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
    return options.saveParams.empty() ? 0 : saveParams(options.saveParams, params);
  }
  auto trainer = ref::InterpretedTrainer::create(module, options.seed, interpOptions);
  if (failed(trainer)) return 1;
  if (!options.initFrom.empty() && loadParams(options.initFrom, trainer->params())) return 1;
  for (int64_t s = 0; s < options.steps; ++s) {
    auto inputs = batchFor(model, file ? &*file : nullptr, options.seed, s, error);
    if (!error.empty()) return fail(error);
    auto metrics = trainer->step(inputs);
    if (failed(metrics)) return 1;
    os << "step " << s;
    for (const char *key : {"loss", "grad_norm", "lr", "sam_loss"}) {
      auto it = metrics->find(key);
      if (it != metrics->end()) os << " " << key << " " << llvm::format("%.6f", it->second);
    }
    os << "\n";
    os.flush();
  }
  return options.saveParams.empty() ? 0 : saveParams(options.saveParams, trainer->params());
}

}  // namespace stepc
