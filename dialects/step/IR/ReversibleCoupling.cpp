//===- ReversibleCoupling.cpp - the inverse of a reversible repeat's layer ===//
#include "dialects/step/IR/ReversibleCoupling.h"

#include <algorithm>
#include <cmath>

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
  // An integer slot is an exact_scale's information buffer, recovered with the stream the
  // exact_scale scales: it yields that op's new buffer.
  llvm::SmallVector<int> bufferOf(numCarried, -1);  // buffer slot -> the stream's slot
  auto isBuffer = [&](unsigned k) {
    return !llvm::isa<mlir::FloatType>(
        llvm::cast<mlir::RankedTensorType>(body.getArgument(k).getType()).getElementType());
  };
  for (unsigned k = 0; k < numCarried; ++k) {
    mlir::Value x = body.getArgument(k), y = yielded[k];
    forms[k].slot = k;
    if (isBuffer(k)) {
      auto scaled = y.getDefiningOp<ExactScaleOp>();
      if (!scaled || scaled.getInverse() || y != scaled.getBufferOut() || scaled.getBuffer() != x)
        return why = "carried value #" + std::to_string(k) +
                     " is not a float tensor (only an exact_scale's information buffer, yielded "
                     "as that exact_scale's new buffer, may be an integer)",
               mlir::failure();
      continue;
    }
    auto add = y.getDefiningOp<AddOp>();
    bool found = false;
    for (int side = 0; add && side < 2 && !found; ++side) {
      mlir::Value term = side ? add.getRhs() : add.getLhs(), g = side ? add.getLhs() : add.getRhs();
      mlir::Value scale;
      ExactScaleOp exact;
      unsigned bufferSlot = 0;
      if (auto scaled = term.getDefiningOp<ExactScaleOp>();
          scaled && !scaled.getInverse() && term == scaled.getResult() && scaled.getInput() == x) {
        auto buffer = llvm::dyn_cast<mlir::BlockArgument>(scaled.getBuffer());
        if (!buffer || buffer.getOwner() != &body || buffer.getArgNumber() >= numCarried ||
            yielded[buffer.getArgNumber()] != scaled.getBufferOut())
          continue;
        exact = scaled;
        bufferSlot = buffer.getArgNumber();
      } else if (term != x) {
        auto mul = term.getDefiningOp<MulOp>();
        if (!mul) continue;
        if (mul.getLhs() == x && isNonzeroScalar(mul.getRhs())) scale = mul.getRhs();
        else if (mul.getRhs() == x && isNonzeroScalar(mul.getLhs())) scale = mul.getLhs();
        else continue;
      }
      if (g.getType() != y.getType()) continue;  // a broadcast g: its sum is not the coupling
      forms[k].g = g;
      forms[k].scale = scale;
      forms[k].exactScale = exact;
      forms[k].bufferSlot = bufferSlot;
      if (exact) {
        if (bufferOf[bufferSlot] >= 0)
          return why = "carried value #" + std::to_string(bufferSlot) +
                       " is the information buffer of two exact_scales",
                 mlir::failure();
        bufferOf[bufferSlot] = k;
      }
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
  size_t numStreams = 0;
  for (unsigned k = 0; k < numCarried; ++k) {
    if (!isBuffer(k)) {
      ++numStreams;
    } else if (bufferOf[k] < 0) {
      return why = "carried value #" + std::to_string(k) +
                   " is an exact_scale's buffer, but that exact_scale's result is not its "
                   "stream's coupling term",
             mlir::failure();
    } else {
      done[k] = true;  // recovered with its stream
    }
  }
  while (order.size() < numStreams) {
    bool progress = false;
    for (unsigned k = 0; k < numCarried; ++k) {
      if (done[k]) continue;
      llvm::DenseMap<mlir::Value, bool> memo;
      if (!computable(forms[k].g, body, known, memo)) continue;
      order.push_back(forms[k]);
      known.insert(body.getArgument(k));
      if (forms[k].exactScale) known.insert(body.getArgument(forms[k].bufferSlot));
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

std::optional<std::pair<int64_t, int64_t>> exactRatio(double c) {
  if (!(c > 0) || !std::isfinite(c)) return std::nullopt;
  for (int64_t den = 1; den <= kExactRatioMaxDen; ++den) {
    double scaled = c * static_cast<double>(den);
    double num = std::round(scaled);
    if (num >= 1 && num < 1e9 && std::abs(scaled - num) <= num * 0x1p-23)
      return std::make_pair(static_cast<int64_t>(num), den);
  }
  return std::nullopt;
}

double exactBufferBits(int64_t num, int64_t den, int64_t count) {
  double growth = std::max(0.0, std::log2(static_cast<double>(den) / static_cast<double>(num)));
  return std::log2(static_cast<double>(den) * static_cast<double>(std::max(num, den))) + 1 +
         static_cast<double>(count) * growth;
}

}  // namespace stepc::step
