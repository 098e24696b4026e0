//===- LossFunction.cpp - a model's loss as a plain function -------------===//
#include "compiler/Training/LossFunction.h"

#include "compiler/Training/ForwardClone.h"

namespace stepc::train {

mlir::FailureOr<mlir::func::FuncOp> buildLossFunction(mlir::ModuleOp module, step::ModelOp model,
                                                      llvm::StringRef name, bool differentiate) {
  // It builds func ops: make sure their dialect is loaded (model files do not load it).
  module.getContext()->getOrLoadDialect<mlir::func::FuncDialect>();
  mlir::OpBuilder b(module.getContext());
  llvm::SmallVector<step::ParamOp> params;
  model.getBody().walk([&](step::ParamOp p) { params.push_back(p); });
  llvm::SmallVector<std::pair<step::InputOp, unsigned>> inputs;
  for (mlir::Operation &op : model.getBody().front())
    if (auto input = llvm::dyn_cast<step::InputOp>(op))
      for (unsigned i = 0; i < input.getNumResults(); ++i) inputs.push_back({input, i});

  llvm::SmallVector<mlir::Type> types;
  llvm::SmallVector<mlir::DictionaryAttr> attrs;
  auto named = [&](llvm::StringRef role, llvm::StringRef n, std::optional<int64_t> index) {
    llvm::SmallVector<mlir::NamedAttribute> entries{
        b.getNamedAttr("step.role", b.getStringAttr(role)),
        b.getNamedAttr("step.name", b.getStringAttr(n))};
    if (index) entries.push_back(b.getNamedAttr("step.index", b.getI64IntegerAttr(*index)));
    return b.getDictionaryAttr(entries);
  };
  for (step::ParamOp p : params) {
    types.push_back(p.getStoredType());
    attrs.push_back(named("param", p.getDeclName(), std::nullopt));
  }
  for (auto [input, i] : inputs) {
    types.push_back(input.getResult(i).getType());
    attrs.push_back(named("input", input.getName(), i));
  }
  b.setInsertionPointToEnd(module.getBody());
  auto fn = b.create<mlir::func::FuncOp>(model.getLoc(), name, b.getFunctionType(types, {}));
  mlir::Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ForwardValues values;
  for (auto [i, p] : llvm::enumerate(params)) values.params[p] = entry->getArgument(i);
  for (auto [k, in] : llvm::enumerate(inputs))
    values.inputs[in.first.getResult(in.second)] = entry->getArgument(params.size() + k);
  llvm::SmallVector<mlir::Operation *> emitted;
  mlir::FailureOr<mlir::Value> loss = emitForward(b, model, values, emitted);
  if (failed(loss)) {
    fn.erase();
    return mlir::failure();
  }
  b.create<mlir::func::ReturnOp>(model.getLoc(), *loss);
  fn.setFunctionType(b.getFunctionType(types, {loss->getType()}));
  fn.setAllArgAttrs(attrs);
  if (differentiate) fn->setAttr("step.differentiate", b.getUnitAttr());
  return fn;
}

}  // namespace stepc::train
