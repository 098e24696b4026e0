//===- ForwardClone.cpp - the model's forward graph as plain values ------===//
#include "compiler/Training/ForwardClone.h"

#include "dialects/step/IR/ReversibleCoupling.h"
#include "dialects/step/IR/ShapeRules.h"

#include "mlir/IR/IRMapping.h"

namespace stepc::train {
namespace {

// Parameter declaration -> the value holding it; empty inside called bodies and custom regions.
using ParamMap = llvm::DenseMap<mlir::Operation *, mlir::Value>;

class ForwardEmitter {
 public:
  ForwardEmitter(mlir::OpBuilder &b, step::ModelOp model, mlir::Value step)
      : b(b), model(model), step(step) {}

  // Clones `block`'s ops (but its terminator); `params` gives each parameter declaration under
  // it the value holding it at this nesting level.
  mlir::LogicalResult emitBlock(mlir::Block &block, mlir::IRMapping &map,
                                const llvm::DenseMap<mlir::Operation *, mlir::Value> &params,
                                llvm::SmallVectorImpl<mlir::Operation *> *emitted) {
    for (mlir::Operation &op : block.without_terminator()) {
      if (auto param = llvm::dyn_cast<step::ParamOp>(op)) {
        map.map(param.getResult(), params.lookup(param));
      } else if (llvm::isa<step::InputOp, step::ConfigOp, step::FuncOp>(op)) {
        continue;
      } else if (auto lossOp = llvm::dyn_cast<step::LossOp>(op)) {
        loss = map.lookupOrDefault(lossOp.getLoss());
      } else if (auto call = llvm::dyn_cast<step::CallOp>(op)) {
        if (failed(emitCall(call, map, emitted))) return mlir::failure();
      } else if (auto repeat = llvm::dyn_cast<step::RepeatOp>(op)) {
        if (failed(emitRepeat(repeat, map, params, emitted))) return mlir::failure();
      } else if (auto custom = llvm::dyn_cast<step::CustomGradOp>(op)) {
        if (failed(emitCustomGrad(custom, map, emitted))) return mlir::failure();
      } else {
        mlir::Operation *clone = b.clone(op, map);
        if (auto random = llvm::dyn_cast<step::StochasticOpInterface>(clone);
            random && step && !random.getStep() && !inIsolatedRegion())
          random.setStep(step);
        // Operands may have new shapes (a micro-batch): re-infer the result types.
        if (failed(step::reinferResultTypes(clone))) return mlir::failure();
        if (emitted) emitted->push_back(clone);
      }
    }
    return mlir::success();
  }

  mlir::Value getLoss() const { return loss; }

  // Whether the insertion point is inside an isolated region (a custom gradient), where the
  // step counter of the enclosing function cannot be used.
  bool inIsolatedRegion() const {
    for (mlir::Operation *op = b.getInsertionBlock()->getParentOp(); op; op = op->getParentOp())
      if (llvm::isa<step::CustomGradOp>(op)) return true;
    return false;
  }

 private:
  mlir::LogicalResult emitCall(step::CallOp call, mlir::IRMapping &map,
                               llvm::SmallVectorImpl<mlir::Operation *> *emitted) {
    auto callee = mlir::SymbolTable::lookupNearestSymbolFrom<step::FuncOp>(call, call.getCalleeAttr());
    if (!callee) return call.emitError() << "calls an unknown function";
    mlir::IRMapping inner;
    for (auto [arg, operand] : llvm::zip(callee.getBody().getArguments(), call.getArgs()))
      inner.map(arg, map.lookupOrDefault(operand));
    if (failed(emitBlock(callee.getBody().front(), inner, ParamMap(), emitted))) return mlir::failure();
    auto ret = llvm::cast<step::ReturnOp>(callee.getBody().front().getTerminator());
    for (auto [result, value] : llvm::zip(call.getResults(), ret.getValues()))
      map.map(result, inner.lookupOrDefault(value));
    return mlir::success();
  }

  // Both regions are emitted like any block (calls inlined, types re-inferred for the actual
  // operand shapes); the result types follow the forward region's yield.
  mlir::LogicalResult emitCustomGrad(step::CustomGradOp custom, mlir::IRMapping &map,
                                     llvm::SmallVectorImpl<mlir::Operation *> *emitted) {
    llvm::SmallVector<mlir::Value> inputs;
    for (mlir::Value v : custom.getInputs()) inputs.push_back(map.lookupOrDefault(v));
    auto clone = b.create<step::CustomGradOp>(custom.getLoc(), custom.getResultTypes(), inputs);
    mlir::Block *forward = b.createBlock(&clone.getForward());
    mlir::IRMapping inner;
    for (auto [arg, input] : llvm::zip(custom.getForward().getArguments(), inputs))
      inner.map(arg, forward->addArgument(input.getType(), arg.getLoc()));
    if (failed(emitBlock(custom.getForward().front(), inner, ParamMap(), nullptr))) return mlir::failure();
    llvm::SmallVector<mlir::Value> results;
    for (mlir::Value v : custom.getForward().front().getTerminator()->getOperands())
      results.push_back(inner.lookupOrDefault(v));
    b.create<step::YieldOp>(custom.getLoc(), results);
    for (auto [result, value] : llvm::zip(clone.getResults(), results))
      result.setType(value.getType());
    mlir::Block *backward = b.createBlock(&clone.getBackward());
    mlir::IRMapping back;
    auto backArgs = custom.getBackward().getArguments();
    for (auto [i, arg] : llvm::enumerate(backArgs)) {
      mlir::Type type = i < inputs.size() ? inputs[i].getType()
                                          : results[i - inputs.size()].getType();
      back.map(arg, backward->addArgument(type, arg.getLoc()));
    }
    if (failed(emitBlock(custom.getBackward().front(), back, ParamMap(), nullptr))) return mlir::failure();
    llvm::SmallVector<mlir::Value> grads;
    for (mlir::Value v : custom.getBackward().front().getTerminator()->getOperands())
      grads.push_back(back.lookupOrDefault(v));
    b.create<step::YieldOp>(custom.getLoc(), grads);
    b.setInsertionPointAfter(clone);
    for (auto [from, to] : llvm::zip(custom.getResults(), clone.getResults())) map.map(from, to);
    if (emitted) emitted->push_back(clone);
    return mlir::success();
  }

  mlir::LogicalResult emitRepeat(step::RepeatOp repeat, mlir::IRMapping &map,
                                 const llvm::DenseMap<mlir::Operation *, mlir::Value> &params,
                                 llvm::SmallVectorImpl<mlir::Operation *> *emitted) {
    // Per-layer parameters declared anywhere under this repeat enter it stacked, as `over`.
    llvm::SmallVector<step::ParamOp> layerParams;
    repeat.getBody().walk([&](step::ParamOp p) { layerParams.push_back(p); });
    llvm::SmallVector<mlir::Value> inits, xs;
    for (mlir::Value v : repeat.getInits()) inits.push_back(map.lookupOrDefault(v));
    for (mlir::Value v : repeat.getXs()) xs.push_back(map.lookupOrDefault(v));
    for (step::ParamOp p : layerParams) xs.push_back(params.lookup(p));
    // Random ops (dropout, jitter) inside a layer draw from stream * count + layer, so layers
    // differ.
    bool hasRandom = step && step::drawsRandomNumbers(repeat.getBody());
    if (hasRandom)
      xs.push_back(b.create<step::IotaOp>(
          repeat.getLoc(), mlir::RankedTensorType::get({repeat.getCount()}, b.getI64Type()),
          mlir::Value(), b.getI64ArrayAttr({repeat.getCount()}), b.getI64IntegerAttr(0),
          mlir::TypeAttr::get(b.getI64Type()), b.getI64IntegerAttr(0)));
    // A reversible repeat deeper than its segment runs as segments: an outer repeat over
    // count / segment segments, each an inner reversible repeat of `segment` layers. The outer
    // one is differentiated the usual way, so the backward keeps each segment's input (the
    // streams, not the layers' activations) and rebuilds layers only within a segment: the
    // rounding of a rebuild grows about 1.4x per layer in byte_lm_residual (f32: 1e-5 relative after 8
    // layers, garbage after 64; f64 streams: garbage after 256), so a segment bounds it.
    // `streams = f64`: the carried streams enter widened (and leave rounded back, below).
    // `streams = "exact"`: in f64 on the grid 2^-kExactStreamBits, and each scaled stream gets
    // an information buffer (zeros, i64), carried after the streams (widenCoupling).
    bool exact = llvm::isa_and_nonnull<mlir::StringAttr>(repeat->getAttr("streams"));
    mlir::Type wide;
    if (exact) wide = b.getF64Type();
    else if (auto type = repeat->getAttrOfType<mlir::TypeAttr>("streams")) wide = type.getValue();
    llvm::SmallVector<mlir::Type> narrowTypes;
    for (mlir::Value &init : inits) {
      narrowTypes.push_back(init.getType());
      auto t = llvm::cast<mlir::RankedTensorType>(init.getType());
      if (wide && t.getElementType() != wide)
        init = emitCast(repeat.getLoc(), init, wide, emitted);
      if (exact) init = emitQuantize(repeat.getLoc(), init, emitted);
    }
    size_t numStreams = inits.size();
    llvm::SmallVector<unsigned> bufferSlots(numStreams, 0);  // stream slot -> its buffer's
    if (exact) {
      std::string why;
      auto coupling = step::deriveCouplingInverse(repeat, why);
      if (failed(coupling)) return repeat.emitOpError() << "cannot hold exact streams: " << why;
      for (const step::CouplingStep &form : *coupling) {
        if (!form.scale) continue;
        auto t = llvm::cast<mlir::RankedTensorType>(inits[form.slot].getType());
        auto type = mlir::RankedTensorType::get(t.getShape(), b.getI64Type());
        auto zeros = b.create<step::ConstantOp>(
            repeat.getLoc(), type, mlir::DenseElementsAttr::get(type, b.getI64IntegerAttr(0)));
        if (emitted) emitted->push_back(zeros);
        bufferSlots[form.slot] = inits.size();
        inits.push_back(zeros);
      }
    }
    int64_t count = repeat.getCount(), segment = count;
    mlir::Operation *outer = nullptr;
    if (repeat.getReversible() && repeat.getStackedResults().empty()) {
      segment = reversibleSegment(repeat, exact);
      if (segment < count) {
        llvm::SmallVector<mlir::Value> segmented;
        for (mlir::Value x : xs) {
          auto t = llvm::cast<mlir::RankedTensorType>(x.getType());
          llvm::SmallVector<int64_t> shape{count / segment, segment};
          shape.append(t.getShape().begin() + 1, t.getShape().end());
          auto reshape = b.create<step::ReshapeOp>(
              repeat.getLoc(), mlir::RankedTensorType::get(shape, t.getElementType()), x,
              b.getI64ArrayAttr(shape));
          if (emitted) emitted->push_back(reshape);
          segmented.push_back(reshape);
        }
        llvm::SmallVector<mlir::Type> carried;
        for (mlir::Value v : inits) carried.push_back(v.getType());
        auto segments = b.create<step::RepeatOp>(
            repeat.getLoc(), carried, b.getStringAttr(repeat.getName() + "_segments"),
            b.getI64IntegerAttr(count / segment), inits, segmented, mlir::UnitAttr(), mlir::UnitAttr());
        mlir::Block *body = b.createBlock(&segments.getBody());
        inits.clear();
        xs.clear();
        for (mlir::Value v : segments.getInits()) inits.push_back(body->addArgument(v.getType(), repeat.getLoc()));
        for (mlir::Value v : segmented) {
          auto t = llvm::cast<mlir::RankedTensorType>(v.getType());
          xs.push_back(body->addArgument(
              mlir::RankedTensorType::get(t.getShape().drop_front(), t.getElementType()), repeat.getLoc()));
        }
        segments->setAttr("step.segments", b.getUnitAttr());  // Autodiff: outputs from checkpoints
        outer = segments;
      }
    }
    llvm::SmallVector<mlir::Type> resultTypes(repeat.getResultTypes());
    for (size_t i = numStreams; i < inits.size(); ++i)
      resultTypes.insert(resultTypes.begin() + i, inits[i].getType());
    auto clone = b.create<step::RepeatOp>(repeat.getLoc(), resultTypes,
                                          repeat.getNameAttr(), b.getI64IntegerAttr(segment), inits,
                                          xs, repeat.getReverseAttr(), repeat.getReversibleAttr());
    // What --memory-budget chose for it (compiler/Codegen/MemoryBudget.h), for autodiff.
    for (llvm::StringRef name : {"step.saved_gemms", "step.memory_choice"})
      if (mlir::Attribute a = repeat->getAttr(name)) clone->setAttr(name, a);
    mlir::Block &src = repeat.getBody().front();
    mlir::Block *body = b.createBlock(&clone.getBody());
    // The body's carried arguments: the streams, then the buffers (none in the source body).
    for (size_t i = 0; i < inits.size(); ++i) {
      mlir::Value arg = body->addArgument(inits[i].getType(), repeat.getLoc());
      if (i < numStreams) map.map(src.getArgument(i), arg);
    }
    for (auto [j, arg] : llvm::enumerate(src.getArguments().drop_front(numStreams))) {
      auto stacked = llvm::cast<mlir::RankedTensorType>(xs[j].getType());
      map.map(arg, body->addArgument(mlir::RankedTensorType::get(stacked.getShape().drop_front(),
                                                                 stacked.getElementType()),
                                     arg.getLoc()));
    }
    // The cell reads the wide streams rounded to their own type.
    llvm::SmallVector<mlir::Value> wideArgs;
    if (wide)
      for (size_t i = 0; i < numStreams; ++i) {
        mlir::Value arg = body->getArgument(i);
        wideArgs.push_back(arg);
        if (arg.getType() != narrowTypes[i])
          map.map(src.getArgument(i), emitCast(repeat.getLoc(), arg, elementOf(narrowTypes[i]), nullptr));
      }
    llvm::DenseMap<mlir::Operation *, mlir::Value> inner(params);
    for (step::ParamOp p : layerParams) {
      auto stacked = llvm::cast<mlir::RankedTensorType>(params.lookup(p).getType());
      inner[p] = body->addArgument(
          mlir::RankedTensorType::get(stacked.getShape().drop_front(), stacked.getElementType()),
          p.getLoc());
    }
    mlir::Value outerStream = step;
    if (hasRandom) {
      mlir::Value layer = body->addArgument(mlir::RankedTensorType::get({}, b.getI64Type()),
                                            repeat.getLoc());
      mlir::Value count = b.create<step::ConstantOp>(
          repeat.getLoc(), mlir::DenseElementsAttr::get(
                               mlir::RankedTensorType::get({}, b.getI64Type()),
                               b.getI64IntegerAttr(repeat.getCount())));
      step = b.create<step::AddOp>(repeat.getLoc(),
                                   b.create<step::MulOp>(repeat.getLoc(), outerStream, count), layer);
    }
    mlir::LogicalResult emittedBody = emitBlock(src, map, inner, nullptr);
    step = outerStream;
    if (failed(emittedBody)) return mlir::failure();
    llvm::SmallVector<mlir::Value> buffersOut;
    if (wide && failed(widenCoupling(repeat, wideArgs, exact, body->getArguments(), bufferSlots,
                                     map, buffersOut)))
      return mlir::failure();
    llvm::SmallVector<mlir::Value> yielded;
    for (mlir::Value v : src.getTerminator()->getOperands()) yielded.push_back(map.lookupOrDefault(v));
    yielded.insert(yielded.begin() + numStreams, buffersOut.begin(), buffersOut.end());
    b.create<step::YieldOp>(repeat.getLoc(), yielded);
    b.setInsertionPointAfter(clone);
    // Result types follow the (possibly re-shaped) carried and yielded values.
    for (auto [i, result] : llvm::enumerate(clone.getResults())) {
      if (i < inits.size()) {
        result.setType(inits[i].getType());
        continue;
      }
      auto slice = llvm::cast<mlir::RankedTensorType>(yielded[i].getType());
      llvm::SmallVector<int64_t> shape{repeat.getCount()};
      shape.append(slice.getShape().begin(), slice.getShape().end());
      result.setType(mlir::RankedTensorType::get(shape, slice.getElementType()));
    }
    if (outer) {
      b.create<step::YieldOp>(repeat.getLoc(), clone.getResults());
      b.setInsertionPointAfter(outer);
    }
    mlir::Operation *emittedRepeat = outer ? outer : clone.getOperation();
    if (emitted) emitted->push_back(emittedRepeat);
    for (auto [i, from] : llvm::enumerate(repeat.getResults())) {
      // (No stacked results with exact streams, so the buffers' results come last.)
      mlir::Value to = emittedRepeat->getResult(i);
      if (i < narrowTypes.size() && to.getType() != narrowTypes[i])
        to = emitCast(repeat.getLoc(), to, elementOf(narrowTypes[i]), emitted);
      map.map(from, to);
    }
    return mlir::success();
  }

  static mlir::Type elementOf(mlir::Type t) {
    return llvm::cast<mlir::RankedTensorType>(t).getElementType();
  }

  mlir::Value emitQuantize(mlir::Location loc, mlir::Value v,
                           llvm::SmallVectorImpl<mlir::Operation *> *emitted) {
    auto q = b.create<step::QuantizeOp>(loc, v.getType(), v,
                                        b.getI64IntegerAttr(step::kExactStreamBits));
    if (emitted) emitted->push_back(q);
    return q;
  }

  mlir::Value emitCast(mlir::Location loc, mlir::Value v, mlir::Type element,
                       llvm::SmallVectorImpl<mlir::Operation *> *emitted) {
    auto t = llvm::cast<mlir::RankedTensorType>(v.getType());
    auto cast = b.create<step::CastOp>(loc, mlir::RankedTensorType::get(t.getShape(), element), v,
                                       mlir::TypeAttr::get(element));
    if (emitted) emitted->push_back(cast);
    return cast;
  }

  // The body was emitted in the streams' own type; redo each carried output's coupling
  // y = x (* c) + g in the wide type, from the wide input and g widened. The cell's other uses
  // of y (MomentumNet's x' reads a') read it rounded, so every g is a function of the rounded
  // outputs and the layer's other inputs: the forward and the backward's rebuild compute it
  // alike, and only the wide adds and scalings round, at 2^-53 instead of 2^-24.
  // `exact`: nothing rounds. Each g is put on the grid first (step.quantize), so the add is
  // exact, and each scaling is a step.exact_scale with the stream's buffer (bufferSlots: the
  // body argument of each stream's buffer), whose new value goes to `buffersOut`.
  mlir::LogicalResult widenCoupling(step::RepeatOp repeat, llvm::ArrayRef<mlir::Value> wideArgs,
                                    bool exact, mlir::ValueRange bodyArgs,
                                    llvm::ArrayRef<unsigned> bufferSlots, mlir::IRMapping &map,
                                    llvm::SmallVectorImpl<mlir::Value> &buffersOut) {
    std::string why;
    auto coupling = step::deriveCouplingInverse(repeat, why);
    if (failed(coupling))
      return repeat.emitOpError() << "cannot hold its streams wide: " << why;
    auto yield = llvm::cast<step::YieldOp>(repeat.getBody().front().getTerminator());
    mlir::OpBuilder::InsertionGuard guard(b);
    for (const step::CouplingStep &form : *coupling) {
      mlir::Value srcY = yield.getValues()[form.slot];
      mlir::Value narrowY = map.lookup(srcY);
      mlir::Operation *narrowAdd = narrowY.getDefiningOp();
      mlir::Location loc = narrowAdd->getLoc();
      mlir::Value x = wideArgs[form.slot];
      mlir::Type element = elementOf(x.getType());
      b.setInsertionPointAfter(narrowAdd);
      if (form.scale) {
        auto dense = llvm::cast<mlir::DenseElementsAttr>(
            form.scale.getDefiningOp<step::ConstantOp>().getValue());
        auto type = mlir::RankedTensorType::get(
            llvm::cast<mlir::ShapedType>(dense.getType()).getShape(), element);
        double c = llvm::cast<mlir::FloatAttr>(dense.getSplatValue<mlir::Attribute>()).getValueAsDouble();
        if (exact) {
          auto ratio = step::exactRatio(c);  // (the verifier checked it)
          if (!ratio) return repeat.emitOpError() << "cannot scale exactly by " << c;
          mlir::Value buffer = bodyArgs[bufferSlots[form.slot]];
          auto scaled = b.create<step::ExactScaleOp>(
              loc, x.getType(), buffer.getType(), x, buffer, b.getI64IntegerAttr(ratio->first),
              b.getI64IntegerAttr(ratio->second), b.getI64IntegerAttr(step::kExactStreamBits),
              mlir::UnitAttr());
          x = scaled.getResult();
          buffersOut.resize(std::max<size_t>(buffersOut.size(), bufferSlots[form.slot] - wideArgs.size() + 1));
          buffersOut[bufferSlots[form.slot] - wideArgs.size()] = scaled.getBufferOut();
        } else {
          mlir::Value scale = b.create<step::ConstantOp>(
              loc, type, mlir::DenseElementsAttr::get(type, b.getFloatAttr(element, c)));
          x = b.create<step::MulOp>(loc, x.getType(), x, scale);
        }
      }
      mlir::Value g = map.lookup(form.g);
      if (g.getType() != x.getType()) g = emitCast(loc, g, element, nullptr);
      if (exact) g = emitQuantize(loc, g, nullptr);
      mlir::Value y = b.create<step::AddOp>(loc, x.getType(), x, g);
      mlir::Value rounded = emitCast(loc, y, elementOf(narrowY.getType()), nullptr);
      narrowY.replaceAllUsesWith(rounded);
      map.map(srcY, y);
      // The narrow coupling (the add and its scaling) is dead now.
      llvm::SmallVector<mlir::Operation *> dead{narrowAdd};
      while (!dead.empty()) {
        mlir::Operation *op = dead.pop_back_val();
        if (!op->use_empty() || !llvm::isa<step::AddOp, step::MulOp, step::ConstantOp>(op)) continue;
        llvm::SmallVector<mlir::Value> operands(op->getOperands());
        op->erase();
        for (mlir::Value v : operands)
          if (mlir::Operation *d = v.getDefiningOp();
              d && d->getBlock() == y.getParentBlock() && !llvm::is_contained(dead, d))
            dead.push_back(d);
      }
    }
    return mlir::success();
  }

  // The layers per segment of a reversible repeat: its `segment` attribute, else the largest
  // divisor of the count up to kReversibleSegment, or kWideReversibleSegment with wide streams
  // (the count itself: rebuild every layer). benchmarks/reversible.py, the reversible
  // byte_lm_small at depth 64: f32 streams give a gradient error of 6e-5 in segments of 8; f64
  // streams 0 in segments of 16 (3e-8 at depth 256), but 3e-4 (at some parameters) in segments
  // of 32, and 6e-4 unsegmented.
  static constexpr int64_t kReversibleSegment = 8;
  static constexpr int64_t kWideReversibleSegment = 16;
  static int64_t reversibleSegment(step::RepeatOp repeat, bool exact) {
    int64_t count = repeat.getCount();
    int64_t limit = exact                         ? 0  // exact rebuilds need no segments
                    : repeat->hasAttr("streams") ? kWideReversibleSegment
                                                 : kReversibleSegment;
    if (auto attr = repeat->getAttrOfType<mlir::IntegerAttr>("segment")) limit = attr.getInt();
    if (limit <= 0 || limit >= count) return count;
    for (int64_t d = limit; d > 1; --d)
      if (count % d == 0) return d;
    return 1;
  }

  mlir::OpBuilder &b;
  step::ModelOp model;
  mlir::Value step;
  mlir::Value loss;
};

}  // namespace

mlir::FailureOr<mlir::Value> emitForward(mlir::OpBuilder &builder, step::ModelOp model,
                                         const ForwardValues &values,
                                         llvm::SmallVectorImpl<mlir::Operation *> &emitted) {
  ForwardEmitter emitter(builder, model, values.step);
  mlir::IRMapping map;
  for (auto [from, to] : values.inputs) map.map(from, to);
  if (failed(emitter.emitBlock(model.getBody().front(), map, values.params, &emitted)))
    return mlir::failure();
  if (!emitter.getLoss()) return model.emitError() << "has no loss to differentiate";
  return emitter.getLoss();
}

}  // namespace stepc::train
