//===- InterpreterProgram.cpp - the reference interpreter as a StepProgram ===//
#include "compiler/Reference/InterpreterProgram.h"

#include "runtime/hal/Device.h"

#include <cmath>

namespace stepc::ref {

mlir::FailureOr<std::unique_ptr<InterpreterProgram>> InterpreterProgram::create(
    mlir::ModuleOp module, interp::Options options) {
  auto attr = module->getAttrOfType<mlir::StringAttr>("step.program");
  auto train = module.lookupSymbol<mlir::func::FuncOp>("train_step");
  auto eval = module.lookupSymbol<mlir::func::FuncOp>("eval_loss");
  if (!attr || !train || !eval)
    return module.emitError("expected @train_step, @eval_loss and step.program "
                            "(--step-describe-program)");
  rt::ProgramDescription d;
  if (rt::Status s = rt::parseProgramDescription(attr.getValue().str(), d); !s.ok())
    return module.emitError(s.message());
  return std::unique_ptr<InterpreterProgram>(
      new InterpreterProgram(std::move(d), train, eval, options));
}

rt::Status InterpreterProgram::call(mlir::func::FuncOp fn, const rt::EntryDescription &entry,
                                    const rt::StepBuffers &buffers, int64_t step,
                                    std::vector<interp::Tensor> &results) {
  std::vector<interp::Tensor> args;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    const rt::Binding &b = entry.args.at(i);
    interp::Tensor t;
    t.type = llvm::cast<mlir::RankedTensorType>(fn.getArgument(i).getType());
    t.data.resize(t.type.getNumElements());
    if (b.kind == rt::Binding::Kind::kStep) {
      t.data[0] = static_cast<double>(step);
    } else {
      const rt::TensorBuffer &src = b.kind == rt::Binding::Kind::kParam   ? buffers.params.at(b.index)
                                    : b.kind == rt::Binding::Kind::kState ? buffers.state.at(b.index)
                                                                          : buffers.batch.at(b.index);
      if (src.elements() != t.numElements())
        return rt::Status::error("buffer '" + src.name + "' has the wrong size");
      for (int64_t k = 0; k < t.numElements(); ++k)
        t.data[k] = src.f32() ? static_cast<double>(src.f32()[k]) : static_cast<double>(src.i32()[k]);
    }
    args.push_back(std::move(t));
  }
  auto out = interpreter_.run(fn, args);
  if (mlir::failed(out)) return rt::Status::error("the interpreter failed (see the error above)");
  results = std::move(*out);
  return {};
}

rt::Status InterpreterProgram::run(const rt::StepBuffers &buffers, int64_t step,
                                   rt::StepMetrics &metrics) {
  std::vector<interp::Tensor> results;
  const rt::EntryDescription &entry = description_.train;
  if (rt::Status s = call(train_, entry, buffers, step, results); !s.ok()) return s;
  metrics = rt::emptyMetrics(info());
  for (size_t i = 0; i < results.size(); ++i) {
    const rt::Binding &b = entry.results.at(i);
    const std::vector<double> &v = results[i].data;
    if (b.kind == rt::Binding::Kind::kParam || b.kind == rt::Binding::Kind::kState) {
      const rt::TensorBuffer &dst = b.kind == rt::Binding::Kind::kParam ? buffers.params.at(b.index)
                                                                        : buffers.state.at(b.index);
      for (size_t k = 0; k < v.size(); ++k) dst.f32()[k] = static_cast<float>(v[k]);
      continue;
    }
    if (b.kind == rt::Binding::Kind::kGrad) {
      grads_.resize(info().params.size());
      grads_[b.index].assign(v.begin(), v.end());  // f64 -> f32, as the compiled step returns
      continue;
    }
    // Metrics are reported as the f32 values the compiled step returns.
    rt::setMetric(metrics, b.metric, static_cast<float>(v.at(0)));
  }
  return {};
}

rt::Status InterpreterProgram::evaluate(const rt::StepBuffers &buffers, int64_t step,
                                        double &loss) {
  std::vector<interp::Tensor> results;
  if (rt::Status s = call(eval_, description_.eval, buffers, step, results); !s.ok()) return s;
  loss = static_cast<float>(results.at(0).data.at(0));
  return {};
}

rt::Status InterpreterProgram::selectDevice(const std::string &device) {
  return rt::selectCpuStepDevice(device);
}

std::string InterpreterProgram::describeGpu() const { return rt::describeGpu(); }

}  // namespace stepc::ref
