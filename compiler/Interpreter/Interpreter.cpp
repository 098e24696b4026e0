//===- Interpreter.cpp - the evaluator of `step` programs ----------------===//
//
// Walks a function or model body op by op, holding every SSA value as a Tensor. Structure ops
// (repeat, custom_grad, step/func calls, params and inputs of a model) are handled here; tensor ops go to
// the kernel families in Kernels.h. With Precision::Declared every float result is rounded to
// its element type right after the op that produced it.
//
//===----------------------------------------------------------------------===//
#include "compiler/Interpreter/Interpreter.h"

#include "compiler/Interpreter/Kernels.h"
#include "compiler/Interpreter/TensorUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

namespace stepc::interp {
namespace {

using ParamMap = std::map<std::string, Tensor>;
using InputMap = std::map<std::string, std::vector<Tensor>>;
// The values of one function activation. A repeat body shares its enclosing frame: it may use
// values defined outside it, and its own values are overwritten each iteration.
using Frame = llvm::DenseMap<mlir::Value, Tensor>;

mlir::LogicalResult checkType(mlir::Operation *op, const Tensor &tensor, mlir::Type expected,
                              llvm::StringRef what) {
  if (tensor.type == expected && tensor.numElements() == elementCount(tensor.shape()))
    return mlir::success();
  return mlir::emitError(op->getLoc()) << what << " has type " << tensor.type << " with "
                                       << tensor.numElements() << " values; expected "
                                       << expected;
}

class Evaluator {
 public:
  Evaluator(Options options, const ParamMap *params, const InputMap *inputs)
      : options_(options), params_(params), inputs_(inputs) {}

  /// Runs a single-block callable body with `args` bound to its block arguments; returns the
  /// operands of its terminator.
  mlir::FailureOr<std::vector<Tensor>> runCallable(mlir::Operation *callable,
                                                   mlir::Region &body,
                                                   llvm::ArrayRef<Tensor> args) {
    if (!body.hasOneBlock())
      return mlir::emitError(callable->getLoc())
             << "the interpreter runs single-block bodies, found " << body.getBlocks().size()
             << " blocks";
    mlir::Block &block = body.front();
    if (args.size() != block.getNumArguments())
      return mlir::emitError(callable->getLoc()) << "expected " << block.getNumArguments()
                                                 << " arguments, found " << args.size();
    Frame frame;
    for (auto [arg, tensor] : llvm::zip(block.getArguments(), args)) {
      if (failed(checkType(callable, tensor, arg.getType(),
                           "argument #" + std::to_string(arg.getArgNumber()))))
        return mlir::failure();
      frame[arg] = tensor;
    }
    return runBlock(block, frame);
  }

  /// Runs the ops of a model body (no terminator) and returns the value marked by step.loss.
  mlir::FailureOr<Tensor> runModel(step::ModelOp model) {
    step::LossOp loss = model.getLossOp();
    if (!loss) return mlir::emitError(model.getLoc()) << "the model has no step.loss";
    Frame frame;
    for (mlir::Operation &op : model.getBody().front())
      if (failed(runOp(&op, frame))) return mlir::failure();
    return frame.lookup(loss.getLoss());
  }

 private:
  mlir::FailureOr<std::vector<Tensor>> runBlock(mlir::Block &block, Frame &frame) {
    for (mlir::Operation &op : block) {
      if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
        if (!llvm::isa<mlir::func::ReturnOp, step::ReturnOp, step::YieldOp>(op))
          return mlir::emitError(op.getLoc())
                 << "the interpreter does not support the terminator '" << op.getName() << "'";
        return operandsOf(&op, frame);
      }
      if (failed(runOp(&op, frame))) return mlir::failure();
    }
    return mlir::emitError(block.getParentOp()->getLoc()) << "body has no terminator";
  }

  std::vector<Tensor> operandsOf(mlir::Operation *op, Frame &frame) {
    std::vector<Tensor> values;
    for (mlir::Value v : op->getOperands()) values.push_back(frame.lookup(v));
    return values;
  }

  mlir::LogicalResult runOp(mlir::Operation *op, Frame &frame) {
    // Declarations evaluated elsewhere or not at all.
    if (llvm::isa<step::FuncOp, step::ConfigOp, step::LossOp>(op)) return mlir::success();
    for (mlir::Value v : op->getOperands())
      if (!frame.count(v))
        return mlir::emitError(op->getLoc()) << "an operand of '" << op->getName()
                                             << "' has no value (defined in another frame?)";
    mlir::FailureOr<std::vector<Tensor>> results =
        llvm::TypeSwitch<mlir::Operation *, mlir::FailureOr<std::vector<Tensor>>>(op)
            .Case<step::ParamOp>([&](step::ParamOp param) { return runParam(param); })
            .Case<step::InputOp>([&](step::InputOp input) { return runInput(input); })
            .Case<step::RepeatOp>([&](step::RepeatOp repeat) { return runRepeat(repeat, frame); })
            .Case<step::CustomGradOp>([&](step::CustomGradOp custom) {
              // The forward region is the value; the backward region is for autodiff only.
              return runCallable(custom, custom.getForward(), operandsOf(custom, frame));
            })
            .Case<step::CallOp>([&](step::CallOp call) {
              auto callee =
                  mlir::SymbolTable::lookupNearestSymbolFrom<step::FuncOp>(call, call.getCalleeAttr());
              return runCall(call, callee, callee ? &callee.getBody() : nullptr, frame);
            })
            .Case<mlir::func::CallOp>([&](mlir::func::CallOp call) {
              auto callee = mlir::SymbolTable::lookupNearestSymbolFrom<mlir::func::FuncOp>(
                  call, call.getCalleeAttr());
              return runCall(call, callee, callee ? &callee.getBody() : nullptr, frame);
            })
            .Default([&](mlir::Operation *) { return runTensorOp(op, frame); });
    if (failed(results)) return mlir::failure();
    if (results->size() != op->getNumResults())
      return mlir::emitError(op->getLoc()) << "'" << op->getName() << "' has "
                                           << op->getNumResults() << " results but produced "
                                           << results->size() << " values";
    for (auto [value, tensor] : llvm::zip(op->getResults(), *results)) {
      if (failed(checkType(op, tensor, value.getType(), "a result"))) return mlir::failure();
      if (options_.precision == Precision::Declared) roundToElementType(tensor);
      frame[value] = std::move(tensor);
    }
    return mlir::success();
  }

  mlir::FailureOr<std::vector<Tensor>> runTensorOp(mlir::Operation *op, Frame &frame) {
    llvm::SmallVector<const Tensor *> in;
    for (mlir::Value v : op->getOperands()) in.push_back(&frame.find(v)->second);
    std::vector<Tensor> out;
    for (mlir::Type type : op->getResultTypes()) {
      auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(type);
      if (!ranked || !ranked.hasStaticShape())
        return mlir::emitError(op->getLoc()) << "the interpreter needs static-shaped tensor "
                                                "results, found "
                                             << type;
      out.push_back(Tensor::zeros(ranked));
    }
    if (llvm::isa_and_nonnull<step::StepDialect>(op->getDialect()))
      for (auto family : {runElementwiseOp, runReductionOp, runNormalizationOp,
                          runContractionOp, runConvolutionOp, runRoutingOp, runShapeOp})
        if (KernelResult handled = family(op, in, out)) {
          if (failed(*handled)) return mlir::failure();
          return out;
        }
    return mlir::emitError(op->getLoc())
           << "the interpreter does not support the op '" << op->getName() << "'";
  }

  mlir::FailureOr<std::vector<Tensor>> runCall(mlir::Operation *call, mlir::Operation *callee,
                                               mlir::Region *body, Frame &frame) {
    if (!callee)
      return mlir::emitError(call->getLoc()) << "the callee of '" << call->getName()
                                             << "' is not found";
    // Unbounded recursion would overflow the native stack; report it instead.
    if (callDepth_ >= kMaxCallDepth)
      return mlir::emitError(call->getLoc()) << "calls nest deeper than " << kMaxCallDepth;
    ++callDepth_;
    mlir::FailureOr<std::vector<Tensor>> results =
        runCallable(callee, *body, operandsOf(call, frame));
    --callDepth_;
    return results;
  }

  // A parameter inside repeats is stored stacked [count1, ..., countN, ...]: the running
  // iteration of each enclosing repeat selects its layer.
  mlir::FailureOr<std::vector<Tensor>> runParam(step::ParamOp param) {
    std::string name = param.getDeclName();
    auto found = params_ ? params_->find(name) : ParamMap::const_iterator();
    if (!params_ || found == params_->end())
      return mlir::emitError(param.getLoc()) << "no value given for parameter '" << name << "'";
    const Tensor &stored = found->second;
    if (failed(checkType(param, stored, param.getStoredType(), "parameter '" + name + "'")))
      return mlir::failure();
    int64_t layer = 0;
    for (auto r = param->getParentOfType<step::RepeatOp>(); r;
         r = r->getParentOfType<step::RepeatOp>()) {
      // Innermost first: accumulate the layer index in mixed radix.
      auto it = iteration_.find(r);
      if (it == iteration_.end())
        return mlir::emitError(param.getLoc()) << "parameter '" << name
                                               << "' read outside a running repeat";
      layer += it->second * strideOf(param, r);
    }
    auto declared = llvm::cast<mlir::RankedTensorType>(param.getType());
    int64_t size = elementCount(declared.getShape());
    Tensor value{declared, std::vector<double>(stored.data.begin() + layer * size,
                                               stored.data.begin() + (layer + 1) * size)};
    return std::vector<Tensor>{std::move(value)};
  }

  // The number of layers one step of repeat `r` advances in the stacked storage of `param`:
  // the product of the counts of the repeats nested inside `r` around `param`.
  static int64_t strideOf(step::ParamOp param, step::RepeatOp r) {
    int64_t stride = 1;
    for (auto inner = param->getParentOfType<step::RepeatOp>(); inner != r;
         inner = inner->getParentOfType<step::RepeatOp>())
      stride *= static_cast<int64_t>(inner.getCount());
    return stride;
  }

  mlir::FailureOr<std::vector<Tensor>> runInput(step::InputOp input) {
    std::string name = input.getDeclName();
    auto found = inputs_ ? inputs_->find(name) : InputMap::const_iterator();
    if (!inputs_ || found == inputs_->end())
      return mlir::emitError(input.getLoc()) << "no data given for input '" << name << "'";
    if (found->second.size() != input.getNumResults())
      return mlir::emitError(input.getLoc())
             << "input '" << name << "' gives " << input.getNumResults() << " tensors, found "
             << found->second.size();
    return found->second;
  }

  // A scan: iteration i sees slice i of every `over` operand, and values yielded after the
  // carried ones are stacked at index i, in either direction.
  mlir::FailureOr<std::vector<Tensor>> runRepeat(step::RepeatOp repeat, Frame &frame) {
    int64_t count = static_cast<int64_t>(repeat.getCount());
    size_t numCarried = repeat.getInits().size();
    mlir::Block &body = repeat.getBody().front();
    std::vector<Tensor> carried, stacked;
    for (mlir::Value init : repeat.getInits()) carried.push_back(frame.lookup(init));
    for (mlir::Value result : repeat.getStackedResults())
      stacked.push_back(Tensor::zeros(llvm::cast<mlir::RankedTensorType>(result.getType())));
    for (int64_t step = 0; step < count; ++step) {
      int64_t i = repeat.getReverse() ? count - 1 - step : step;
      iteration_[repeat] = i;
      for (size_t a = 0; a < numCarried; ++a) frame[body.getArgument(a)] = carried[a];
      for (auto [x, arg] : llvm::zip(repeat.getXs(), body.getArguments().drop_front(numCarried))) {
        // Slice before inserting: inserting into the frame may move the stacked tensor.
        Tensor slice = sliceLeading(frame.find(x)->second, i, arg.getType());
        frame[arg] = std::move(slice);
      }
      mlir::FailureOr<std::vector<Tensor>> yielded = runBlock(body, frame);
      if (failed(yielded)) {
        iteration_.erase(repeat);
        return mlir::failure();
      }
      for (size_t a = 0; a < numCarried; ++a) carried[a] = std::move((*yielded)[a]);
      for (size_t s = 0; s < stacked.size(); ++s) {
        const std::vector<double> &slice = (*yielded)[numCarried + s].data;
        std::copy(slice.begin(), slice.end(), stacked[s].data.begin() + i * slice.size());
      }
    }
    iteration_.erase(repeat);
    carried.insert(carried.end(), stacked.begin(), stacked.end());
    return carried;
  }

  static Tensor sliceLeading(const Tensor &stackedTensor, int64_t i, mlir::Type sliceType) {
    auto type = llvm::cast<mlir::RankedTensorType>(sliceType);
    int64_t size = elementCount(type.getShape());
    return Tensor{type, std::vector<double>(stackedTensor.data.begin() + i * size,
                                            stackedTensor.data.begin() + (i + 1) * size)};
  }

  Options options_;
  const ParamMap *params_;
  const InputMap *inputs_;
  llvm::DenseMap<mlir::Operation *, int64_t> iteration_;  // running repeat -> its iteration
  static constexpr int kMaxCallDepth = 256;
  int callDepth_ = 0;
};

}  // namespace

mlir::FailureOr<std::vector<Tensor>> Interpreter::run(mlir::func::FuncOp fn,
                                                      llvm::ArrayRef<Tensor> args) {
  if (fn.isExternal())
    return mlir::emitError(fn.getLoc()) << "cannot run @" << fn.getSymName()
                                        << ": it has no body";
  Evaluator evaluator(options_, nullptr, nullptr);
  return evaluator.runCallable(fn, fn.getBody(), args);
}

mlir::FailureOr<Tensor> Interpreter::runModelLoss(
    step::ModelOp model, const std::map<std::string, Tensor> &params,
    const std::map<std::string, std::vector<Tensor>> &inputs) {
  Evaluator evaluator(options_, &params, &inputs);
  return evaluator.runModel(model);
}

}  // namespace stepc::interp
