//===- DescribeProgram.cpp - --step-describe-program ----------------------===//
//
// Fixes the step program's interface before lowering erases it: records what every argument
// and result of @train_step and @eval_loss (--step-build-eval-loss) is (param i, state j,
// batch buffer k, the step, a metric) in the module attribute `step.program`, the JSON the
// runtime reads (runtime/formats/ProgramDescription.h). Later stages only have pointers; this
// is where their meaning is written down.
//
//===----------------------------------------------------------------------===//
#include <functional>
#include <map>

#include "compiler/Codegen/Common/Passes.h"
#include "compiler/Interpreter/ModelData.h"
#include "compiler/Training/TrainConfig.h"
#include "dialects/step/IR/ModelInstances.h"
#include "dialects/step/IR/StepDialect.h"
#include "dialects/step/IR/StepSpecs.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/Format.h"
#include "runtime/base/Init.h"
#include "runtime/formats/ProgramDescription.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_DESCRIBEPROGRAM
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// --shard-optimizer: a state argument marked step.shards is the rank's block of its first
// axis; the whole tensor's type (what checkpoints hold) and the attributes without the mark.
std::pair<mlir::DictionaryAttr, mlir::Type> wholeTensor(mlir::DictionaryAttr attrs, mlir::Type type) {
  auto shards = attrs ? attrs.getAs<mlir::IntegerAttr>("step.shards") : nullptr;
  if (!shards) return {attrs, type};
  auto t = llvm::cast<mlir::RankedTensorType>(type);
  llvm::SmallVector<int64_t> shape(t.getShape());
  shape[0] *= shards.getInt();
  mlir::NamedAttrList kept(attrs);
  kept.erase("step.shards");
  return {kept.getDictionary(type.getContext()),
          mlir::RankedTensorType::get(shape, t.getElementType())};
}

std::vector<int64_t> shapeOf(mlir::Type type) {
  auto tensor = llvm::cast<mlir::RankedTensorType>(type);
  return {tensor.getShape().begin(), tensor.getShape().end()};
}

llvm::StringRef attrString(mlir::DictionaryAttr attrs, llvm::StringRef key) {
  auto value = attrs ? llvm::dyn_cast_or_null<mlir::StringAttr>(attrs.get(key)) : nullptr;
  return value ? value.getValue() : llvm::StringRef();
}

int64_t elements(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() ? tensor.getNumElements() : 0;
}

// Floating-point operations of `fn`: contractions and convolutions exactly (2 per
// multiply-add), every other tensor op one per result element unless `contractionsOnly`; repeat
// bodies count once per iteration.
double countFlops(mlir::func::FuncOp fn, bool contractionsOnly) {
  double total = 0;
  fn.walk([&](mlir::Operation *op) {
    if (!llvm::isa<step::StepDialect>(op->getDialect()) || op->getNumResults() == 0) return;
    double times = 1;
    for (mlir::Operation *p = op->getParentOp(); p && p != fn; p = p->getParentOp())
      if (auto repeat = llvm::dyn_cast<step::RepeatOp>(p)) times *= repeat.getCount();
    double out = static_cast<double>(elements(op->getResult(0).getType()));
    auto lastDim = [](mlir::Value v, int fromEnd) {
      auto t = llvm::cast<mlir::RankedTensorType>(v.getType());
      return static_cast<double>(t.getDimSize(t.getRank() - fromEnd));
    };
    // A convolution's work: 2 · (output positions B·S') · (weight elements K·Cin/g·Cout), the
    // same for the forward and both gradients; `outputs` is its [B, S', Cout] tensor.
    auto convolution = [&](mlir::Value outputs, mlir::Value weight) {
      return 2 * static_cast<double>(elements(outputs.getType())) / lastDim(outputs, 1) *
             static_cast<double>(elements(weight.getType()));
    };
    double flops = contractionsOnly ? 0 : out;
    if (auto mm = llvm::dyn_cast<step::MatmulOp>(op))
      flops = 2 * out * lastDim(mm.getLhs(), mm.getTransposeLhs() ? 2 : 1);
    else if (auto bmm = llvm::dyn_cast<step::BatchMatmulOp>(op))
      flops = 2 * out * lastDim(bmm.getLhs(), bmm.getTransposeLhs() ? 2 : 1);
    else if (auto conv = llvm::dyn_cast<step::Conv1dOp>(op))
      flops = convolution(conv.getResult(), conv.getWeight());
    else if (auto gi = llvm::dyn_cast<step::Conv1dGradInputOp>(op))
      flops = convolution(gi.getGrad(), gi.getWeight());
    else if (auto gw = llvm::dyn_cast<step::Conv1dGradWeightOp>(op))
      flops = convolution(gw.getGrad(), gw.getResult());
    total += flops * times;
  });
  return total;
}

struct DescribeProgramPass : impl::DescribeProgramBase<DescribeProgramPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    auto models = step::trainedModels(module);
    auto train = module.lookupSymbol<mlir::func::FuncOp>("train_step");
    if (models.size() != 1 || !train) {
      module.emitError("expected one step.model and its func @train_step (the `train` stage)");
      return signalPassFailure();
    }
    step::ModelOp model = models.front();
    auto eval = module.lookupSymbol<mlir::func::FuncOp>("eval_loss");
    if (!eval) {
      module.emitError("expected func @eval_loss next to @train_step (--step-build-eval-loss)");
      return signalPassFailure();
    }
    rt::ProgramDescription d;
    if (failed(describe(model, train, eval, d))) return signalPassFailure();
    module->setAttr("step.program",
                    mlir::StringAttr::get(&getContext(), rt::writeProgramDescription(d)));
    // The entry points take one plain pointer per buffer (MLIR's bare-pointer convention);
    // kernels keep full memref descriptors, since they receive strided views.
    auto sample = module.lookupSymbol<mlir::func::FuncOp>("sample_logits");
    auto sampleStep = module.lookupSymbol<mlir::func::FuncOp>("sample_step");
    for (mlir::func::FuncOp fn : {train, eval, sample, sampleStep})
      if (fn) fn->setAttr("llvm.bareptr", mlir::UnitAttr::get(&getContext()));
    // Bufferization may reuse an argument's buffer once the argument is dead. In @train_step
    // that is fine (the runtime replaces params and state with the results, and refills the
    // batch), but @eval_loss must leave the parameters as they are: `eval` runs it on batch
    // after batch.
    for (mlir::func::FuncOp fn : {eval, sample, sampleStep})
      for (unsigned i = 0; fn && i < fn.getNumArguments(); ++i)
        fn.setArgAttr(i, "bufferization.writable", mlir::BoolAttr::get(&getContext(), false));
  }

  mlir::LogicalResult describe(step::ModelOp model,
                               mlir::func::FuncOp train, mlir::func::FuncOp eval,
                               rt::ProgramDescription &d) {
    rt::ProgramInfo &info = d.info;
    info.name = model.getSymName().str();
    std::map<std::string, step::ParamOp> params;
    model.walk([&](step::ParamOp p) { params[p.getDeclName()] = p; });
    std::map<std::string, step::InputOp> inputs;
    model.walk([&](step::InputOp in) { inputs[in.getDeclName()] = in; });
    std::map<std::string, int> paramIndex, inputIndex;
    std::map<std::pair<std::string, std::string>, int> stateIndex;

    // The interface is @train_step's: params, state and inputs in its argument order.
    for (unsigned i = 0; i < train.getNumArguments(); ++i) {
      mlir::DictionaryAttr attrs = train.getArgAttrDict(i);
      llvm::StringRef role = attrString(attrs, "step.role");
      std::string name = attrString(attrs, "step.name").str();
      mlir::Type type = train.getArgument(i).getType();
      if (role == "param") {
        auto it = params.find(name);
        if (it == params.end())
          return train.emitError("argument ") << i << " is parameter '" << name
                                              << "', which the model does not declare";
        rt::ParamSpec p;
        p.name = name;
        p.shape = shapeOf(type);
        if (!llvm::cast<mlir::RankedTensorType>(type).getElementType().isF32())
          return it->second.emitError("the CPU backend trains f32 parameters; '")
                 << name << "' is " << type;
        p.init = interp::initSpecOf(it->second.getInit());
        p.stackedDims = static_cast<int>(it->second.getStoredType().getRank() -
                                         it->second.getDeclaredType().getRank());
        paramIndex[name] = static_cast<int>(info.params.size());
        info.params.push_back(std::move(p));
      } else if (role == "state") {
        rt::StateSpec s;
        s.slot = attrString(attrs, "step.slot").str();
        s.param = name;
        // --shard-optimizer: the argument is this rank's block; the spec keeps the whole
        // tensor's shape (checkpoints hold whole tensors).
        s.shape = shapeOf(wholeTensor(attrs, type).second);
        if (auto shards = attrs.getAs<mlir::IntegerAttr>("step.shards")) s.shards = shards.getInt();
        stateIndex[{s.slot, name}] = static_cast<int>(info.state.size());
        info.state.push_back(std::move(s));
      } else if (role == "input" && !inputIndex.count(name)) {
        auto it = inputs.find(name);
        if (it == inputs.end()) return train.emitError("unknown input '") << name << "'";
        step::InputOp op = it->second;
        rt::InputSpec in;
        in.name = name;
        in.shape = shapeOf(op.getResult(0).getType());
        bool tokens = step::specKind(op.getSource()) == "token_stream";
        in.source = tokens ? rt::InputSource::kTokenStream : rt::InputSource::kClassification;
        in.dtype = tokens ? rt::DType::kI32 : rt::DType::kF32;
        if (tokens)
          in.vocab = step::specInt(op.getSource(), "vocab");
        else
          in.classes = step::specInt(op.getSource(), "classes");
        inputIndex[name] = static_cast<int>(info.inputs.size());
        info.inputs.push_back(std::move(in));
      }
    }
    for (unsigned i = 0; i < train.getNumResults(); ++i) {
      mlir::DictionaryAttr attrs = train.getResultAttrDict(i);
      std::string name = attrString(attrs, "step.name").str();
      if (attrString(attrs, "step.role") == "metric" && name != "loss" && name != "lr" &&
          name != "grad_norm")
        info.extraMetrics.push_back(name);
    }

    // Bindings, for both entry points.
    auto bind = [&](mlir::func::FuncOp fn, rt::EntryDescription &entry) -> mlir::LogicalResult {
      entry.symbol = fn.getSymName().str();
      auto one = [&](mlir::DictionaryAttr attrs, mlir::Type type,
                     rt::Binding &b) -> mlir::LogicalResult {
        llvm::StringRef role = attrString(attrs, "step.role");
        std::string name = attrString(attrs, "step.name").str();
        auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
        if (!tensor || !tensor.hasStaticShape())
          return fn.emitError("the step program's buffers must be statically shaped tensors");
        if (role == "param" && paramIndex.count(name)) {
          b.kind = rt::Binding::Kind::kParam;
          b.index = paramIndex[name];
        } else if (role == "state" &&
                   stateIndex.count({attrString(attrs, "step.slot").str(), name})) {
          b.kind = rt::Binding::Kind::kState;
          b.index = stateIndex[{attrString(attrs, "step.slot").str(), name}];
        } else if (role == "input" && inputIndex.count(name)) {
          auto index = llvm::dyn_cast_or_null<mlir::IntegerAttr>(attrs.get("step.index"));
          b.kind = rt::Binding::Kind::kBatch;
          b.index = 2 * inputIndex[name] + (index ? static_cast<int>(index.getInt()) : 0);
        } else if (role == "step") {
          b.kind = rt::Binding::Kind::kStep;
          if (!tensor.getElementType().isInteger(64) || tensor.getRank() != 0)
            return fn.emitError("the step counter must be a tensor<i64>");
        } else if (role == "grad" && paramIndex.count(name)) {
          b.kind = rt::Binding::Kind::kGrad;
          b.index = paramIndex[name];
        } else if (role == "position") {
          b.kind = rt::Binding::Kind::kPosition;
          if (!tensor.getElementType().isInteger(32) || tensor.getRank() != 0)
            return fn.emitError("the sampling position must be a tensor<i32>");
        } else if (role == "sample_state") {
          b.kind = rt::Binding::Kind::kSampleState;
          if (!tensor.getElementType().isF32())
            return fn.emitError("a sampling state must be f32, not ") << type;
          // Arguments and results list the states in the same order.
          auto it = llvm::find_if(d.sampleState, [&](const auto &s) { return s.name == name; });
          b.index = static_cast<int>(it - d.sampleState.begin());
          if (it == d.sampleState.end()) {
            d.sampleState.push_back({name, shapeOf(type)});
            info.sampleStateBytes = std::max<int64_t>(info.sampleStateBytes, 0) +
                                    4 * tensor.getNumElements();
          }
        } else if (role == "logits") {
          b.kind = rt::Binding::Kind::kLogits;
          if (!tensor.getElementType().isF32() || tensor.getRank() != 2)
            return fn.emitError("the sampling logits must be a [batch, vocab] f32 tensor, not ")
                   << type;
        } else if (role == "metric" || role == "loss") {
          b.kind = rt::Binding::Kind::kMetric;
          b.metric = role == "loss" ? "loss" : name;
          if (!tensor.getElementType().isF32() || tensor.getNumElements() != 1)
            return fn.emitError("metric '") << b.metric << "' must be one f32, not " << type;
        } else {
          return fn.emitError("a buffer has no known step.role (param, state, input, step, "
                              "metric): ")
                 << attrs;
        }
        return mlir::success();
      };
      for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
        entry.args.emplace_back();
        if (failed(one(fn.getArgAttrDict(i), fn.getArgument(i).getType(), entry.args.back())))
          return mlir::failure();
      }
      for (unsigned i = 0; i < fn.getNumResults(); ++i) {
        entry.results.emplace_back();
        mlir::DictionaryAttr attrs = fn.getResultAttrDict(i);
        // The loss function's single result carries no role: it is the loss.
        if (!attrs || !attrs.get("step.role"))
          attrs = mlir::DictionaryAttr::get(
              fn.getContext(), {mlir::NamedAttribute(mlir::StringAttr::get(fn.getContext(), "step.role"),
                                                     mlir::StringAttr::get(fn.getContext(), "loss"))});
        if (failed(one(attrs, fn.getResultTypes()[i], entry.results.back())))
          return mlir::failure();
      }
      return mlir::success();
    };
    if (failed(bind(train, d.train)) || failed(bind(eval, d.eval))) return mlir::failure();
    d.train.symbol = "stepc_train_step";
    d.eval.symbol = "stepc_eval_loss";
    // @sample_logits (--step-build-sample-logits), for language models.
    if (auto sample = train->getParentOfType<mlir::ModuleOp>().lookupSymbol<mlir::func::FuncOp>(
            "sample_logits")) {
      if (failed(bind(sample, d.sample))) return mlir::failure();
      d.sample.symbol = "stepc_sample_logits";
    }
    mlir::ModuleOp module = train->getParentOfType<mlir::ModuleOp>();
    if (auto step = module.lookupSymbol<mlir::func::FuncOp>("sample_step")) {
      if (failed(bind(step, d.sampleStep))) return mlir::failure();
      d.sampleStep.symbol = "stepc_sample_step";
    }
    if (auto why = module->getAttrOfType<mlir::StringAttr>("step.sample_step_unavailable"))
      info.sampleStepUnavailable = why.getValue().str();
    if (auto budget = module->getAttrOfType<mlir::StringAttr>("step.memory_budget"))
      info.memoryBudget = budget.getValue().str();
    if (auto split = train->getAttrOfType<mlir::IntegerAttr>("step.data_parallel"))
      info.dataParallelMicroBatches = split.getInt();
    if (auto shards = train->getAttrOfType<mlir::IntegerAttr>("step.shard_optimizer"))
      info.shardedOver = shards.getInt();
    // What each repeat's backward keeps (autodiff's `step.memory`), once per distinct repeat
    // (SAM's second pass and micro-batches differentiate the same layers again).
    train.walk([&](step::RepeatOp repeat) {
      auto memory = repeat->getAttrOfType<mlir::StringAttr>("step.memory");
      if (memory && llvm::find(info.repeatMemory, memory.getValue().str()) == info.repeatMemory.end())
        info.repeatMemory.push_back(memory.getValue().str());
    });

    // The fingerprint: everything a checkpoint's tensors mean, i.e. the model's name and the
    // interface (names, roles, shapes and dtypes of every buffer), hashed. A sharded state
    // buffer counts as the whole tensor a checkpoint holds, so that one sharded over the ranks
    // (--shard-optimizer) resumes in one process and the reverse.
    std::string identity = info.name;
    llvm::raw_string_ostream os(identity);
    llvm::SmallVector<mlir::Type> argTypes, resultTypes;
    llvm::SmallVector<mlir::DictionaryAttr> argAttrs, resultAttrs;
    for (unsigned i = 0; i < train.getNumArguments(); ++i) {
      auto [a, t] = wholeTensor(train.getArgAttrDict(i), train.getArgument(i).getType());
      argAttrs.push_back(a);
      argTypes.push_back(t);
    }
    for (unsigned i = 0; i < train.getNumResults(); ++i) {
      auto [a, t] = wholeTensor(train.getResultAttrDict(i), train.getResultTypes()[i]);
      resultAttrs.push_back(a);
      resultTypes.push_back(t);
    }
    os << mlir::FunctionType::get(train.getContext(), argTypes, resultTypes);
    for (mlir::DictionaryAttr a : argAttrs) os << a;
    for (mlir::DictionaryAttr a : resultAttrs) os << a;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(rt::hashName(os.str())));
    info.fingerprint = info.name + "-" + hex;

    // The effective training configuration: @train_step was built from the model's step.config
    // with the overrides written back into it (TrainConfig.h), printed entry by entry.
    // Nested specs flatten to "optimizer.lr=0.001", so a resume names the one value that moved.
    if (step::ConfigOp configOp = model.getConfigOp()) {
      llvm::raw_string_ostream training(info.training);
      bool first = true;
      std::function<void(llvm::StringRef, mlir::Attribute)> add = [&](llvm::StringRef key,
                                                                       mlir::Attribute value) {
        if (auto dict = llvm::dyn_cast<mlir::DictionaryAttr>(value)) {
          for (mlir::NamedAttribute e : dict)
            add((key + "." + e.getName().getValue()).str(), e.getValue());
          return;
        }
        training << (first ? "" : "; ") << key << "=";
        first = false;
        if (auto f = llvm::dyn_cast<mlir::FloatAttr>(value))
          training << llvm::format("%.9g", f.getValueAsDouble());
        else if (auto i = llvm::dyn_cast<mlir::IntegerAttr>(value))
          training << i.getInt();
        else if (auto s = llvm::dyn_cast<mlir::StringAttr>(value))
          training << s.getValue();
        else
          value.print(training);
      };
      for (mlir::NamedAttribute entry : configOp->getAttrDictionary())
        add(entry.getName().getValue(), entry.getValue());
    }
    auto config = train::resolveTrainConfig(model, {});
    if (succeeded(config) && config->schedule != "constant") info.defaultSteps = config->total;
    // Model FLOPs (the PaLM / llm.c definition MFU uses): the forward's contractions three
    // times (forward, and the backward's two GEMMs per forward GEMM), on the whole batch; no
    // SAM second pass, no recomputation, no elementwise work. Executed FLOPs: everything the
    // compiled @train_step computes.
    info.flopsPerStep = 3 * countFlops(eval, /*contractionsOnly=*/true);
    // SAM's second forward and backward (at the perturbed weights) on the same contractions:
    // work the step does beyond the model FLOPs, reported apart so MFU stays comparable.
    if (succeeded(config) && config->samRho > 0) info.samFlopsPerStep = info.flopsPerStep;
    info.executedFlopsPerStep = countFlops(train, /*contractionsOnly=*/false);
    return mlir::success();
  }
};

}  // namespace

}  // namespace stepc::codegen
