//===- SinkLayerUpdates.cpp - the --step-sink-layer-updates pass ---------===//
//
// Moves the per-layer part of the update into the repeat that produces the layer's gradient
// (see Passes.td). What may move is decided first, for the whole chain at once: an op moves
// only with everything it feeds, so that no per-layer value has to be stacked out of the
// repeat again (that would cost the memory the move saves). A segmented stack's update is
// lifted to the segments' shape first (liftSegments) and moved in two steps, into the
// segments' repeat and then into the layers' (sinkIntoInner).
//
//===----------------------------------------------------------------------===//
#include "compiler/Autodiff/Autodiff.h"
#include "compiler/Autodiff/GradBuilder.h"
#include "compiler/Training/Elementwise.h"
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

// The type `t` [S·L, ...] has as [S, L, ...].
mlir::RankedTensorType splitLeading(mlir::RankedTensorType t, int64_t segments) {
  llvm::SmallVector<int64_t> shape{segments, t.getDimSize(0) / segments};
  shape.append(t.getShape().begin() + 1, t.getShape().end());
  return mlir::RankedTensorType::get(shape, t.getElementType());
}

// Whether `from` [S, L, ...] and `to` [S·L, ...] are one shape with the leading axes merged.
bool mergesLeading(mlir::RankedTensorType from, mlir::RankedTensorType to) {
  return from && to && from.getRank() >= 2 && to.getRank() == from.getRank() - 1 &&
         from.getDimSize(0) * from.getDimSize(1) == to.getDimSize(0) &&
         from.getShape().drop_front(2) == to.getShape().drop_front();
}

// A reshape of `v` to `type` computed before `repeat`, or null.
Value reshapeBefore(Value v, mlir::Type type, step::RepeatOp repeat,
                    mlir::DominanceInfo &dominance) {
  for (Operation *u : v.getUsers())
    if (auto reshape = llvm::dyn_cast<step::ReshapeOp>(u))
      if (reshape.getType() == type && dominance.properlyDominates(reshape.getResult(), repeat))
        return reshape.getResult();
  return nullptr;
}

// A reversible repeat run in segments (ForwardClone) has a backward that is an outer repeat
// over the S segments with the layers' repeat inside, and the update reads each gradient as
// reshape([S, L, ...] -> [S·L, ...]). Rewrites the update's elementwise ops and sums on such
// values into the same ops on [S, L, ...] values (the parameters and state they read are
// reshaped before the repeat; a result something else reads is reshaped back), so that the
// Sinker can move them into the outer repeat, and from its body into the inner one.
void liftSegments(step::RepeatOp repeat, mlir::DominanceInfo &dominance) {
  int64_t segments = repeat.getCount();
  llvm::DenseMap<Value, Value> lifted;  // a [S·L, ...] value -> its [S, L, ...] form
  llvm::SmallVector<Operation *> roots;
  int64_t rows = -1;
  for (Value r : repeat.getStackedResults())
    for (Operation *user : r.getUsers())
      if (auto reshape = llvm::dyn_cast<step::ReshapeOp>(user))
        if (mergesLeading(tensorType(r), tensorType(reshape.getResult())) &&
            (rows < 0 || rows == tensorType(r).getDimSize(0) * tensorType(r).getDimSize(1))) {
          rows = tensorType(r).getDimSize(0) * tensorType(r).getDimSize(1);
          lifted[reshape.getResult()] = r;
          roots.push_back(reshape);
        }
  if (lifted.empty()) return;
  mlir::OpBuilder b(repeat);
  // The backward's own reshape of a parameter to segments, if it has one: the repeat then
  // reads and writes the parameter through one value.
  auto reshaped = [&](Value v, mlir::RankedTensorType type) -> Value {
    if (Value r = reshapeBefore(v, type, repeat, dominance)) return r;
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(repeat);
    return b.create<step::ReshapeOp>(v.getLoc(), type, v, b.getI64ArrayAttr(type.getShape()));
  };
  // The ops to rewrite: elementwise ops and sums on [S·L, ...] values that are gradients of
  // the stack (the roots above), results of other such ops, or the function's arguments
  // (parameters and optimizer state: AGC's and the optimizer's reads), and lower-rank values;
  // then only those connected to a gradient (a [S·L, ...] argument may be another tensor of
  // that many rows, e.g. a head whose width equals the depth).
  mlir::Block *entry = repeat->getBlock();
  auto isArgument = [&](Value v) {
    auto arg = llvm::dyn_cast<mlir::BlockArgument>(v);
    auto t = tensorType(v);
    return arg && arg.getOwner() == entry && t && t.hasStaticShape() && t.getRank() >= 1 &&
           t.getDimSize(0) == rows;
  };
  llvm::SetVector<Operation *> candidates;
  auto layered = [&](Value v) {  // a root, or a candidate's [S·L, ...] result
    if (lifted.count(v)) return true;
    Operation *def = v.getDefiningOp();
    if (!def || !candidates.contains(def)) return false;
    auto sum = llvm::dyn_cast<step::SumOp>(def);
    return !sum || !llvm::is_contained(sumAxes(sum), 0);
  };
  for (Operation *op = repeat->getNextNode(); op; op = op->getNextNode()) {
    if (op->getNumResults() != 1) continue;
    auto type = tensorType(op->getResult(0));
    if (!type || !type.hasStaticShape()) continue;
    if (auto sum = llvm::dyn_cast<step::SumOp>(op)) {
      Value in = sum.getInput();
      bool overLayers = llvm::is_contained(sumAxes(sum), 0);
      if (layered(in) && !(overLayers && sum.getKeepdim()))
        candidates.insert(op);
      continue;
    }
    if (!isElementwise(op) || type.getRank() == 0 || type.getDimSize(0) != rows) continue;
    if (llvm::all_of(op->getOperands(), [&](Value v) {
          auto t = tensorType(v);
          return layered(v) || isArgument(v) || (t && t.getRank() < type.getRank());
        }))
      candidates.insert(op);
  }
  llvm::SetVector<Operation *> kept;
  for (Operation *op : candidates)
    if (llvm::any_of(op->getOperands(), [&](Value v) { return lifted.count(v) > 0; }))
      kept.insert(op);
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *op : candidates) {
      if (kept.contains(op)) continue;
      bool linked = llvm::any_of(op->getOperands(), [&](Value v) {
                      Operation *def = v.getDefiningOp();
                      return def && kept.contains(def);
                    }) ||
                    llvm::any_of(op->getUsers(), [&](Operation *u) { return kept.contains(u); });
      if (linked) changed = kept.insert(op);
    }
  }
  llvm::SmallVector<Operation *> rewritten;
  for (Operation *op : candidates) {
    if (!kept.contains(op)) continue;
    auto type = tensorType(op->getResult(0));
    b.setInsertionPoint(op);
    if (auto sum = llvm::dyn_cast<step::SumOp>(op)) {
      llvm::SmallVector<int64_t> axes = sumAxes(sum), liftedAxes;
      for (int64_t a : axes) {
        if (a == 0) liftedAxes.push_back(0);
        liftedAxes.push_back(a + 1);
      }
      auto clone = llvm::cast<step::SumOp>(b.clone(*op));
      clone->setOperand(0, lifted.lookup(sum.getInput()));
      clone.setAxesAttr(b.getI64ArrayAttr(liftedAxes));
      if (llvm::is_contained(axes, 0)) {
        op->getResult(0).replaceAllUsesWith(clone.getResult());
      } else {
        clone.getResult().setType(splitLeading(type, segments));
        lifted[op->getResult(0)] = clone.getResult();
      }
      rewritten.push_back(op);
      continue;
    }
    llvm::SmallVector<Value> operands;
    for (Value v : op->getOperands()) {
      if (Value l = lifted.lookup(v)) operands.push_back(l);
      else if (isArgument(v) && tensorType(v).getRank() == type.getRank())
        operands.push_back(reshaped(v, splitLeading(tensorType(v), segments)));
      else operands.push_back(v);
    }
    Operation *clone = b.clone(*op);
    clone->setOperands(operands);
    clone->getResult(0).setType(splitLeading(type, segments));
    lifted[op->getResult(0)] = clone->getResult(0);
    rewritten.push_back(op);
  }
  // What still reads a [S·L, ...] value reads the lifted one reshaped back.
  for (auto [from, to] : lifted) {
    if (llvm::all_of(from.getUsers(), [&](Operation *u) { return kept.contains(u); })) continue;
    b.setInsertionPointAfterValue(to);
    Value back = b.create<step::ReshapeOp>(from.getLoc(), from.getType(), to,
                                           b.getI64ArrayAttr(tensorType(from).getShape()));
    from.replaceUsesWithIf(back, [&](mlir::OpOperand &u) {
      return !kept.contains(u.getOwner()) && u.getOwner() != back.getDefiningOp();
    });
  }
  for (Operation *op : llvm::reverse(rewritten))
    if (op->use_empty()) op->erase();
  // The gradients' reshapes nothing reads now (they would keep the stacked results alive).
  for (Operation *root : roots)
    if (root->use_empty()) root->erase();
}

class Sinker {
 public:
  // `updated`: per operand of the terminator of the repeat's block, the block argument it
  // updates (a parameter or optimizer state, or a slice of one), or -1.
  Sinker(step::RepeatOp repeat, llvm::ArrayRef<int> updated, mlir::DominanceInfo &dominance)
      : repeat(repeat), count(repeat.getCount()), block(repeat->getBlock()), updated(updated),
        dominance(dominance) {}

  // The new repeat, or null when nothing moved.
  step::RepeatOp run();

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
  Value updateTarget(mlir::OpOperand &use);
  static bool isWaitOfStart(mlir::OpOperand &use);
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

// The value a use of a moved op's result updates (the stacked result is written over it), or
// null: the terminator's operand of a block argument of that type, or such an operand that is
// the result reshaped from [S, L, ...] to the argument's [S·L, ...] (liftSegments), where the
// argument's reshape to [S, L, ...] is computed before the repeat.
Value Sinker::updateTarget(mlir::OpOperand &use) {
  Operation *user = use.getOwner();
  Operation *terminator = block->getTerminator();
  auto argumentOf = [&](mlir::OpOperand &u) -> Value {
    if (u.getOwner() != terminator || updated[u.getOperandNumber()] < 0) return nullptr;
    return block->getArgument(updated[u.getOperandNumber()]);
  };
  Value value = use.get();
  if (user == terminator) {
    Value arg = argumentOf(use);
    return arg && arg.getType() == value.getType() ? arg : nullptr;
  }
  auto reshape = llvm::dyn_cast<step::ReshapeOp>(user);
  if (!reshape || !reshape.getResult().hasOneUse()) return nullptr;
  Value arg = argumentOf(*reshape.getResult().getUses().begin());
  if (!arg || arg.getType() != reshape.getType() ||
      !mergesLeading(tensorType(value), tensorType(arg)))
    return nullptr;
  return reshapeBefore(arg, value.getType(), repeat, dominance);
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
  if (kind == Kind::kSum)
    return classify(op->getOperand(0), tensorType(op->getOperand(0)).getRank()) == Use::kLayer;
  for (Value operand : op->getOperands())
    if (classify(operand, readRank(op)) == Use::kInvalid) return false;
  for (mlir::OpOperand &use : result.getUses())
    if (!moved.count(use.getOwner()) && !updateTarget(use) && !isWaitOfStart(use)) return false;
  return true;
}

// Whether `use` is a reduction's wait reading a moved start: the starts' results come out of
// the repeat stacked, for the wait after it.
bool Sinker::isWaitOfStart(mlir::OpOperand &use) {
  return (llvm::isa<step::AllReduceWaitOp>(use.getOwner()) &&
          use.get().getDefiningOp<step::AllReduceStartOp>()) ||
         (llvm::isa<step::ReduceScatterWaitOp>(use.getOwner()) &&
          use.get().getDefiningOp<step::ReduceScatterStartOp>());
}

step::RepeatOp Sinker::run() {
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
    // A reduce-scatter's start reads its owners table as a stacked operand: the layer's
    // slice names the layer's owner.
    bool start = llvm::isa<step::AllReduceStartOp, step::ReduceScatterStartOp>(op);
    if ((!isElementwise(op) && !start) || type.getRank() == 0 || type.getDimSize(0) != count)
      continue;
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
  auto leaves = [&](Operation *op) {  // a moved op's result used outside: an update
    return llvm::any_of(op->getUsers(), [&](Operation *u) { return !moved.count(u); });
  };
  bool useful = llvm::any_of(moved, [&](auto &entry) {
    return entry.second == Kind::kSum || leaves(entry.first);
  });
  if (!useful) return nullptr;

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
    if (leaves(op)) returned.push_back(op);
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
    mlir::OpOperand &use = *llvm::find_if(op->getResult(0).getUses(), [&](mlir::OpOperand &u) {
      return !moved.count(u.getOwner());
    });
    stackOver.push_back(isWaitOfStart(use) ? -1 : overIndex(updateTarget(use)));
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
        [&](mlir::OpOperand &u) { return !moved.count(u.getOwner()); });
  llvm::SmallVector<Operation *> order;
  for (auto &entry : moved) order.push_back(entry.first);
  for (Operation *op : llvm::reverse(order)) op->erase();
  repeat->erase();
  ad::eraseDeadStepOps(next.getBody());
  return next;
}

// Segments: the updates moved into the outer repeat run on each segment's [L, ...] slices,
// written over the slices of the `over` operands `step.stack_over` names; from there they move
// on into the layers' repeat in its body.
void sinkIntoInner(mlir::func::FuncOp fn, step::RepeatOp outer) {
  auto stackOver = outer->getAttrOfType<mlir::DenseI64ArrayAttr>("step.stack_over");
  if (!stackOver) return;
  mlir::Block &body = outer.getBody().front();
  size_t numCarried = outer.getInits().size();
  llvm::SmallVector<int> updated(body.getTerminator()->getNumOperands(), -1);
  for (auto [s, j] : llvm::enumerate(stackOver.asArrayRef()))
    if (j >= 0) updated[numCarried + s] = static_cast<int>(numCarried + j);
  for (step::RepeatOp inner : llvm::to_vector(body.getOps<step::RepeatOp>())) {
    mlir::DominanceInfo dominance(fn);
    Sinker(inner, updated, dominance).run();
  }
}

struct SinkLayerUpdatesPass : impl::SinkLayerUpdatesBase<SinkLayerUpdatesPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<mlir::func::FuncOp>()) {
      if (fn.isExternal()) continue;
      llvm::SmallVector<int> updated = updatedArguments(fn);
      auto repeats = llvm::to_vector(fn.getBody().front().getOps<step::RepeatOp>());
      for (step::RepeatOp repeat : repeats) {
        {
          mlir::DominanceInfo dominance(fn);
          liftSegments(repeat, dominance);
        }
        mlir::DominanceInfo dominance(fn);
        step::RepeatOp outer = Sinker(repeat, updated, dominance).run();
        if (outer) sinkIntoInner(fn, outer);
      }
      // A data-parallel step's last micro-batch runs in a one-iteration repeat of its own
      // (BuildTrainStep): its backward's reduction starts move into the backward as above;
      // nothing in there updates an argument.
      for (step::RepeatOp last : llvm::to_vector(fn.getBody().front().getOps<step::RepeatOp>())) {
        if (!last->hasAttr("step.rank_split_last")) continue;
        mlir::Block &body = last.getBody().front();
        llvm::SmallVector<int> none(body.getTerminator()->getNumOperands(), -1);
        for (step::RepeatOp inner : llvm::to_vector(body.getOps<step::RepeatOp>())) {
          mlir::DominanceInfo dominance(fn);
          Sinker(inner, none, dominance).run();
        }
      }
    }
  }
};

}  // namespace
}  // namespace stepc::train
