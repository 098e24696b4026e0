//===- ReversibleCoupling.cpp - the inverse of a reversible repeat's layer ===//
#include "dialects/step/IR/ReversibleCoupling.h"

#include "llvm/ADT/DenseSet.h"
#include "mlir/Transforms/RegionUtils.h"

namespace stepc::step {
namespace {

// A scalar (rank 0 or one element) nonzero constant.
bool isNonzeroScalar(mlir::Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant) return false;
  auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || dense.getNumElements() != 1) return false;
  if (auto f = llvm::dyn_cast<mlir::FloatAttr>(dense.getSplatValue<mlir::Attribute>()))
    return f.getValueAsDouble() != 0.0;
  return false;
}

// Whether `v` can be computed from `known` values (and values defined outside `body`).
bool computable(mlir::Value v, mlir::Block &body, const llvm::DenseSet<mlir::Value> &known,
                llvm::DenseMap<mlir::Value, bool> &memo) {
  if (known.contains(v)) return true;
  if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(v)) return arg.getOwner() != &body;
  mlir::Operation *def = v.getDefiningOp();
  if (def->getBlock() != &body) return true;  // from outside the layer
  if (auto it = memo.find(v); it != memo.end()) return it->second;
  memo[v] = false;  // (no cycles in SSA; this only guards the recursion)
  llvm::SetVector<mlir::Value> uses(def->getOperands().begin(), def->getOperands().end());
  mlir::getUsedValuesDefinedAbove(def->getRegions(), uses);
  bool ok = llvm::all_of(uses, [&](mlir::Value u) { return computable(u, body, known, memo); });
  memo[v] = ok;
  return ok;
}

}  // namespace

mlir::FailureOr<llvm::SmallVector<CouplingStep>> deriveCouplingInverse(RepeatOp repeat,
                                                                      std::string &why) {
  mlir::Block &body = repeat.getBody().front();
  unsigned numCarried = repeat.getInits().size();
  auto yielded = llvm::cast<YieldOp>(body.getTerminator()).getValues();
  // Per slot: y = x + g or x * c + g.
  llvm::SmallVector<CouplingStep> forms(numCarried);
  for (unsigned k = 0; k < numCarried; ++k) {
    mlir::Value x = body.getArgument(k), y = yielded[k];
    forms[k].slot = k;
    if (!llvm::isa<mlir::FloatType>(llvm::cast<mlir::RankedTensorType>(x.getType()).getElementType()))
      return why = "carried value #" + std::to_string(k) + " is not a float tensor", mlir::failure();
    auto add = y.getDefiningOp<AddOp>();
    bool found = false;
    for (int side = 0; add && side < 2 && !found; ++side) {
      mlir::Value term = side ? add.getRhs() : add.getLhs(), g = side ? add.getLhs() : add.getRhs();
      mlir::Value scale;
      if (term != x) {
        auto mul = term.getDefiningOp<MulOp>();
        if (!mul) continue;
        if (mul.getLhs() == x && isNonzeroScalar(mul.getRhs())) scale = mul.getRhs();
        else if (mul.getRhs() == x && isNonzeroScalar(mul.getLhs())) scale = mul.getLhs();
        else continue;
      }
      if (g.getType() != y.getType()) continue;  // a broadcast g: its sum is not the coupling
      forms[k].g = g;
      forms[k].scale = scale;
      found = true;
    }
    if (!found)
      return why = "carried value #" + std::to_string(k) +
                   " is not an additive coupling: the layer must yield x + g(...) or "
                   "x * c + g(...) for it (c a nonzero scalar constant, g of the same shape)",
             mlir::failure();
  }
  // Order the slots: each g from the outputs, the `over` slices, outside values and the
  // inputs recovered so far (never from its own x: that would make it implicit).
  llvm::DenseSet<mlir::Value> known;
  for (unsigned k = 0; k < numCarried; ++k) known.insert(yielded[k]);
  for (unsigned j = numCarried; j < body.getNumArguments(); ++j) known.insert(body.getArgument(j));
  llvm::SmallVector<CouplingStep> order;
  llvm::SmallVector<bool> done(numCarried, false);
  while (order.size() < numCarried) {
    bool progress = false;
    for (unsigned k = 0; k < numCarried; ++k) {
      if (done[k]) continue;
      llvm::DenseMap<mlir::Value, bool> memo;
      if (!computable(forms[k].g, body, known, memo)) continue;
      order.push_back(forms[k]);
      known.insert(body.getArgument(k));
      done[k] = true;
      progress = true;
    }
    if (!progress) {
      unsigned k = llvm::find(done, false) - done.begin();
      return why = "carried value #" + std::to_string(k) +
                   ": its coupling term depends on the input it would recover (or on another "
                   "that cannot be recovered first); a reversible layer's couplings must be "
                   "solvable one after another",
             mlir::failure();
    }
  }
  return order;
}

}  // namespace stepc::step
