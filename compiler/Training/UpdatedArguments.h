//===- UpdatedArguments.h - which argument each @train_step result updates -*- C++ -*-===//
//
// @train_step returns each new param and optimizer-state tensor; the result and the argument it
// replaces carry the same step.role, step.name and step.slot. Shared by
// --step-sink-layer-updates (a stacked update written over its argument's slices) and
// --step-update-in-place (the update written into its argument's buffer).
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_COMPILER_TRAINING_UPDATEDARGUMENTS_H
#define STEPC_COMPILER_TRAINING_UPDATEDARGUMENTS_H

#include <map>
#include <string>
#include <tuple>

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace stepc::train {

/// For each result of `fn`, the index of the param or state argument it updates, or -1.
inline llvm::SmallVector<int> updatedArguments(mlir::func::FuncOp fn) {
  using Key = std::tuple<std::string, std::string, std::string>;  // role, name, slot
  auto keyOf = [](mlir::DictionaryAttr attrs) {
    auto get = [&](llvm::StringRef k) {
      auto s = attrs ? llvm::dyn_cast_or_null<mlir::StringAttr>(attrs.get(k)) : nullptr;
      return s ? s.getValue().str() : std::string();
    };
    return Key{get("step.role"), get("step.name"), get("step.slot")};
  };
  std::map<Key, int> argOf;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    Key k = keyOf(fn.getArgAttrDict(i));
    if (std::get<0>(k) == "param" || std::get<0>(k) == "state") argOf[k] = static_cast<int>(i);
  }
  llvm::SmallVector<int> out;
  for (unsigned i = 0; i < fn.getNumResults(); ++i) {
    auto it = argOf.find(keyOf(fn.getResultAttrDict(i)));
    out.push_back(it == argOf.end() ? -1 : it->second);
  }
  return out;
}

}  // namespace stepc::train

#endif  // STEPC_COMPILER_TRAINING_UPDATEDARGUMENTS_H
