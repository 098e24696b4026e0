//===- ModelLoader.cpp - read, override and verify a model file ----------===//
#include "compiler/Model/ModelLoader.h"

#include <string>

#include "dialects/step/IR/ModelInstances.h"
#include "dialects/step/IR/ShapeRules.h"
#include "dialects/step/IR/StepAsm.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

namespace stepc {

void registerStepDialects(mlir::MLIRContext &context) {
  context.getOrLoadDialect<step::StepDialect>();
}

step::ModelOp getSingleModel(mlir::ModuleOp module) {
  auto models = step::trainedModels(module);
  if (models.size() == 1) return models.front();
  if (models.empty())
    mlir::emitError(module.getLoc()) << "expected a step.model in the file, found none";
  else
    mlir::emitError(models[1].getLoc())
        << "expected one step.model per file, found " << models.size();
  return {};
}

mlir::LogicalResult applyBatchOverride(step::ModelOp model, int64_t batch) {
  if (batch < 1) return mlir::emitError(model.getLoc()) << "--batch must be >= 1, found " << batch;
  mlir::WalkResult walk = model.getBody().walk<mlir::WalkOrder::PreOrder>(
      [&](mlir::Operation *op) -> mlir::WalkResult {
        if (auto input = llvm::dyn_cast<step::InputOp>(op)) {
          llvm::SmallVector<int64_t> shape(input.getDeclaredType().getShape());
          shape[0] = batch;
          auto declared = mlir::RankedTensorType::get(shape, input.getDeclaredType().getElementType());
          input.setType(declared);
          for (mlir::Value result : input.getResults()) {
            auto t = llvm::cast<mlir::RankedTensorType>(result.getType());
            llvm::SmallVector<int64_t> s(t.getShape());
            s[0] = batch;
            result.setType(mlir::RankedTensorType::get(s, t.getElementType()));
          }
          return mlir::WalkResult::advance();
        }
        if (auto repeat = llvm::dyn_cast<step::RepeatOp>(op)) {
          for (auto [init, arg, result] : llvm::zip(repeat.getInits(),
                                                    repeat.getBody().getArguments(),
                                                    repeat.getResults())) {
            arg.setType(init.getType());
            result.setType(init.getType());
          }
          for (auto [x, arg] : llvm::zip(repeat.getXs(), repeat.getBody().getArguments().drop_front(
                                                             repeat.getInits().size()))) {
            auto stacked = llvm::cast<mlir::RankedTensorType>(x.getType());
            arg.setType(mlir::RankedTensorType::get(stacked.getShape().drop_front(),
                                                    stacked.getElementType()));
          }
          return mlir::WalkResult::advance();
        }
        if (auto call = llvm::dyn_cast<step::CallOp>(op)) {
          auto callee =
              mlir::SymbolTable::lookupNearestSymbolFrom<step::FuncOp>(call, call.getCalleeAttr());
          if (callee && call.getArgs().getTypes() != callee.getFunctionType().getInputs()) {
            call.emitError() << "--batch cannot resize the signature of step.func @"
                             << callee.getSymName()
                             << "; write its shapes with a named dim and use --dim instead";
            return mlir::WalkResult::interrupt();
          }
          return mlir::WalkResult::advance();
        }
        if (failed(step::reinferResultTypes(op))) {
          mlir::emitRemark(op->getLoc()) << "this op no longer fits after --batch=" << batch;
          return mlir::WalkResult::interrupt();
        }
        return mlir::WalkResult::advance();
      });
  if (walk.wasInterrupted()) return mlir::failure();
  // Stacked repeat results follow their bodies' yields, known only after the bodies (post-order).
  model.getBody().walk([&](step::RepeatOp repeat) {
    auto yielded = repeat.getBody().front().getTerminator()->getOperands();
    for (auto [result, value] : llvm::zip(repeat.getStackedResults(),
                                          yielded.drop_front(repeat.getInits().size()))) {
      auto slice = llvm::cast<mlir::RankedTensorType>(value.getType());
      llvm::SmallVector<int64_t> shape{repeat.getCount()};
      shape.append(slice.getShape().begin(), slice.getShape().end());
      result.setType(mlir::RankedTensorType::get(shape, slice.getElementType()));
    }
  });
  return mlir::success();
}

mlir::FailureOr<int64_t> inputsBatch(step::ModelOp model) {
  std::optional<int64_t> batch;
  mlir::WalkResult walk = model.getBody().walk([&](step::InputOp input) {
    auto type = input.getDeclaredType();
    int64_t rows = type.getRank() > 0 ? type.getDimSize(0) : 0;
    if (rows < 1 || (batch && rows != *batch)) {
      input.emitError() << "the model's batch is the leading dim all its inputs share"
                        << (batch ? " (" + std::to_string(*batch) + " rows)" : std::string())
                        << "; this input's type " << type << " does not lead with it";
      return mlir::WalkResult::interrupt();
    }
    batch = rows;
    return mlir::WalkResult::advance();
  });
  if (walk.wasInterrupted()) return mlir::failure();
  if (!batch) return model.emitError() << "the model has no input, so no batch to scale";
  return *batch;
}

namespace {

// True if the model declares its batch as the dim B and every input leads with it: --batch is
// then --dim=B, so that what the model derives from B (N = B·S tokens, the reshapes of a
// mixture of experts) follows. Rewriting the inputs' shapes alone leaves those behind.
bool batchIsDimB(step::ModelOp model) {
  auto dims = model.getDimsAttr();
  auto b = dims ? llvm::dyn_cast_or_null<mlir::IntegerAttr>(dims.get("B")) : nullptr;
  if (!b) return false;
  bool leads = true, any = false;
  model.getBody().walk([&](step::InputOp input) {
    any = true;
    leads &= input.getDeclaredType().getRank() > 0 &&
             input.getDeclaredType().getDimSize(0) == b.getInt();
  });
  return any && leads;
}

// The file read with the overrides' config and dims (the parser takes them as it reads).
mlir::OwningOpRef<mlir::ModuleOp> parse(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context,
                                        const ModelOverrides &overrides) {
  step::setDimOverrides(overrides.dims);
  step::setModelConfig(overrides.config);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  step::setDimOverrides({});
  step::setModelConfig("");
  return module;
}

}  // namespace

mlir::OwningOpRef<mlir::ModuleOp> loadModel(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context,
                                            const ModelOverrides &given) {
  registerStepDialects(context);
  ModelOverrides overrides = given;
  if (overrides.batch && !overrides.dims.count("B")) {
    // A first reading to see how the model names its batch (parsing is cheap).
    mlir::OwningOpRef<mlir::ModuleOp> first = parse(sourceMgr, context, overrides);
    if (!first) return nullptr;
    auto models = llvm::to_vector(first->getOps<step::ModelOp>());
    if (models.size() == 1 && batchIsDimB(models.front())) {
      overrides.dims["B"] = *overrides.batch;
      overrides.batch.reset();
    }
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(sourceMgr, context, overrides);
  if (!module) return nullptr;
  if (overrides.batch) {
    step::ModelOp model = getSingleModel(*module);
    if (!model || failed(applyBatchOverride(model, *overrides.batch))) return nullptr;
  }
  if (overrides.autocastBf16) {
    step::ModelOp model = getSingleModel(*module);
    if (!model || failed(applyAutocastBf16(model))) return nullptr;
  }
  if (failed(mlir::verify(*module))) return nullptr;
  return module;
}

mlir::LogicalResult addMicroBatchInstance(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context,
                                          const ModelOverrides &given, mlir::ModuleOp module,
                                          int64_t microBatches) {
  step::ModelOp model = getSingleModel(module);
  if (!model || microBatches <= 1 || step::microBatchInstance(module, model) ||
      !batchIsDimB(model))
    return mlir::success();
  int64_t batch = llvm::cast<mlir::IntegerAttr>(model.getDimsAttr().get("B")).getInt();
  if (batch % microBatches) return mlir::success();
  {
    // Resizing the inputs suffices where nothing else follows B (the train step's own path).
    mlir::OwningOpRef<step::ModelOp> probe(llvm::cast<step::ModelOp>(model->clone()));
    mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) { return mlir::success(); });
    if (succeeded(applyBatchOverride(*probe, batch / microBatches))) return mlir::success();
  }
  ModelOverrides overrides = given;
  overrides.batch.reset();
  overrides.dims["B"] = batch / microBatches;
  mlir::OwningOpRef<mlir::ModuleOp> micro = loadModel(sourceMgr, context, overrides);
  if (!micro) return mlir::failure();
  step::ModelOp instance = getSingleModel(*micro);
  if (!instance) return mlir::failure();
  instance->remove();
  instance.setSymName((model.getSymName() + "_micro_batch").str());
  instance->setAttr(step::kMicroBatchOf, mlir::FlatSymbolRefAttr::get(model.getSymNameAttr()));
  module.getBody()->getOperations().insertAfter(model->getIterator(), instance);
  return mlir::verify(module);
}

}  // namespace stepc
