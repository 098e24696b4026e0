//===- SinkLayerUpdates.cpp - the --step-sink-layer-updates pass ---------===//
//
// Moves the per-layer part of the update into the repeat that produces the layer's gradient
// (see Passes.td). What may move is decided first, for the whole chain at once: an op moves
// only with everything it feeds, so that no per-layer value has to be stacked out of the
// repeat again (that would cost the memory the move saves).
//
//===----------------------------------------------------------------------===//
#include "compiler/Autodiff/Autodiff.h"
#include "compiler/Autodiff/GradBuilder.h"
#include "compiler/Training/Passes.h"
#include "compiler/Training/UpdatedArguments.h"
#include "mlir/IR/Dominance.h"
#include "llvm/ADT/MapVector.h"

namespace stepc::train {

#define GEN_PASS_DEF_SINKLAYERUPDATES
#include "compiler/Training/Passes.h.inc"

namespace {

using mlir::Operation;
using mlir::Value;

// Values at most this large that a moved op reads and that do not depend on the repeat are
// computed before it: scalars such as the learning rate and Adam's bias corrections.
constexpr int64_t kHoistElements = 4096;

bool isElementwise(Operation *op) {
  return llvm::isa<step::NegOp, step::AbsOp, step::ExpOp, step::LogOp, step::SqrtOp,
                   step::RsqrtOp, step::TanhOp, step::SigmoidOp, step::ReluOp, step::SiluOp,
                   step::ErfOp, step::SinOp, step::CosOp, step::GeluOp, step::LeakyReluOp,
                   step::PowOp, step::AddOp, step::SubOp, step::MulOp, step::DivOp, step::MaxOp,
                   step::MinOp, step::CompareOp, step::SelectOp, step::CastOp>(op);
}

mlir::RankedTensorType tensorType(Value v) {
  return llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
}

mlir::RankedTensorType dropLeading(mlir::RankedTensorType t) {
  return mlir::RankedTensorType::get(t.getShape().drop_front(), t.getElementType());
}

// The rank at which `op` reads its operands: a sum's input's, an elementwise op's result's.
int64_t readRank(Operation *op) {
  Value read = llvm::isa<step::SumOp>(op) ? op->getOperand(0) : op->getResult(0);
  return tensorType(read).getRank();
}

llvm::SmallVector<int64_t> sumAxes(step::SumOp op) {
  int64_t rank = tensorType(op.getInput()).getRank();
  llvm::SmallVector<int64_t> axes;
  for (mlir::Attribute a : op.getAxes()) {
    int64_t v = llvm::cast<mlir::IntegerAttr>(a).getInt();
    axes.push_back(v < 0 ? v + rank : v);
  }
  return axes;
}

class Sinker {
 public:
  Sinker(step::RepeatOp repeat, llvm::ArrayRef<int> updated, mlir::DominanceInfo &dominance)
      : repeat(repeat), count(repeat.getCount()), block(repeat->getBlock()), updated(updated),
        dominance(dominance) {}

  void run();

 private:
  // How a moved op reads an operand: a per-layer value inside the repeat (its stacked result
  // or another moved op's), the slice of a stacked tensor from before it (a new `over`
  // operand), or the value itself (lower rank: it broadcasts the same in the body).
  enum class Use { kLayer, kOver, kCapture, kInvalid };
  // A moved op: per layer (stacked outside), or a sum over the layers (carried).
  enum class Kind { kLayer, kSum };

  bool isStackedResult(Value v) {
    auto r = llvm::dyn_cast<mlir::OpResult>(v);
    return r && r.getOwner() == repeat.getOperation() &&
           r.getResultNumber() >= repeat.getInits().size();
  }
  Use classify(Value v, int64_t rank);
  bool hoistable(Value v);
  bool valid(Operation *op);
  void hoist(Value v, llvm::SetVector<Operation *> &ops);

  step::RepeatOp repeat;
  int64_t count;
  mlir::Block *block;
  llvm::ArrayRef<int> updated;
  mlir::DominanceInfo &dominance;
  llvm::MapVector<Operation *, Kind> moved;
  llvm::DenseMap<Operation *, bool> hoistMemo;
};

Sinker::Use Sinker::classify(Value v, int64_t rank) {
  auto t = tensorType(v);
  if (!t || !t.hasStaticShape()) return Use::kInvalid;
  Operation *def = v.getDefiningOp();
  bool layer = isStackedResult(v) || (def && moved.count(def) && moved.lookup(def) == Kind::kLayer);
  if (layer) return t.getRank() == rank ? Use::kLayer : Use::kInvalid;
  if (def && (moved.count(def) || def == repeat.getOperation())) return Use::kInvalid;
  if (t.getRank() == rank)
    return t.getDimSize(0) == count && dominance.properlyDominates(v, repeat) ? Use::kOver
                                                                              : Use::kInvalid;
  if (t.getRank() < rank)
    return dominance.properlyDominates(v, repeat) || hoistable(v) ? Use::kCapture : Use::kInvalid;
  return Use::kInvalid;
}

// Whether `v`, defined after the repeat in its block, is small, pure and independent of it.
bool Sinker::hoistable(Value v) {
  if (dominance.properlyDominates(v, repeat)) return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != block || def == repeat.getOperation() || moved.count(def))
    return false;
  if (auto it = hoistMemo.find(def); it != hoistMemo.end()) return it->second;
  hoistMemo[def] = false;  // a cycle cannot occur in SSA; this only guards the recursion
  bool ok = def->getNumRegions() == 0 && mlir::isMemoryEffectFree(def);
  for (Value r : def->getResults()) {
    auto t = tensorType(r);
    ok = ok && t && t.hasStaticShape() && t.getNumElements() <= kHoistElements;
  }
  for (Value operand : def->getOperands()) ok = ok && hoistable(operand);
  hoistMemo[def] = ok;
  return ok;
}

void Sinker::hoist(Value v, llvm::SetVector<Operation *> &ops) {
  if (dominance.properlyDominates(v, repeat)) return;
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands()) hoist(operand, ops);
  ops.insert(def);
}

// Whether `op` may move given the others: its operands can be read in the body, and a
// per-layer result is used only by moved ops or returned as an update of a stacked argument.
bool Sinker::valid(Operation *op) {
  Kind kind = moved.lookup(op);
  Value result = op->getResult(0);
  auto type = tensorType(result);
  if (kind == Kind::kSum)
    return classify(op->getOperand(0), tensorType(op->getOperand(0)).getRank()) == Use::kLayer;
  for (Value operand : op->getOperands())
    if (classify(operand, readRank(op)) == Use::kInvalid) return false;
  for (mlir::OpOperand &use : result.getUses()) {
    Operation *user = use.getOwner();
    if (moved.count(user)) continue;
    if (!llvm::isa<mlir::func::ReturnOp>(user) || user->getBlock() != block) return false;
    int arg = updated[use.getOperandNumber()];
    if (arg < 0) return false;
    Value argument = block->getArgument(arg);
    if (argument.getType() != type) return false;
  }
  return true;
}

void Sinker::run() {
  // Candidates in order, each reading the repeat's stacked results or earlier candidates.
  for (Operation *op = repeat->getNextNode(); op; op = op->getNextNode()) {
    if (op->getNumResults() != 1) continue;
    auto type = tensorType(op->getResult(0));
    if (!type || !type.hasStaticShape()) continue;
    if (auto sum = llvm::dyn_cast<step::SumOp>(op)) {
      llvm::SmallVector<int64_t> axes = sumAxes(sum);
      Use in = classify(sum.getInput(), tensorType(sum.getInput()).getRank());
      if (!llvm::is_contained(axes, 0)) {
        if (in == Use::kLayer || in == Use::kOver) moved[op] = Kind::kLayer;
      } else if (in == Use::kLayer && !sum.getKeepdim()) {
        moved[op] = Kind::kSum;
      }
      continue;
    }
    if (!isElementwise(op) || type.getRank() == 0 || type.getDimSize(0) != count) continue;
    if (llvm::all_of(op->getOperands(),
                     [&](Value v) { return classify(v, type.getRank()) != Use::kInvalid; }))
      moved[op] = Kind::kLayer;
  }
  // Drop what cannot move, and what only feeds it, to a fixed point.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = moved.begin(); it != moved.end();) {
      if (valid(it->first)) {
        ++it;
        continue;
      }
      it = moved.erase(it);
      changed = true;
    }
  }
  bool useful = llvm::any_of(moved, [&](auto &entry) {
    return entry.second == Kind::kSum ||
           llvm::any_of(entry.first->getUsers(),
                        [](Operation *u) { return llvm::isa<mlir::func::ReturnOp>(u); });
  });
  if (!useful) return;

  // Small independent values the moved ops read go before the repeat, in their order.
  llvm::SetVector<Operation *> hoisted;
  for (auto &[op, kind] : moved)
    for (Value operand : op->getOperands())
      if (classify(operand, readRank(op)) == Use::kCapture)
        hoist(operand, hoisted);
  llvm::SmallVector<Operation *> hoistOrder(hoisted.begin(), hoisted.end());
  llvm::sort(hoistOrder, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : hoistOrder) op->moveBefore(repeat);

  // The new repeat: carried sums after the carried values, new `over` operands after the old.
  mlir::OpBuilder b(repeat);
  mlir::Location loc = repeat.getLoc();
  size_t numCarried = repeat.getInits().size();
  size_t numStacked = repeat.getStackedResults().size();
  llvm::SmallVector<Value> inits(repeat.getInits()), xs(repeat.getXs());
  auto overIndex = [&](Value v) {
    auto it = llvm::find(xs, v);
    if (it != xs.end()) return static_cast<int64_t>(it - xs.begin());
    xs.push_back(v);
    return static_cast<int64_t>(xs.size() - 1);
  };
  ad::GradBuilder g(b, loc);
  llvm::SmallVector<Operation *> sums, returned;
  for (auto &[op, kind] : moved) {
    if (kind == Kind::kSum) {
      sums.push_back(op);
      inits.push_back(g.zerosLike(op->getResult(0).getType()));
      continue;
    }
    for (Value operand : op->getOperands())
      if (classify(operand, readRank(op)) == Use::kOver)
        overIndex(operand);
    if (llvm::any_of(op->getUsers(), [](Operation *u) { return llvm::isa<mlir::func::ReturnOp>(u); }))
      returned.push_back(op);
  }
  llvm::SmallVector<int64_t> stackOver;
  auto oldStackOver = repeat->getAttrOfType<mlir::DenseI64ArrayAttr>("step.stack_over");
  llvm::SmallVector<unsigned> keptStacked;
  for (size_t s = 0; s < numStacked; ++s) {
    Value r = repeat.getResult(numCarried + s);
    if (llvm::all_of(r.getUsers(), [&](Operation *u) { return moved.count(u) > 0; })) continue;
    keptStacked.push_back(s);
    stackOver.push_back(oldStackOver ? oldStackOver[s] : -1);
  }
  for (Operation *op : returned) {
    mlir::OpOperand &use = *llvm::find_if(op->getResult(0).getUses(), [](mlir::OpOperand &u) {
      return llvm::isa<mlir::func::ReturnOp>(u.getOwner());
    });
    stackOver.push_back(overIndex(block->getArgument(updated[use.getOperandNumber()])));
  }
  llvm::SmallVector<mlir::Type> types;
  for (Value v : inits) types.push_back(v.getType());
  for (unsigned s : keptStacked) types.push_back(repeat.getResult(numCarried + s).getType());
  for (Operation *op : returned) types.push_back(op->getResult(0).getType());
  auto next = b.create<step::RepeatOp>(loc, types, repeat.getNameAttr(), repeat.getCountAttr(),
                                       inits, xs, repeat.getReverseAttr(),
                                       repeat.getReversibleAttr());
  for (mlir::NamedAttribute a : repeat->getDiscardableAttrs()) next->setAttr(a.getName(), a.getValue());
  next->setAttr("step.stack_over", b.getDenseI64ArrayAttr(stackOver));
  next.getBody().takeBody(repeat.getBody());
  mlir::Block &body = next.getBody().front();
  for (auto [k, op] : llvm::enumerate(sums))
    body.insertArgument(numCarried + k, op->getResult(0).getType(), loc);
  size_t firstOver = numCarried + sums.size();
  for (size_t j = repeat.getXs().size(); j < xs.size(); ++j)
    body.addArgument(dropLeading(tensorType(xs[j])), loc);
  auto yield = llvm::cast<step::YieldOp>(body.getTerminator());

  // The moved ops, per layer, before the yield.
  b.setInsertionPoint(yield);
  ad::GradBuilder gb(b, loc);
  llvm::DenseMap<Value, Value> inner;  // a per-layer value outside -> the layer's slice
  for (size_t s = 0; s < numStacked; ++s)
    inner[repeat.getResult(numCarried + s)] = yield.getOperand(numCarried + s);
  llvm::SmallVector<Value> sumValues;
  for (auto &[op, kind] : moved) {
    Value result = op->getResult(0);
    auto type = tensorType(result);
    if (kind == Kind::kSum) {
      auto sum = llvm::cast<step::SumOp>(op);
      llvm::SmallVector<int64_t> rest;
      for (int64_t a : sumAxes(sum))
        if (a != 0) rest.push_back(a - 1);
      Value slice = inner.lookup(sum.getInput());
      Value part = rest.empty() ? slice : gb.sum(slice, rest);
      Value acc = body.getArgument(numCarried + sumValues.size());
      sumValues.push_back(gb.add(acc, part));
      continue;
    }
    Operation *clone = b.clone(*op);
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      switch (classify(operand, readRank(op))) {
        case Use::kLayer: clone->setOperand(i, inner.lookup(operand)); break;
        case Use::kOver: clone->setOperand(i, body.getArgument(firstOver + overIndex(operand))); break;
        default: break;
      }
    }
    if (auto sum = llvm::dyn_cast<step::SumOp>(clone)) {
      llvm::SmallVector<int64_t> axes;
      for (int64_t a : sumAxes(llvm::cast<step::SumOp>(op))) axes.push_back(a - 1);
      sum.setAxesAttr(b.getI64ArrayAttr(axes));
    }
    clone->getResult(0).setType(dropLeading(type));
    inner[result] = clone->getResult(0);
  }
  llvm::SmallVector<Value> yielded(yield.getOperands().take_front(numCarried));
  yielded.append(sumValues);
  for (unsigned s : keptStacked) yielded.push_back(yield.getOperand(numCarried + s));
  for (Operation *op : returned) yielded.push_back(inner.lookup(op->getResult(0)));
  yield->setOperands(yielded);

  // Everything outside now reads the new repeat.
  for (size_t i = 0; i < numCarried; ++i) repeat.getResult(i).replaceAllUsesWith(next.getResult(i));
  for (auto [k, op] : llvm::enumerate(sums))
    op->getResult(0).replaceAllUsesWith(next.getResult(numCarried + k));
  size_t firstStacked = numCarried + sums.size();
  for (auto [k, s] : llvm::enumerate(keptStacked))
    repeat.getResult(numCarried + s).replaceUsesWithIf(
        next.getResult(firstStacked + k), [&](mlir::OpOperand &u) { return !moved.count(u.getOwner()); });
  for (auto [k, op] : llvm::enumerate(returned))
    op->getResult(0).replaceUsesWithIf(
        next.getResult(firstStacked + keptStacked.size() + k),
        [](mlir::OpOperand &u) { return llvm::isa<mlir::func::ReturnOp>(u.getOwner()); });
  llvm::SmallVector<Operation *> order;
  for (auto &entry : moved) order.push_back(entry.first);
  for (Operation *op : llvm::reverse(order)) op->erase();
  repeat->erase();
  ad::eraseDeadStepOps(next.getBody());
}

struct SinkLayerUpdatesPass : impl::SinkLayerUpdatesBase<SinkLayerUpdatesPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<mlir::func::FuncOp>()) {
      if (fn.isExternal()) continue;
      llvm::SmallVector<int> updated = updatedArguments(fn);
      auto repeats = llvm::to_vector(fn.getBody().front().getOps<step::RepeatOp>());
      for (step::RepeatOp repeat : repeats) {
        mlir::DominanceInfo dominance(fn);
        Sinker(repeat, updated, dominance).run();
      }
    }
  }
};

}  // namespace
}  // namespace stepc::train
