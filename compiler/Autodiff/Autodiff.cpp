//===- Autodiff.cpp - reverse-mode differentiation of step IR -------------===//
#include "compiler/Autodiff/Autodiff.h"

#include <cstdio>

#include "compiler/Autodiff/GradBuilder.h"
#include "dialects/step/IR/ReversibleCoupling.h"
#include "dialects/step/IR/StepDialect.h"
#include "llvm/ADT/DenseSet.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace stepc::ad {

namespace {
std::string &flippedVjp() {
  static std::string name;
  return name;
}
}  // namespace

void setFlippedVjpForTesting(std::string opName) { flippedVjp() = std::move(opName); }
namespace {

using mlir::Operation;
using mlir::Value;

class Differentiator {
 public:
  explicit Differentiator(mlir::OpBuilder &builder) : b(builder) {}

  /// The replacement of a value whose op was rewritten (following chains), or the value.
  Value current(Value v) const {
    for (auto it = replaced.find(v); it != replaced.end(); it = replaced.find(v)) v = it->second;
    return v;
  }

  mlir::FailureOr<llvm::SmallVector<Value>> run(llvm::ArrayRef<Operation *> forward,
                                                llvm::ArrayRef<std::pair<Value, Value>> seeds,
                                                llvm::ArrayRef<Value> wrt) {
    analyseActivity(forward, seeds, wrt);
    for (auto [value, grad] : seeds)
      if (isActive(value)) accumulate(value, grad);
    for (Operation *op : llvm::reverse(forward)) {
      if (llvm::none_of(op->getResults(), [&](Value r) { return adjoint.count(r); })) continue;
      if (llvm::none_of(op->getOperands(), [&](Value v) { return isActive(v); }) &&
          !llvm::isa<step::RepeatOp>(op))
        continue;
      if (failed(differentiate(op))) return mlir::failure();
    }
    llvm::SmallVector<Value> grads;
    for (Value w : wrt) {
      Value g = adjoint.lookup(w);
      grads.push_back(g ? g : GradBuilder(b, w.getLoc()).zerosLike(w.getType()));
    }
    return grads;
  }

 private:
  // Active values are float tensors that depend on a `wrt` value and that a seed depends on.
  void analyseActivity(llvm::ArrayRef<Operation *> forward,
                       llvm::ArrayRef<std::pair<Value, Value>> seeds, llvm::ArrayRef<Value> wrt) {
    llvm::DenseSet<Value> varied(wrt.begin(), wrt.end()), useful;
    auto usedFromAbove = [](Operation *op) {
      llvm::SetVector<Value> captured;
      for (mlir::Region &region : op->getRegions())
        mlir::getUsedValuesDefinedAbove(region, captured);
      return captured;
    };
    for (Operation *op : forward) {
      bool in = llvm::any_of(op->getOperands(), [&](Value v) { return varied.contains(v); }) ||
                llvm::any_of(usedFromAbove(op), [&](Value v) { return varied.contains(v); });
      if (in)
        for (Value r : op->getResults()) varied.insert(r);
    }
    for (auto [value, grad] : seeds) useful.insert(value);
    for (Operation *op : llvm::reverse(forward)) {
      if (llvm::none_of(op->getResults(), [&](Value r) { return useful.contains(r); })) continue;
      for (Value v : op->getOperands()) useful.insert(v);
      for (Value v : usedFromAbove(op)) useful.insert(v);
    }
    for (Value v : varied)
      if (useful.contains(v) && isFloatTensor(v.getType())) active.insert(v);
    this->varied = std::move(varied);
  }

  bool isActive(Value v) const { return active.contains(v); }

  void accumulate(Value v, Value g) {
    if (!g) return;
    auto [it, inserted] = adjoint.try_emplace(v, g);
    if (!inserted) it->second = GradBuilder(b, v.getLoc()).add(it->second, g);
  }

  mlir::LogicalResult differentiate(Operation *op) {
    if (auto repeat = llvm::dyn_cast<step::RepeatOp>(op)) return differentiateRepeat(repeat);
    if (auto custom = llvm::dyn_cast<step::CustomGradOp>(op)) return differentiateCustom(custom);
    auto vjp = llvm::dyn_cast<step::DifferentiableOpInterface>(op);
    if (!vjp)
      return op->emitError() << "cannot differentiate through '" << op->getName()
                             << "': it has no gradient rule, and the loss needs a gradient "
                                "through it";
    llvm::SmallVector<Value> resultGrads, operandGrads;
    for (Value r : op->getResults()) resultGrads.push_back(adjoint.lookup(r));
    mlir::Block *block = b.getInsertionBlock();
    mlir::Block::iterator end = b.getInsertionPoint();
    Operation *before = end == block->begin() ? nullptr : &*std::prev(end);
    if (failed(vjp.buildVjp(b, resultGrads, operandGrads))) return mlir::failure();
    // The gradient's ops are named after the op they differentiate, at its location, so a
    // later stage can say "the gradient of op 'step.gelu'" (--debug-nan) where a bare name
    // would say 'step.mul'.
    auto name = mlir::NameLoc::get(
        mlir::StringAttr::get(op->getContext(), "gradient of " + op->getName().getStringRef()),
        op->getLoc());
    for (mlir::Block::iterator it = before ? std::next(before->getIterator()) : block->begin();
         it != end; ++it)
      it->walk([&](Operation *inner) { inner->setLoc(name); });
    if (!flippedVjp().empty() && op->getName().getStringRef() == flippedVjp())
      for (Value &grad : operandGrads)
        if (grad) grad = GradBuilder(b, op->getLoc()).neg(grad);
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
      if (isActive(operand)) accumulate(operand, grad);
    return mlir::success();
  }

  mlir::LogicalResult differentiateRepeat(step::RepeatOp forward);

  // The user's backward region, inlined with the inputs and the result adjoints.
  mlir::LogicalResult differentiateCustom(step::CustomGradOp op) {
    mlir::Block &backward = op.getBackward().front();
    mlir::IRMapping map;
    for (auto [arg, input] : llvm::zip(backward.getArguments(), op.getInputs()))
      map.map(arg, input);
    for (auto [k, result] : llvm::enumerate(op.getResults())) {
      Value adj = adjoint.lookup(result);
      map.map(backward.getArgument(op.getInputs().size() + k),
              adj ? adj : GradBuilder(b, op.getLoc()).zerosLike(result.getType()));
    }
    for (Operation &inner : backward.without_terminator()) b.clone(inner, map);
    for (auto [input, grad] : llvm::zip(op.getInputs(), backward.getTerminator()->getOperands()))
      if (isActive(input)) accumulate(input, map.lookupOrDefault(grad));
    return mlir::success();
  }

  mlir::OpBuilder &b;
 public:
  // --rebuild-error (emitGradients): each reversible repeat's backward also measures its
  // rebuilt inputs against the forward's; the measures (f64 scalars) of this sweep's level.
  bool measureRebuild = false;
  llvm::SmallVector<Value> rebuildErrors;

 private:
  llvm::DenseSet<Value> varied, active;
  llvm::DenseMap<Value, Value> adjoint;
  llvm::DenseMap<Value, Value> replaced;  // results of rewritten repeats -> their replacements
};

llvm::SmallVector<unsigned> floatIndices(mlir::ValueRange values) {
  llvm::SmallVector<unsigned> out;
  for (auto [i, v] : llvm::enumerate(values))
    if (isFloatTensor(v.getType())) out.push_back(i);
  return out;
}

mlir::RankedTensorType stackedType(int64_t count, mlir::Type slice) {
  auto t = llvm::cast<mlir::RankedTensorType>(slice);
  llvm::SmallVector<int64_t> shape{count};
  shape.append(t.getShape().begin(), t.getShape().end());
  return mlir::RankedTensorType::get(shape, t.getElementType());
}

// The carried slots of `repeat` whose values can depend on a varied value: those whose init is
// varied, or whose next value depends (through the body, to a fixed point) on a varied init,
// `over` slice or captured value. Only these need adjoints in the backward repeat.
llvm::SmallVector<bool> variedCarriedSlots(step::RepeatOp repeat,
                                           const llvm::DenseSet<Value> &outerVaried) {
  mlir::Block &body = repeat.getBody().front();
  size_t numCarried = repeat.getInits().size();
  llvm::DenseSet<Value> varied;
  for (auto [i, x] : llvm::enumerate(repeat.getXs()))
    if (outerVaried.contains(x)) varied.insert(body.getArgument(numCarried + i));
  llvm::SmallVector<bool> slots(numCarried, false);
  for (auto [i, init] : llvm::enumerate(repeat.getInits())) slots[i] = outerVaried.contains(init);
  auto yielded = body.getTerminator()->getOperands();
  bool changed = true;
  while (changed) {
    changed = false;
    llvm::DenseSet<Value> inside(varied);
    for (size_t i = 0; i < numCarried; ++i)
      if (slots[i]) inside.insert(body.getArgument(i));
    body.walk([&](Operation *op) {
      bool in = llvm::any_of(op->getOperands(), [&](Value v) {
        return inside.contains(v) || outerVaried.contains(v);
      });
      if (in)
        for (Value r : op->getResults()) inside.insert(r);
    });
    for (size_t i = 0; i < numCarried; ++i)
      if (!slots[i] && (inside.contains(yielded[i]) || outerVaried.contains(yielded[i]))) {
        slots[i] = true;
        changed = true;
      }
  }
  return slots;
}

// The ops of a repeat body whose outputs the forward saves for the backward instead of
// recomputing them there: matmuls and convolutions that depend on the iteration, the weight
// GEMMs that are nearly all of a layer's FLOPs. Batched matmuls (attention scores,
// [B, H, T, T]) are never saved: they cost more memory than they save time (JAX's
// `dots_with_no_batch_dims_saveable`), and everything cheap (norms, activations) is recomputed
// from the saved layer input.
//
// Without a memory budget the backward keeps every candidate (the least recompute, as
// PyTorch's autograd and JAX's default keep every residual): a fixed cap would be a guess at
// the machine. Products of fewer than kMinSavedFlops per element are never kept: a reduction
// that short costs less to redo than its output costs to write, keep and read back (2 x 32 for
// byte_lm_residual_small's 32 -> 256 projections). Candidates are ordered by the work each
// saved element spares (FLOPs per output element: 2 x the reduction length), most first.
//
// `stepc compile --memory-budget` chooses for the budget: it sets `step.saved_gemms = K` on the
// repeat (compiler/Codegen/MemoryBudget.h), and the backward keeps the first K candidates in
// that order, or marks the repeat reversible.
constexpr double kMinSavedFlops = 256;

double flopsPerElement(Operation *op) {
  auto dim = [](Value v, int fromEnd) {
    auto t = llvm::cast<mlir::RankedTensorType>(v.getType());
    return static_cast<double>(t.getDimSize(t.getRank() - fromEnd));
  };
  if (auto mm = llvm::dyn_cast<step::MatmulOp>(op))
    return 2 * dim(mm.getLhs(), mm.getTransposeLhs() ? 2 : 1);
  auto conv = llvm::cast<step::Conv1dOp>(op);
  auto w = llvm::cast<mlir::RankedTensorType>(conv.getWeight().getType());
  return 2 * static_cast<double>(w.getNumElements()) / dim(conv.getResult(), 1);
}

llvm::SmallVector<Operation *> savedProducts(step::RepeatOp repeat) {
  llvm::SmallVector<GemmCandidate> byValue = savedGemmCandidates(repeat);
  llvm::DenseSet<Operation *> chosen;
  auto given = repeat->getAttrOfType<mlir::IntegerAttr>("step.saved_gemms");
  for (const GemmCandidate &c : byValue)
    if (!given || static_cast<int64_t>(chosen.size()) < given.getInt()) chosen.insert(c.op);
  llvm::SmallVector<Operation *> out;  // in body order
  for (Operation &op : repeat.getBody().front())
    if (chosen.contains(&op)) out.push_back(&op);
  return out;
}

// What the backward of `repeat` keeps per iteration, in words (`NAME info` prints it; the
// attribute `step.memory` on the forward repeat carries it): for a reversible repeat nothing,
// otherwise each iteration's carried input and the saved `products` (savedProducts).
std::string describeMemory(step::RepeatOp repeat, llvm::ArrayRef<Operation *> products) {
  auto bytes = [&](mlir::Type t) {
    auto r = llvm::cast<mlir::RankedTensorType>(t);
    return static_cast<double>(repeat.getCount()) * r.getNumElements() *
           std::max<unsigned>(1, r.getElementTypeBitWidth() / 8);
  };
  auto mib = [](double b) {
    char text[32];
    if (b < (1 << 20)) std::snprintf(text, sizeof text, "%.1f KiB", b / (1 << 10));
    else std::snprintf(text, sizeof text, "%.1f MiB", b / (1 << 20));
    return std::string(text);
  };
  std::string head = "repeat '" + repeat.getName().str() + "' (" +
                     std::to_string(repeat.getCount()) + " iterations): ";
  std::string why;
  if (auto choice = repeat->getAttrOfType<mlir::StringAttr>("step.memory_choice"))
    why = " (" + choice.getValue().str() + ")";
  if (repeat.getReversible())
    return head + "reversible: the backward rebuilds each layer's inputs from its outputs, "
                  "nothing is stored per layer" + why;
  double inputs = 0, saved = 0;
  for (Value init : repeat.getInits()) inputs += bytes(init.getType());
  for (Operation *op : products) saved += bytes(op->getResult(0).getType());
  size_t gemms = 0;
  repeat.getBody().walk([&](Operation *op) { gemms += llvm::isa<step::MatmulOp, step::Conv1dOp>(op); });
  if (why.empty() && !repeat->hasAttr("step.saved_gemms"))
    why = " (no --memory-budget: the least recompute)";
  return head + "stores each iteration's input (" + mib(inputs) + ") and " +
         std::to_string(products.size()) + " of its " + std::to_string(gemms) +
         " GEMM outputs (" + mib(saved) + "); the backward recomputes the rest" + why;
}

// Rebuilds a reversible layer's carried inputs from its `outputs` at `b` (ReversibleCoupling.h):
// in the inverse's order, x_k = (y_k - g_k) / c, each g_k recomputed from the outputs, the
// layer's `over` slices `xs` and the inputs rebuilt before it. Empty on failure.
llvm::SmallVector<Value> rebuildInputs(mlir::OpBuilder &b, step::RepeatOp repeat,
                                       llvm::ArrayRef<step::CouplingStep> inverse,
                                       llvm::ArrayRef<Value> outputs, mlir::ValueRange xs) {
  mlir::Block &body = repeat.getBody().front();
  size_t numCarried = outputs.size();
  auto yielded = llvm::cast<step::YieldOp>(body.getTerminator()).getValues();
  mlir::IRMapping map;
  for (size_t j = 0; j < numCarried; ++j) map.map(yielded[j], outputs[j]);
  for (size_t j = 0; j < xs.size(); ++j) map.map(body.getArgument(numCarried + j), xs[j]);
  std::function<Value(Value)> emit = [&](Value v) -> Value {
    if (Value m = map.lookupOrNull(v)) return m;
    if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(v))
      return arg.getOwner() == &body ? Value() : v;  // an input not rebuilt yet: a bug
    Operation *def = v.getDefiningOp();
    if (def->getBlock() != &body) return v;  // from outside the layer
    llvm::SetVector<Value> uses(def->getOperands().begin(), def->getOperands().end());
    mlir::getUsedValuesDefinedAbove(def->getRegions(), uses);
    for (Value u : uses)
      if (!emit(u)) return Value();
    b.clone(*def, map);
    return map.lookup(v);
  };
  llvm::SmallVector<Value> inputs(numCarried);
  GradBuilder g(b, repeat.getLoc());
  for (const step::CouplingStep &step : inverse) {
    Value term = emit(step.g);
    if (!term) return {};
    Value x = g.sub(outputs[step.slot], term);
    if (step.exactScale) {
      // Exact streams: undo the exact scaling with the buffer it left (bit for bit).
      step::ExactScaleOp scaled = step.exactScale;
      Operation *undo = g.create<step::ExactScaleOp>(
          {x, outputs[step.bufferSlot]},
          {g.i64Attr("num", scaled.getNum()), g.i64Attr("den", scaled.getDen()),
           g.i64Attr("bits", scaled.getBits()), g.unitAttr("inverse")});
      x = undo->getResult(0);
      inputs[step.bufferSlot] = undo->getResult(1);
      map.map(body.getArgument(step.bufferSlot), undo->getResult(1));
    } else if (step.scale) {
      Value c = emit(step.scale);
      if (!c) return {};
      x = g.div(x, c);
    }
    inputs[step.slot] = x;
    map.map(body.getArgument(step.slot), x);
  }
  if (g.failed()) return {};
  return inputs;
}

// How far a rebuilt value is from the forward's: max|rebuilt - x| / max|x| in f64 (an integer
// slot, an exact_scale's buffer, cast; an all-zero x, the absolute difference). 0 means
// bit for bit (up to the sign of a zero): the reconstruction check of --rebuild-error.
Value rebuildError(GradBuilder &g, Value rebuilt, Value original) {
  mlir::Type f64 = g.builder().getF64Type();
  auto wide = [&](Value v) {
    return elementTypeOf(v).isF64() ? v
                                    : g.one<step::CastOp>({v}, {g.attr("to", mlir::TypeAttr::get(f64))});
  };
  Value r = wide(rebuilt), x = wide(original);
  llvm::SmallVector<int64_t> all;
  for (int64_t i = 0, n = static_cast<int64_t>(shapeOf(x).size()); i < n; ++i) all.push_back(i);
  auto maxAbs = [&](Value v) {
    Value a = g.one<step::AbsOp>({v});
    return all.empty() ? a : g.one<step::ReduceMaxOp>({a}, {g.arrayAttr("axes", all)});
  };
  Value scale = maxAbs(x);
  scale = g.select(g.compare(scale, g.scalar(0.0, f64), "gt"), scale, g.scalar(1.0, f64));
  return g.div(maxAbs(g.sub(r, x)), scale);
}

mlir::LogicalResult Differentiator::differentiateRepeat(step::RepeatOp original) {
  mlir::Location loc = original.getLoc();
  size_t numCarried = original.getInits().size(), numXs = original.getXs().size();
  size_t numStacked = original.getStackedResults().size();
  int64_t count = original.getCount();
  llvm::SmallVector<Value> resultAdjoints;
  for (Value r : original.getResults()) resultAdjoints.push_back(adjoint.lookup(r));

  // 1. Rewrite the forward repeat to also stack each iteration's carried input, and the
  //    outputs of its weight GEMMs (see savedProducts). A reversible repeat stacks nothing:
  //    its backward rebuilds each layer's inputs from its outputs (ReversibleCoupling.h).
  // The forward rewrite happens in place; the backward goes where the sweep is emitting.
  bool reversible = original.getReversible();
  llvm::SmallVector<step::CouplingStep> inverse;
  if (reversible) {
    std::string why;
    auto derived = step::deriveCouplingInverse(original, why);
    if (failed(derived)) return original.emitOpError() << "cannot be inverted: " << why;
    inverse = *derived;
  }
  mlir::OpBuilder::InsertPoint backwardPoint = b.saveInsertionPoint();
  b.setInsertionPoint(original);
  llvm::SmallVector<Operation *> products;
  if (!reversible) products = savedProducts(original);
  size_t numProducts = products.size();
  // The segments of a reversible repeat (ForwardClone): an outer repeat whose layer is an inner
  // reversible repeat. Its backward carries each segment's outputs down like a reversible
  // repeat does, but takes them from the stored input of the segment above (the last one's
  // from the results) instead of recomputing the segment's forward: the inner backward
  // rebuilds its layers from them.
  bool segments = !reversible && original->hasAttr("step.segments");
  size_t numSavedInputs = reversible ? 0 : numCarried;
  size_t numRebuilt = reversible || segments ? numCarried : 0;
  // --rebuild-error: a layer holding reversible repeats (segments) carries the largest of
  // their measures out of its backward, one f64 slot after the rebuilt inputs.
  bool nestedRebuild = measureRebuild && !reversible &&
                       original.getBody()
                           .walk([](step::RepeatOp r) {
                             return r.getReversible() ? mlir::WalkResult::interrupt()
                                                      : mlir::WalkResult::advance();
                           })
                           .wasInterrupted();
  size_t numErr = nestedRebuild ? 1 : 0;
  llvm::SmallVector<mlir::Type> types(original.getResultTypes());
  if (!reversible)
    for (Value init : original.getInits()) types.push_back(stackedType(count, init.getType()));
  for (Operation *op : products) types.push_back(stackedType(count, op->getResult(0).getType()));
  auto forward = b.create<step::RepeatOp>(loc, types, original.getNameAttr(),
                                          original.getCountAttr(), original.getInits(),
                                          original.getXs(), original.getReverseAttr(),
                                          original.getReversibleAttr());
  for (llvm::StringRef name : {"step.saved_gemms", "step.memory_choice", "step.segments"})
    if (mlir::Attribute a = original->getAttr(name)) forward->setAttr(name, a);
  forward.getBody().takeBody(original.getBody());
  mlir::Block &body = forward.getBody().front();
  auto yield = llvm::cast<step::YieldOp>(body.getTerminator());
  llvm::SmallVector<Value> yielded(yield.getValues());
  for (size_t i = 0; i < numSavedInputs; ++i) yielded.push_back(body.getArgument(i));
  for (Operation *op : products) yielded.push_back(op->getResult(0));
  yield->setOperands(yielded);
  original->replaceAllUsesWith(forward->getResults().take_front(original->getNumResults()));
  // Adjoints may be forward values (a custom gradient can yield one): point them at the new op.
  for (auto [from, to] : llvm::zip(original->getResults(), forward->getResults())) {
    replaced[from] = to;
    for (auto &entry : adjoint)
      if (entry.second == from) entry.second = to;
    for (Value &adj : resultAdjoints)
      if (adj == from) adj = to;
  }
  llvm::SmallVector<bool> variedSlots = variedCarriedSlots(forward, varied);
  forward->setAttr("step.memory", b.getStringAttr(describeMemory(forward, products)));
  original->erase();
  auto saved = forward->getResults().drop_front(numCarried + numStacked);

  // 2. One reverse repeat: carried adjoints (and capture accumulators; for a reversible repeat,
  //    the layer's outputs, from which it rebuilds its inputs) in, per-layer saved inputs,
  //    `over` slices and stacked-result adjoints over the iterations.
  llvm::SetVector<Value> capturedSet;
  mlir::getUsedValuesDefinedAbove(forward.getBody(), capturedSet);
  llvm::SmallVector<Value> captures;
  for (Value v : capturedSet)
    if (isActive(v)) captures.push_back(v);
  // Only carried slots that can depend on what we differentiate, and active `over` inputs, get
  // adjoints: data-only paths through the layer are not differentiated.
  llvm::SmallVector<unsigned> carriedF, xsF;
  for (unsigned i : floatIndices(forward.getInits()))
    if (variedSlots[i]) carriedF.push_back(i);
  for (unsigned j : floatIndices(forward.getXs()))
    if (isActive(forward.getXs()[j])) xsF.push_back(j);
  llvm::SmallVector<unsigned> stackedF = floatIndices(forward.getResults().slice(numCarried, numStacked));

  b.restoreInsertionPoint(backwardPoint);
  GradBuilder g(b, loc);
  llvm::SmallVector<Value> inits, xs;
  for (unsigned i : carriedF)
    inits.push_back(resultAdjoints[i] ? resultAdjoints[i]
                                      : g.zerosLike(forward.getResult(i).getType()));
  for (Value c : captures) inits.push_back(g.zerosLike(c.getType()));
  for (size_t i = 0; i < numRebuilt; ++i) inits.push_back(forward.getResult(i));
  if (nestedRebuild) inits.push_back(g.scalar(0.0, b.getF64Type()));
  for (Value s : saved) xs.push_back(s);
  for (Value x : forward.getXs()) xs.push_back(x);
  for (unsigned j : stackedF) {
    Value r = forward.getResult(numCarried + j);
    Value adj = resultAdjoints[numCarried + j];
    xs.push_back(adj ? adj : g.zerosLike(r.getType()));
  }
  llvm::SmallVector<mlir::Type> resultTypes;
  for (Value v : inits) resultTypes.push_back(v.getType());
  for (unsigned j : xsF) resultTypes.push_back(forward.getXs()[j].getType());
  mlir::UnitAttr reverse = forward.getReverse() ? nullptr : b.getUnitAttr();
  auto backward = b.create<step::RepeatOp>(
      loc, resultTypes, b.getStringAttr(forward.getName() + "_grad"), forward.getCountAttr(),
      inits, xs, reverse);
  mlir::Block *gradBody = b.createBlock(&backward.getBody());
  for (Value v : inits) gradBody->addArgument(v.getType(), loc);
  for (Value v : xs) {
    auto t = llvm::cast<mlir::RankedTensorType>(v.getType());
    gradBody->addArgument(mlir::RankedTensorType::get(t.getShape().drop_front(), t.getElementType()),
                          loc);
  }
  size_t argDc = 0, argCap = carriedF.size(), argRebuilt = argCap + captures.size();
  size_t argErr = argRebuilt + numRebuilt, argSaved = argErr + numErr;
  size_t argProducts = argSaved + numSavedInputs, argX = argProducts + numProducts;
  size_t argDy = argX + numXs;

  // Recompute the layer from its saved (or rebuilt) input, then apply its VJP.
  b.setInsertionPointToStart(gradBody);
  mlir::IRMapping map;
  llvm::SmallVector<Value> layerInputs;
  if (reversible) {
    llvm::SmallVector<Value> outputs;
    for (size_t i = 0; i < numCarried; ++i) outputs.push_back(gradBody->getArgument(argRebuilt + i));
    layerInputs =
        rebuildInputs(b, forward, inverse, outputs, gradBody->getArguments().slice(argX, numXs));
    if (layerInputs.empty()) return forward.emitOpError("could not rebuild its layer's inputs");
  } else {
    for (size_t i = 0; i < numCarried; ++i) layerInputs.push_back(gradBody->getArgument(argSaved + i));
  }
  for (size_t i = 0; i < numCarried; ++i) map.map(body.getArgument(i), layerInputs[i]);
  for (size_t j = 0; j < numXs; ++j)
    map.map(body.getArgument(numCarried + j), gradBody->getArgument(argX + j));
  llvm::SmallVector<Operation *> recomputed;
  llvm::DenseMap<Operation *, Operation *> cloneOf;
  for (Operation &op : body.without_terminator()) {
    recomputed.push_back(b.clone(op, map));
    cloneOf[&op] = recomputed.back();
  }
  llvm::SmallVector<std::pair<Value, Value>> seeds;
  for (auto [k, i] : llvm::enumerate(carriedF))
    seeds.push_back({map.lookupOrDefault(yield.getValues()[i]), gradBody->getArgument(argDc + k)});
  for (auto [k, j] : llvm::enumerate(stackedF))
    seeds.push_back(
        {map.lookupOrDefault(yield.getValues()[numCarried + j]), gradBody->getArgument(argDy + k)});
  llvm::SmallVector<Value> wrt;
  for (unsigned i : carriedF) wrt.push_back(layerInputs[i]);
  for (unsigned j : xsF) wrt.push_back(gradBody->getArgument(argX + j));
  for (Value c : captures) wrt.push_back(c);
  llvm::SmallVector<Value> recomputedOutputs;
  for (size_t i = 0; i < numCarried; ++i) recomputedOutputs.push_back(map.lookupOrDefault(yield.getValues()[i]));
  Differentiator inner(b);
  inner.measureRebuild = measureRebuild;
  auto grads = inner.run(recomputed, seeds, wrt);
  if (failed(grads)) return mlir::failure();
  if (segments) {
    // The inner backward reads the segment's outputs from the carried values; the recomputed
    // inner forward is then dead (what its backward keeps is said on the forward's copy).
    for (size_t i = 0; i < numCarried; ++i) {
      Value now = inner.current(recomputedOutputs[i]);
      if (auto rewritten = now.getDefiningOp<step::RepeatOp>())
        if (mlir::Attribute memory = rewritten->getAttr("step.memory"))
          body.walk([&](step::RepeatOp r) { r->setAttr("step.memory", memory); });
      now.replaceAllUsesWith(gradBody->getArgument(argRebuilt + i));
    }
  }
  // The saved GEMM outputs replace their recomputation; the recomputed GEMMs (kept until now so
  // that their VJPs were built) are then dead. The VJPs use the GEMMs' operands, which are
  // still recomputed: only the GEMMs themselves are saved.
  for (auto [k, op] : llvm::enumerate(products)) {
    Operation *clone = cloneOf.lookup(op);
    clone->getResult(0).replaceAllUsesWith(gradBody->getArgument(argProducts + k));
    if (clone->use_empty()) clone->erase();
  }
  GradBuilder gi(b, loc);
  llvm::SmallVector<Value> yieldValues;
  for (size_t k = 0; k < carriedF.size(); ++k) yieldValues.push_back((*grads)[k]);
  for (size_t l = 0; l < captures.size(); ++l)
    yieldValues.push_back(gi.add(gradBody->getArgument(argCap + l),
                                 (*grads)[carriedF.size() + xsF.size() + l]));
  for (size_t i = 0; i < numRebuilt; ++i) yieldValues.push_back(layerInputs[i]);  // the layer below's outputs
  if (nestedRebuild) {
    Value worst = gradBody->getArgument(argErr);
    for (Value e : inner.rebuildErrors) worst = gi.one<step::MaxOp>({worst, e});
    yieldValues.push_back(worst);
  }
  for (size_t k = 0; k < xsF.size(); ++k) yieldValues.push_back((*grads)[carriedF.size() + k]);
  b.create<step::YieldOp>(loc, yieldValues);
  if (gi.failed() || g.failed()) return mlir::failure();

  // Hand the results to the enclosing sweep, which continues after the backward repeat.
  b.setInsertionPointAfter(backward);
  for (auto [k, i] : llvm::enumerate(carriedF))
    if (isActive(forward.getInits()[i])) accumulate(forward.getInits()[i], backward.getResult(k));
  for (auto [l, c] : llvm::enumerate(captures))
    accumulate(c, backward.getResult(carriedF.size() + l));
  size_t firstRebuilt = carriedF.size() + captures.size();
  for (auto [k, j] : llvm::enumerate(xsF))
    if (isActive(forward.getXs()[j]))
      accumulate(forward.getXs()[j], backward.getResult(firstRebuilt + numRebuilt + numErr + k));
  // After the last reverse iteration the rebuilt values are the repeat's own inputs: their
  // distance from the forward's inits is the whole depth's reconstruction error.
  if (measureRebuild && reversible) {
    GradBuilder ge(b, loc);
    for (size_t i = 0; i < numRebuilt; ++i)
      rebuildErrors.push_back(
          rebuildError(ge, backward.getResult(firstRebuilt + i), forward.getInits()[i]));
    if (ge.failed()) return mlir::failure();
  }
  if (nestedRebuild) rebuildErrors.push_back(backward.getResult(firstRebuilt + numRebuilt));
  return mlir::success();
}

}  // namespace

double gemmFlops(mlir::Operation *gemm) {
  auto result = llvm::cast<mlir::RankedTensorType>(gemm->getResult(0).getType());
  return flopsPerElement(gemm) * static_cast<double>(result.getNumElements());
}

llvm::SmallVector<GemmCandidate> savedGemmCandidates(mlir::Operation *op) {
  auto repeat = llvm::cast<step::RepeatOp>(op);
  mlir::Block &body = repeat.getBody().front();
  llvm::SmallVector<GemmCandidate> candidates;
  for (Operation &op : body.without_terminator()) {
    if (!llvm::isa<step::MatmulOp, step::Conv1dOp>(op) || op.getNumResults() != 1 ||
        !isFloatTensor(op.getResult(0).getType()))
      continue;
    auto type = llvm::cast<mlir::RankedTensorType>(op.getResult(0).getType());
    bool perIteration = llvm::any_of(op.getOperands(), [&](Value v) {
      return v.getParentBlock() == &body;  // a block argument or a value computed in the body
    });
    if (perIteration && type.hasStaticShape() && flopsPerElement(&op) >= kMinSavedFlops)
      candidates.push_back({&op, flopsPerElement(&op),
                            static_cast<double>(type.getNumElements()) *
                                std::max<unsigned>(1, type.getElementTypeBitWidth() / 8)});
  }
  llvm::stable_sort(candidates, [](const GemmCandidate &a, const GemmCandidate &b) {
    return a.flopsPerElement > b.flopsPerElement;
  });
  return candidates;
}

mlir::FailureOr<llvm::SmallVector<Value>> emitGradients(
    mlir::OpBuilder &builder, llvm::ArrayRef<Operation *> forward,
    llvm::ArrayRef<std::pair<Value, Value>> seeds, llvm::ArrayRef<Value> wrt,
    llvm::MutableArrayRef<Value> tracked, llvm::SmallVectorImpl<Value> *rebuildErrors) {
  Differentiator differentiator(builder);
  differentiator.measureRebuild = rebuildErrors != nullptr;
  auto grads = differentiator.run(forward, seeds, wrt);
  for (Value &v : tracked) v = differentiator.current(v);
  if (rebuildErrors)
    rebuildErrors->append(differentiator.rebuildErrors.begin(), differentiator.rebuildErrors.end());
  return grads;
}

void eraseDeadStepOps(mlir::Region &region) {
  bool changed = true;
  while (changed) {
    llvm::SmallVector<Operation *> dead;
    region.walk([&](Operation *op) {
      if (llvm::isa<step::StepDialect>(op->getDialect()) && mlir::isOpTriviallyDead(op))
        dead.push_back(op);
    });
    // Erase only the outermost dead ops (their nested ops go with them), decided before any
    // erasure; users come after their producers, so erase in reverse order.
    llvm::DenseSet<Operation *> deadSet(dead.begin(), dead.end());
    llvm::SmallVector<Operation *> outermost;
    for (Operation *op : dead) {
      bool nested = false;
      for (Operation *p = op->getParentOp(); p && !nested; p = p->getParentOp())
        nested = deadSet.contains(p);
      if (!nested) outermost.push_back(op);
    }
    for (Operation *op : llvm::reverse(outermost)) op->erase();
    changed = !outermost.empty();
  }
}

}  // namespace stepc::ad
