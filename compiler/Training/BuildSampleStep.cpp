//===- BuildSampleStep.cpp - --step-build-sample-step ---------------------===//
//
// Incremental generation: @sample_step(params, tokens [B, 1], position, state...) ->
// (logits [B, V], state'...) runs the language model's forward (NextTokenForward.h) on one
// position, the one after the `position` tokens already fed, carrying what the later positions
// need of the earlier ones in `state`. It is @sample_logits's result, one position at a time:
// a token costs one position's work instead of the whole window's.
//
// The forward is rebuilt with the sequence axis of every position-dependent value cut to
// length 1. Most ops act on each position alone and are rebuilt on the slice as they are.
// Three kinds of op reach across positions, and each gets a state (zeros before position 0):
//   - step.cumsum along the sequence: the running sum so far; y = carry + x, carry' = y;
//   - a causal step.conv1d with kernel K: the last K - 1 inputs; the window [state, x] is
//     convolved with "valid" padding (one output) and its last K - 1 rows are the next state;
//     zeros are exactly the causal padding;
//   - step.iota along the sequence: no state, the `position` argument (plus the offset);
//   - a step.batch_matmul whose right operand depends on the sequence (attention's keys and
//     values): a cache of that operand over the whole window, this position's row written at
//     `position` (the causal mask the model applies hides the rows not written yet).
// Inside a step.repeat, each layer's state is one slice of a stacked state, scanned like the
// layer's parameters. Any other op that mixes positions (a reduction or softmax along the
// sequence, a non-causal convolution) has no such rewrite: the model
// then gets no @sample_step, `NAME info` says which op stopped it, and `sample` recomputes the
// whole window for each token.
//
// States are f32 whatever the forward's dtype (a bf16 value round-trips f32 exactly), so the
// runtime can hold them as float buffers.
//
//===----------------------------------------------------------------------===//
#include "compiler/Autodiff/GradBuilder.h"
#include "compiler/Training/Elementwise.h"
#include "compiler/Training/NextTokenForward.h"
#include "compiler/Training/Passes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

namespace stepc::train {

#define GEN_PASS_DEF_BUILDSAMPLESTEP
#include "compiler/Training/Passes.h.inc"

namespace {

using Axis = std::optional<int64_t>;

// Where states enter and leave: the function, or one repeat body inside it.
struct Scope {
  mlir::Block *block = nullptr;  // the body being built; a state enters as its argument
  Scope *outer = nullptr;        // null: the function
  int64_t count = 1;             // a repeat's iterations
  std::string prefix;            // names the states, e.g. "cell."
  // Per state of this scope: its value at the start (a block argument), the value it leaves
  // with (set when the op that updates it is built), and, inside a repeat, its stacked state
  // in the outer scope (its index there).
  llvm::SmallVector<mlir::Value> ins, outs;
  llvm::SmallVector<unsigned> outerIndex;
  llvm::SmallVector<std::string> names;  // the function scope's, for the argument names

  // A new state of `type` named `name` (after the scope's prefix); its value at the start.
  unsigned add(mlir::RankedTensorType type, const std::string &name, mlir::Location loc) {
    if (outer) {
      llvm::SmallVector<int64_t> stacked{count};
      stacked.append(type.getShape().begin(), type.getShape().end());
      outerIndex.push_back(
          outer->add(mlir::RankedTensorType::get(stacked, type.getElementType()), prefix + name, loc));
    } else {
      names.push_back(prefix + name);
    }
    ins.push_back(block->addArgument(type, loc));
    outs.push_back({});
    return ins.size() - 1;
  }
};

class Streamer {
 public:
  Streamer(mlir::Value position, std::string &whyNot) : position(position), whyNot(whyNot) {}

  // Rebuilds `src`'s ops at `b` (into `scope`'s block), one position at a time.
  mlir::LogicalResult emitBlock(mlir::Block &src, mlir::OpBuilder &b, mlir::IRMapping &map,
                                Scope &scope) {
    for (mlir::Operation &op : src.without_terminator())
      if (failed(emitOp(op, b, map, scope))) return mlir::failure();
    return mlir::success();
  }

  /// The sequence axis of a rebuilt value (none: the value does not depend on positions).
  Axis axisOf(mlir::Value v) const {
    auto it = axes.find(v);
    return it == axes.end() ? Axis() : Axis(it->second);
  }
  void setAxis(mlir::Value v, int64_t axis) { axes[v] = axis; }

 private:
  mlir::LogicalResult refuse(mlir::Operation &op, const llvm::Twine &why) {
    std::string where = "?";
    op.getLoc()->walk([&](mlir::Location l) {
      auto file = llvm::dyn_cast<mlir::FileLineColLoc>(l);
      if (!file) return mlir::WalkResult::advance();
      where = file.getFilename().str() + ":" + std::to_string(file.getLine()) + ":" +
              std::to_string(file.getColumn());
      return mlir::WalkResult::interrupt();
    });
    whyNot = (where + ": op '" + op.getName().getStringRef() + "' " + why).str();
    return mlir::failure();
  }

  static int64_t normalise(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }
  static int64_t rankOf(mlir::Value v) { return ad::rankOf(v); }

  // `op` rebuilt on the mapped operands, with `overrides` set, its result types re-inferred.
  mlir::FailureOr<mlir::Operation *> rebuild(mlir::Operation &op, mlir::OpBuilder &b,
                                             mlir::IRMapping &map,
                                             llvm::ArrayRef<mlir::NamedAttribute> overrides = {}) {
    mlir::Operation *clone = b.clone(op, map);
    for (const mlir::NamedAttribute &a : overrides) clone->setAttr(a.getName(), a.getValue());
    auto infer = llvm::dyn_cast<mlir::InferTypeOpInterface>(clone);
    llvm::SmallVector<mlir::Type> types;
    if (!infer ||
        failed(infer.inferReturnTypes(clone->getContext(), clone->getLoc(), clone->getOperands(),
                                      clone->getAttrDictionary(), clone->getPropertiesStorage(),
                                      clone->getRegions(), types))) {
      clone->erase();
      return refuse(op, "cannot be rebuilt for one position");
    }
    for (auto [result, type] : llvm::zip(clone->getResults(), types)) result.setType(type);
    return clone;
  }

  mlir::LogicalResult emitOp(mlir::Operation &op, mlir::OpBuilder &b, mlir::IRMapping &map,
                             Scope &scope) {
    if (auto repeat = llvm::dyn_cast<step::RepeatOp>(op)) return emitRepeat(repeat, b, map, scope);
    bool dependent = llvm::any_of(op.getOperands(),
                                  [&](mlir::Value v) { return axisOf(map.lookupOrDefault(v)); });
    if (!dependent) {  // the same for every position: as it is
      b.clone(op, map);
      return mlir::success();
    }
    // (Exact streams' quantize and exact_scale act on each element alone too.)
    if (isElementwise(&op) || llvm::isa<step::QuantizeOp, step::ExactScaleOp>(op))
      return emitElementwise(op, b, map);
    return llvm::TypeSwitch<mlir::Operation *, mlir::LogicalResult>(&op)
        .Case<step::SumOp, step::MeanOp, step::ReduceMaxOp>(
            [&](mlir::Operation *) { return emitReduction(op, b, map); })
        .Case<step::MatmulOp, step::BatchMatmulOp>(
            [&](mlir::Operation *) { return emitContraction(op, b, map, scope); })
        .Case<step::EmbeddingOp>([&](step::EmbeddingOp e) {
          if (axisOf(map.lookupOrDefault(e.getTable())))
            return refuse(op, "gathers from a table computed from the sequence");
          return keepAxis(op, b, map, *axisOf(map.lookup(e.getIds())));
        })
        .Case<step::SoftmaxOp, step::LogSoftmaxOp>([&](mlir::Operation *) {
          int64_t axis = *axisOf(map.lookup(op.getOperand(0)));
          int64_t along = normalise(op.getAttrOfType<mlir::IntegerAttr>("axis").getInt(),
                                    rankOf(op.getOperand(0)));
          if (along == axis) return refuse(op, "normalises along the sequence");
          return keepAxis(op, b, map, axis);
        })
        .Case<step::LayerNormOp, step::RmsNormOp>([&](mlir::Operation *) {
          Axis axis = axisOf(map.lookupOrDefault(op.getOperand(0)));
          if (!axis || *axis == rankOf(op.getOperand(0)) - 1 ||
              llvm::any_of(op.getOperands().drop_front(),
                           [&](mlir::Value v) { return axisOf(map.lookupOrDefault(v)); }))
            return refuse(op, "normalises along the sequence");
          return keepAxis(op, b, map, *axis);
        })
        .Case<step::CumsumOp>([&](step::CumsumOp c) { return emitCumsum(c, b, map, scope); })
        .Case<step::Conv1dOp>([&](step::Conv1dOp c) { return emitConv(c, b, map, scope); })
        .Case<step::IotaOp>([&](step::IotaOp i) { return emitIota(i, b, map); })
        .Case<step::ReshapeOp>([&](step::ReshapeOp r) { return emitReshape(r, b, map); })
        .Case<step::TransposeOp>([&](step::TransposeOp t) {
          int64_t axis = *axisOf(map.lookup(t.getInput()));
          auto perm = llvm::to_vector(llvm::map_range(
              t.getPerm(), [](mlir::Attribute a) { return llvm::cast<mlir::IntegerAttr>(a).getInt(); }));
          auto it = llvm::find(perm, axis);
          return keepAxis(op, b, map, it - perm.begin());
        })
        .Case<step::SplitOp, step::ConcatOp>([&](mlir::Operation *) {
          int64_t rank = rankOf(op.getOperand(0));
          int64_t along = normalise(op.getAttrOfType<mlir::IntegerAttr>("axis").getInt(), rank);
          Axis axis = axisOf(map.lookupOrDefault(op.getOperand(0)));
          for (mlir::Value v : op.getOperands())
            if (axisOf(map.lookupOrDefault(v)) != axis)
              return refuse(op, "joins values that do and do not depend on the sequence");
          if (along == *axis) return refuse(op, "splits or joins along the sequence");
          return keepAxis(op, b, map, *axis);
        })
        .Case<step::SliceOp>([&](step::SliceOp s) { return emitSlice(s, b, map); })
        .Case<step::PadOp>([&](step::PadOp p) {
          int64_t axis = *axisOf(map.lookup(p.getInput()));
          auto at = [&](mlir::ArrayAttr a) { return llvm::cast<mlir::IntegerAttr>(a[axis]).getInt(); };
          if (at(p.getLow()) != 0 || at(p.getHigh()) != 0) return refuse(op, "pads the sequence");
          return keepAxis(op, b, map, axis);
        })
        .Case<step::BroadcastOp>([&](step::BroadcastOp bc) {
          int64_t r = rankOf(bc.getResult());
          int64_t axis = *axisOf(map.lookup(bc.getInput())) + r - rankOf(bc.getInput());
          llvm::SmallVector<int64_t> shape(ad::shapeOf(bc.getResult()));
          shape[axis] = 1;
          return keepAxis(op, b, map, axis, {b.getNamedAttr("shape", b.getI64ArrayAttr(shape))});
        })
        .Default([&](mlir::Operation *) { return refuse(op, "mixes positions"); });
  }

  // Rebuilds `op`; every result has the sequence at `axis`.
  mlir::LogicalResult keepAxis(mlir::Operation &op, mlir::OpBuilder &b, mlir::IRMapping &map,
                               int64_t axis, llvm::ArrayRef<mlir::NamedAttribute> overrides = {}) {
    auto clone = rebuild(op, b, map, overrides);
    if (failed(clone)) return mlir::failure();
    for (mlir::Value r : (*clone)->getResults()) setAxis(r, axis);
    return mlir::success();
  }

  // Broadcasting ops: the sequence aligns from the right; an operand that does not depend on
  // it must not span it either (a [T, C] constant added to [B, T, C] would).
  mlir::LogicalResult emitElementwise(mlir::Operation &op, mlir::OpBuilder &b, mlir::IRMapping &map) {
    int64_t r = rankOf(op.getResult(0));
    Axis axis;
    for (mlir::Value v : op.getOperands()) {
      Axis a = axisOf(map.lookupOrDefault(v));
      if (!a) continue;
      int64_t aligned = *a + r - rankOf(v);
      if (axis && *axis != aligned) return refuse(op, "combines positions of different axes");
      axis = aligned;
    }
    for (mlir::Value v : op.getOperands()) {
      if (axisOf(map.lookupOrDefault(v))) continue;
      int64_t at = *axis - (r - rankOf(v));
      if (at >= 0 && ad::shapeOf(v)[at] != 1)
        return refuse(op, "combines the sequence with a value that spans it");
    }
    return keepAxis(op, b, map, *axis);
  }

  mlir::LogicalResult emitReduction(mlir::Operation &op, mlir::OpBuilder &b, mlir::IRMapping &map) {
    int64_t rank = rankOf(op.getOperand(0)), axis = *axisOf(map.lookup(op.getOperand(0)));
    int64_t before = 0;
    for (mlir::Attribute a : op.getAttrOfType<mlir::ArrayAttr>("axes")) {
      int64_t reduced = normalise(llvm::cast<mlir::IntegerAttr>(a).getInt(), rank);
      if (reduced == axis) return refuse(op, "reduces along the sequence");
      before += reduced < axis;
    }
    return keepAxis(op, b, map, op.hasAttr("keepdim") ? axis : axis - before);
  }

  // A matmul's rows (or batch) may be positions; its contraction and its right operand may not.
  mlir::LogicalResult emitContraction(mlir::Operation &op, mlir::OpBuilder &b, mlir::IRMapping &map,
                                      Scope &scope) {
    mlir::Value lhs = op.getOperand(0), rhs = op.getOperand(1);
    if (!axisOf(map.lookupOrDefault(lhs)))
      return refuse(op, "contracts a value of every position with one of this position");
    int64_t rl = rankOf(lhs), r = rankOf(op.getResult(0)), axis = *axisOf(map.lookup(lhs));
    int64_t contraction = op.hasAttr("transpose_lhs") ? rl - 2 : rl - 1;
    if (axis == contraction) return refuse(op, "contracts along the sequence");
    int64_t resultAxis = axis >= rl - 2 ? r - 2 : axis + r - rl;
    Axis rhsAxis = axisOf(map.lookupOrDefault(rhs));
    if (!rhsAxis) return keepAxis(op, b, map, resultAxis);
    // Attention: the right operand (keys, values) spans every position so far. It becomes a
    // cache of the whole window, this position's row written at `position`; the rows after it
    // are zeros or stale, which the model's causal mask already hides from every position.
    if (!llvm::isa<step::BatchMatmulOp>(op))
      return refuse(op, "contracts with a value computed from the sequence");
    mlir::Value streamed = map.lookup(rhs);
    mlir::Value cache = emitCache(op, streamed, *rhsAxis, ad::shapeOf(rhs), b, scope);
    if (!cache) return mlir::failure();
    map.map(rhs, cache);
    mlir::LogicalResult built = keepAxis(op, b, map, resultAxis);
    map.map(rhs, streamed);
    return built;
  }

  // A state of `x`'s values at every position of the window (its axis `axis` at full length
  // `window`), with this position's row written in: select(iota == position, x, cache).
  mlir::Value emitCache(mlir::Operation &op, mlir::Value x, int64_t axis,
                        llvm::ArrayRef<int64_t> window, mlir::OpBuilder &b, Scope &scope) {
    auto type = llvm::cast<mlir::RankedTensorType>(x.getType());
    if (!holdable(type.getElementType())) {
      (void)refuse(op, "caches a type a state cannot hold");
      return {};
    }
    ad::GradBuilder g(b, op.getLoc());
    auto full = mlir::RankedTensorType::get(window, type.getElementType());
    auto [cache, index] = addState(op, full, "cache", scope, g);
    mlir::Value spread = g.broadcastTo(x, window);
    mlir::Value rows = g.one<step::IotaOp>(
        {spread}, {g.i64Attr("axis", axis), g.attr("dtype", mlir::TypeAttr::get(b.getI32Type())),
                   g.i64Attr("offset", 0)});
    mlir::Value next = g.select(g.compare(rows, position, "eq"), spread, cache);
    setState(scope, index, next, g);
    if (g.failed()) {
      (void)refuse(op, "could not be given a cache");
      return {};
    }
    return next;
  }

  mlir::LogicalResult emitReshape(step::ReshapeOp reshape, mlir::OpBuilder &b, mlir::IRMapping &map) {
    int64_t axis = *axisOf(map.lookup(reshape.getInput()));
    llvm::ArrayRef<int64_t> in = ad::shapeOf(reshape.getInput()), out = ad::shapeOf(reshape.getResult());
    if (static_cast<int64_t>(out.size()) <= axis || in.take_front(axis + 1) != out.take_front(axis + 1))
      return refuse(*reshape, "merges or splits the sequence axis");
    llvm::SmallVector<int64_t> shape(out);
    shape[axis] = 1;
    return keepAxis(*reshape, b, map, axis, {b.getNamedAttr("shape", b.getI64ArrayAttr(shape))});
  }

  mlir::LogicalResult emitSlice(step::SliceOp slice, mlir::OpBuilder &b, mlir::IRMapping &map) {
    int64_t axis = *axisOf(map.lookup(slice.getInput()));
    auto at = [&](mlir::ArrayAttr a) { return llvm::cast<mlir::IntegerAttr>(a[axis]).getInt(); };
    bool strided = slice.getStrides() && at(*slice.getStrides()) != 1;
    if (at(slice.getStart()) != 0 || at(slice.getLimit()) != ad::shapeOf(slice.getInput())[axis] ||
        strided)
      return refuse(*slice, "takes part of the sequence");
    llvm::SmallVector<int64_t> limit;
    for (mlir::Attribute a : slice.getLimit()) limit.push_back(llvm::cast<mlir::IntegerAttr>(a).getInt());
    limit[axis] = 1;
    return keepAxis(*slice, b, map, axis, {b.getNamedAttr("limit", b.getI64ArrayAttr(limit))});
  }

  // A state of the type of `like` (one position), held in f32: its value at the start in
  // `like`'s dtype, and the index to set its new value at.
  std::pair<mlir::Value, unsigned> addState(mlir::Operation &op, mlir::RankedTensorType like,
                                            llvm::StringRef kind, Scope &scope,
                                            ad::GradBuilder &g) {
    auto f32 = mlir::RankedTensorType::get(like.getShape(), g.builder().getF32Type());
    unsigned index = scope.add(f32, (kind + "_" + llvm::Twine(counter++)).str(), op.getLoc());
    mlir::Value in = scope.ins[index];
    if (!like.getElementType().isF32())
      in = g.one<step::CastOp>({in}, {g.attr("to", mlir::TypeAttr::get(like.getElementType()))});
    return {in, index};
  }
  void setState(Scope &scope, unsigned index, mlir::Value value, ad::GradBuilder &g) {
    if (!ad::elementTypeOf(value).isF32())
      value = g.one<step::CastOp>({value}, {g.attr("to", mlir::TypeAttr::get(g.builder().getF32Type()))});
    scope.outs[index] = value;
  }
  bool holdable(mlir::Type element) {
    return llvm::isa<mlir::FloatType>(element) && element.getIntOrFloatBitWidth() <= 32;
  }

  mlir::LogicalResult emitCumsum(step::CumsumOp cumsum, mlir::OpBuilder &b, mlir::IRMapping &map,
                                 Scope &scope) {
    mlir::Value x = map.lookup(cumsum.getInput());
    int64_t axis = *axisOf(x);
    if (normalise(cumsum.getAxis(), rankOf(x)) != axis) return keepAxis(*cumsum, b, map, axis);
    if (cumsum.getReverse()) return refuse(*cumsum, "sums the sequence from its end");
    auto type = llvm::cast<mlir::RankedTensorType>(x.getType());
    if (!holdable(type.getElementType())) return refuse(*cumsum, "sums a type a state cannot hold");
    ad::GradBuilder g(b, cumsum.getLoc());
    auto [carry, index] = addState(*cumsum, type, "cumsum", scope, g);
    mlir::Value y = g.add(carry, x);  // the full window's scan adds in the same order
    setState(scope, index, y, g);
    map.map(cumsum.getResult(), y);
    setAxis(y, axis);
    return g.failed() ? refuse(*cumsum, "could not be rebuilt") : mlir::success();
  }

  mlir::LogicalResult emitConv(step::Conv1dOp conv, mlir::OpBuilder &b, mlir::IRMapping &map,
                               Scope &scope) {
    mlir::Value x = map.lookup(conv.getInput());
    if (*axisOf(x) != 1 || axisOf(map.lookupOrDefault(conv.getWeight())))
      return refuse(*conv, "convolves over values computed from the sequence");
    if (conv.getPadding() != "causal") return refuse(*conv, "is not causal");
    int64_t k = ad::shapeOf(conv.getWeight())[0];
    if (k == 1) return keepAxis(*conv, b, map, 1);  // pointwise: nothing to carry
    auto type = llvm::cast<mlir::RankedTensorType>(x.getType());
    if (!holdable(type.getElementType())) return refuse(*conv, "convolves a type a state cannot hold");
    ad::GradBuilder g(b, conv.getLoc());
    auto history = mlir::RankedTensorType::get({type.getDimSize(0), k - 1, type.getDimSize(2)},
                                               type.getElementType());
    auto [earlier, index] = addState(*conv, history, "conv1d", scope, g);
    mlir::Value window = g.one<step::ConcatOp>({earlier, x}, {g.i64Attr("axis", 1)});  // [B, K, C]
    mlir::Value y = g.one<step::Conv1dOp>(
        {window, map.lookupOrDefault(conv.getWeight())},
        {g.attr("padding", b.getStringAttr("valid")), g.i64Attr("groups", conv.getGroups())});
    setState(scope, index,
             g.one<step::SliceOp>({window}, {g.arrayAttr("start", {0, 1, 0}),
                                             g.arrayAttr("limit", {type.getDimSize(0), k,
                                                                   type.getDimSize(2)})}),
             g);
    map.map(conv.getResult(), y);
    setAxis(y, 1);
    return g.failed() ? refuse(*conv, "could not be rebuilt") : mlir::success();
  }

  // Positions along the sequence are `position` (+ offset); along other axes, as they were.
  mlir::LogicalResult emitIota(step::IotaOp iota, mlir::OpBuilder &b, mlir::IRMapping &map) {
    mlir::Value like = map.lookup(iota.getLike());
    int64_t axis = *axisOf(like);
    if (normalise(iota.getAxis(), rankOf(like)) != axis) return keepAxis(*iota, b, map, axis);
    ad::GradBuilder g(b, iota.getLoc());
    mlir::Type dtype = iota.getDtype();
    mlir::Value at = dtype.isInteger(32) ? position
                                         : g.one<step::CastOp>({position}, {g.attr("to", mlir::TypeAttr::get(dtype))});
    if (iota.getOffset() != 0) at = g.add(at, g.scalar(static_cast<double>(iota.getOffset()), dtype));
    mlir::Value y = g.broadcastTo(at, ad::shapeOf(like));
    map.map(iota.getResult(), y);
    setAxis(y, axis);
    return g.failed() ? refuse(*iota, "could not be rebuilt") : mlir::success();
  }

  // The layers' states are stacked like their parameters: one more `over` operand each, and
  // one more stacked result with the states they leave.
  mlir::LogicalResult emitRepeat(step::RepeatOp repeat, mlir::OpBuilder &b, mlir::IRMapping &map,
                                 Scope &outer) {
    llvm::SmallVector<mlir::Value> inits, xs;
    for (mlir::Value v : repeat.getInits()) inits.push_back(map.lookupOrDefault(v));
    for (mlir::Value v : repeat.getXs()) xs.push_back(map.lookupOrDefault(v));
    // Exact streams' information buffers (ForwardClone) start as zeros of their stream's
    // shape, one per element: for one position, zeros of the stream's one-position shape.
    for (mlir::Value &init : inits) {
      auto constant = init.getDefiningOp<step::ConstantOp>();
      auto dense = constant ? llvm::dyn_cast<mlir::DenseElementsAttr>(constant.getValue()) : nullptr;
      if (axisOf(init) || !dense || !dense.isSplat()) continue;
      mlir::Value stream;
      for (mlir::Value v : repeat.getInits())
        if (mlir::Value mapped = map.lookupOrDefault(v);
            axisOf(mapped) && ad::shapeOf(v) == ad::shapeOf(init))
          stream = mapped;
      if (!stream) continue;
      auto type = mlir::RankedTensorType::get(ad::shapeOf(stream), dense.getElementType());
      init = b.create<step::ConstantOp>(constant.getLoc(), type, dense.resizeSplat(type));
      setAxis(init, *axisOf(stream));
    }
    auto body = std::make_unique<mlir::Block>();
    Scope inner;
    inner.block = body.get();
    inner.outer = &outer;
    inner.count = repeat.getCount();
    inner.prefix = outer.prefix + repeat.getName().str() + ".";
    mlir::Block &src = repeat.getBody().front();
    for (auto [i, arg] : llvm::enumerate(src.getArguments())) {
      mlir::Value from = i < inits.size() ? inits[i] : xs[i - inits.size()];
      auto type = llvm::cast<mlir::RankedTensorType>(from.getType());
      Axis axis = axisOf(from);
      if (i >= inits.size()) {
        if (axis && *axis == 0) return refuse(*repeat, "scans over the sequence");
        type = mlir::RankedTensorType::get(type.getShape().drop_front(), type.getElementType());
        if (axis) axis = *axis - 1;
      }
      mlir::Value inside = body->addArgument(type, arg.getLoc());
      map.map(arg, inside);
      if (axis) setAxis(inside, *axis);
    }
    // The body is built detached (its states are known only once it is): the builder is given
    // the context, which a block outside any region cannot provide.
    mlir::OpBuilder ib(b.getContext());
    ib.setInsertionPointToEnd(body.get());
    if (failed(emitBlock(src, ib, map, inner))) return mlir::failure();
    llvm::SmallVector<mlir::Value> yielded;
    for (mlir::Value v : src.getTerminator()->getOperands()) yielded.push_back(map.lookupOrDefault(v));
    for (auto [i, init] : llvm::enumerate(inits))
      if (axisOf(init) != axisOf(yielded[i]) || init.getType() != yielded[i].getType())
        return refuse(*repeat, "carries a value whose dependence on the sequence changes");
    for (mlir::Value out : inner.outs) {
      if (!out) return refuse(*repeat, "left a state without its next value");
      yielded.push_back(out);
    }
    ib.create<step::YieldOp>(repeat.getLoc(), yielded);
    for (unsigned j : inner.outerIndex) xs.push_back(outer.ins[j]);
    llvm::SmallVector<mlir::Type> types;
    for (auto [i, v] : llvm::enumerate(yielded)) {
      if (i < inits.size()) {
        types.push_back(v.getType());
        continue;
      }
      auto slice = llvm::cast<mlir::RankedTensorType>(v.getType());
      llvm::SmallVector<int64_t> shape{repeat.getCount()};
      shape.append(slice.getShape().begin(), slice.getShape().end());
      types.push_back(mlir::RankedTensorType::get(shape, slice.getElementType()));
    }
    auto rebuilt = b.create<step::RepeatOp>(repeat.getLoc(), types, repeat.getNameAttr(),
                                            repeat.getCountAttr(), inits, xs,
                                            repeat.getReverseAttr(), repeat.getReversibleAttr());
    rebuilt.getBody().push_back(body.release());
    for (auto [i, result] : llvm::enumerate(rebuilt.getResults())) {
      if (i < repeat.getNumResults()) {
        map.map(repeat.getResult(i), result);
        Axis axis = axisOf(yielded[i]);
        if (axis) setAxis(result, i < inits.size() ? *axis : *axis + 1);
      } else {
        outer.outs[inner.outerIndex[i - repeat.getNumResults()]] = result;
      }
    }
    return mlir::success();
  }

  mlir::Value position;
  std::string &whyNot;
  llvm::DenseMap<mlir::Value, int64_t> axes;
  int counter = 0;
};

mlir::DictionaryAttr roleAttrs(mlir::Builder &b, llvm::StringRef role, llvm::StringRef name) {
  return b.getDictionaryAttr({b.getNamedAttr("step.role", b.getStringAttr(role)),
                              b.getNamedAttr("step.name", b.getStringAttr(name))});
}

struct BuildSampleStepPass : impl::BuildSampleStepBase<BuildSampleStepPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    if (module.lookupSymbol<mlir::func::FuncOp>("sample_step")) return;
    std::string whyNot;
    auto forward = buildNextTokenForward(module, "sample_step_window", whyNot);
    if (failed(forward)) {
      if (whyNot.empty()) signalPassFailure();
      return;  // not a language model: @sample_logits says so
    }
    mlir::func::FuncOp window = forward->fn;
    mlir::OpBuilder b(window);
    unsigned numParams = window.getNumArguments() - 1;
    llvm::SmallVector<mlir::Type> argTypes(window.getArgumentTypes().take_front(numParams));
    argTypes.push_back(mlir::RankedTensorType::get({forward->batch, 1}, b.getI32Type()));
    argTypes.push_back(mlir::RankedTensorType::get({}, b.getI32Type()));
    auto fn = b.create<mlir::func::FuncOp>(window.getLoc(), "sample_step",
                                           b.getFunctionType(argTypes, {}));
    mlir::Block *entry = fn.addEntryBlock();
    mlir::IRMapping map;
    for (unsigned i = 0; i <= numParams; ++i) map.map(window.getArgument(i), entry->getArgument(i));
    Streamer streamer(entry->getArgument(numParams + 1), whyNot);
    streamer.setAxis(entry->getArgument(numParams), 1);
    Scope scope;
    scope.block = entry;
    mlir::OpBuilder eb = mlir::OpBuilder::atBlockEnd(entry);
    mlir::Block &src = window.getBody().front();
    bool built = succeeded(streamer.emitBlock(src, eb, map, scope));
    mlir::Value logits;
    if (built) {
      logits = map.lookupOrDefault(src.getTerminator()->getOperand(0));  // [B, 1, V]
      built = streamer.axisOf(logits) == 1 && llvm::all_of(scope.outs, [](mlir::Value v) { return v; });
      if (!built && whyNot.empty()) whyNot = "the logits do not come one per position";
    }
    // Parameters and tokens keep the names and roles the window's arguments had.
    llvm::SmallVector<mlir::DictionaryAttr> argAttrs;
    for (unsigned i = 0; i <= numParams; ++i) argAttrs.push_back(window.getArgAttrDict(i));
    window.erase();
    if (!built) {
      fn.erase();
      // `info` says why generation recomputes the whole window.
      module->setAttr("step.sample_step_unavailable", b.getStringAttr(whyNot));
      return;
    }
    ad::GradBuilder g(eb, logits.getLoc());
    mlir::Value next = g.reshape(logits, {forward->batch, forward->vocab});
    if (!ad::elementTypeOf(next).isF32())
      next = g.one<step::CastOp>({next}, {g.attr("to", mlir::TypeAttr::get(b.getF32Type()))});
    if (g.failed()) return signalPassFailure();
    llvm::SmallVector<mlir::Value> results{next};
    results.append(scope.outs.begin(), scope.outs.end());
    eb.create<mlir::func::ReturnOp>(fn.getLoc(), results);
    fn.setFunctionType(b.getFunctionType(entry->getArgumentTypes(), mlir::ValueRange(results).getTypes()));
    // The states are named by the op they carry for ("cell.cumsum_0").
    llvm::SmallVector<mlir::DictionaryAttr> outs{roleAttrs(b, "logits", "logits")};
    argAttrs.push_back(roleAttrs(b, "position", "position"));
    for (const std::string &name : scope.names) {
      argAttrs.push_back(roleAttrs(b, "sample_state", name));
      outs.push_back(roleAttrs(b, "sample_state", name));
    }
    fn.setAllArgAttrs(argAttrs);
    fn.setAllResultAttrs(outs);
  }
};

}  // namespace
}  // namespace stepc::train
