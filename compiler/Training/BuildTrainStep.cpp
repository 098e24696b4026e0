//===- BuildTrainStep.cpp - the --step-build-train-step pass -------------===//
//
// Assembles @train_step (see Passes.td for the contract): arguments and their roles, the
// loss-and-gradient computation (with micro-batch accumulation), SAM, clipping, schedule and
// optimizer, then prunes what no result uses.
//
//===----------------------------------------------------------------------===//
#include "compiler/Autodiff/Autodiff.h"
#include "compiler/Training/Elementwise.h"
#include "compiler/Training/ForwardClone.h"
#include "compiler/Training/Passes.h"
#include "compiler/Training/UpdateRules.h"
#include "dialects/step/IR/ModelInstances.h"

#include <cmath>

namespace stepc::train {

#define GEN_PASS_DEF_BUILDTRAINSTEP
#include "compiler/Training/Passes.h.inc"

namespace {

using mlir::Value;

struct InputSlot {
  std::string name;
  Value modelValue;  // the step.input result in the model
  int index;         // which result of the step.input
};

class TrainStepBuilder {
 public:
  TrainStepBuilder(step::ModelOp model, const TrainConfig &config, bool exportGrads,
                   bool columnNorms, bool dataParallel, bool overlapReductions, int64_t shards,
                   bool rebuildError)
      : model(model), config(config), exportGrads(exportGrads), columnNorms(columnNorms),
        dataParallel(dataParallel), overlapReductions(dataParallel && overlapReductions),
        shards(shards), rebuildError(rebuildError),
        b(model.getContext()),
        loc(model.getLoc()) {}

  mlir::LogicalResult build(mlir::ModuleOp module);

 private:
  // Forward + backward on `inputs`, accumulated over micro-batches: (loss, grads).
  // `scatter`: the sharded parameters' gradients come out reduce-scattered, this rank's block
  // of their rows (the pass whose gradients the update reads).
  mlir::FailureOr<std::pair<Value, llvm::SmallVector<Value>>> lossAndGrads(
      llvm::ArrayRef<Value> params, llvm::ArrayRef<Value> inputs, bool scatter);
  // --data-parallel: the sums over the ranks of the rank's summed loss and gradients (f32);
  // with `overlap` each a start and a wait (the start moved on into the backward), and with
  // `scatter` a scattered parameter's reduced to its owners, this rank's block returned.
  std::pair<Value, llvm::SmallVector<Value>> reduceOverRanks(ad::GradBuilder &g, Value loss,
                                                             llvm::ArrayRef<Value> grads,
                                                             bool overlap, bool scatter);
  // Rank of each of `p`'s rows under --shard-optimizer ([rows, 1, ...] i64, made at the top of
  // the step so that a start can move up to its gradient and into the layer loop).
  Value owners(step::ParamOp p);
  // One forward and backward; `microBatch`: on one micro-batch's rows (from the model's
  // micro-batch instance where it has one).
  mlir::FailureOr<std::pair<Value, llvm::SmallVector<Value>>> singlePass(
      llvm::ArrayRef<Value> params, llvm::ArrayRef<Value> inputs, bool microBatch = false);
  // Pairs the micro-batch instance's parameters and inputs with the model's (by name and
  // order, with their types checked) and gives its repeats the model's settings (the memory
  // budget's choices are made on the model).
  mlir::LogicalResult bindMicroBatchInstance(step::ModelOp instance);
  mlir::FailureOr<llvm::SmallVector<Value>> samPerturbation(llvm::ArrayRef<Value> params,
                                                            llvm::ArrayRef<Value> grads);
  // --shard-optimizer: whether `p`'s state and update are split over the ranks (its first
  // axis must divide into `shards` blocks; a parameter whose axis does not is updated whole on
  // every rank, with whole state: the same numbers, none of the saving).
  bool sharded(step::ParamOp p) const {
    mlir::RankedTensorType t = p.getStoredType();
    return shards > 1 && t.getRank() > 0 && t.getDimSize(0) % shards == 0;
  }
  // --shard-optimizer: whether `p`'s summed gradient is reduce-scattered (each rank gets only
  // its block of the rows) rather than all-reduced and cut. Not where something before the
  // update reads the whole of it: --export-grads. (AGC's norms over the rows and the global
  // norm sum by blocks of rows, each rank's blocks' shares all-gathered.)
  bool scattered(step::ParamOp p) const { return sharded(p) && !exportGrads; }
  mlir::LogicalResult checkShards();
  // The forward failed on a micro-batch: says why that can happen (after the op's own error).
  mlir::LogicalResult microBatchFailure(int64_t k) {
    auto dims = model.getDimsAttr();
    bool named = dims && dims.get("B");
    return model.emitError()
           << "micro_batches = " << k << " runs the forward on 1/" << k
           << " of the batch's rows; a shape the model writes with the batch's size"
           << (named ? " (its dim B, or a dim derived from it)" : "")
           << " does not follow it. Declare the batch as the dim B, lead every input with it "
              "and derive those shapes from B (stepc then reads the model again at B / "
           << k
           << " for the micro-batches), or write them from the operands where the op allows "
              "it (step.reshape takes 0 and -1), or train with micro_batches = 1 (and without "
              "--data-parallel, which splits the micro-batches)";
  }
  // The random ops' counter for micro-batch `index` of `k`: step · k + index, so that micro-batches
  // draw different numbers.
  Value microBatchStep(Value index, int64_t k) {
    ad::GradBuilder gs(b, loc);
    return gs.add(gs.mul(stepCounter, gs.scalar(static_cast<double>(k), b.getI64Type())), index);
  }
  Value stepCounter;
  mlir::Block *entry = nullptr;  // @train_step's

  step::ModelOp model;
  const TrainConfig &config;
  bool exportGrads;
  bool columnNorms;
  bool dataParallel;
  // --data-parallel: each reduction split into a start and a wait, and the rank's last
  // micro-batch run after the loop, so that its backward issues each layer's reduction as soon
  // as the layer's gradient is whole (--step-sink-layer-updates moves the starts there).
  bool overlapReductions;
  int64_t shards;  // --shard-optimizer: ranks the optimizer state is split over (0: none)
  bool rebuildError;
  llvm::SmallVector<Value> rebuildErrors;  // --rebuild-error: every pass's measures (f64)
  mlir::OpBuilder b;
  mlir::Location loc;
  llvm::SmallVector<step::ParamOp> paramOps;
  llvm::SmallVector<InputSlot> inputSlots;
  // The micro-batch instance (ModelInstances.h; null: the micro-batches run the model itself
  // on their rows), its parameters in paramOps' order and its inputs in inputSlots'.
  step::ModelOp micro;
  llvm::SmallVector<mlir::Operation *> microParamOps;
  llvm::SmallVector<Value> microInputs;
};

mlir::FailureOr<std::pair<Value, llvm::SmallVector<Value>>> TrainStepBuilder::singlePass(
    llvm::ArrayRef<Value> params, llvm::ArrayRef<Value> inputs, bool microBatch) {
  ForwardValues values;
  bool instance = microBatch && micro;
  for (auto [i, v] : llvm::enumerate(params))
    values.params[instance ? microParamOps[i] : paramOps[i].getOperation()] = v;
  for (auto [i, v] : llvm::enumerate(inputs))
    values.inputs[instance ? microInputs[i] : inputSlots[i].modelValue] = v;
  values.step = stepCounter;
  llvm::SmallVector<mlir::Operation *> forward;
  mlir::FailureOr<Value> loss = emitForward(b, instance ? micro : model, values, forward);
  if (failed(loss)) return mlir::failure();
  ad::GradBuilder g(b, loc);
  Value tracked[] = {*loss};
  auto grads = ad::emitGradients(b, forward, {{*loss, g.splat(1.0, loss->getType())}}, params,
                                 tracked, rebuildError ? &rebuildErrors : nullptr);
  if (failed(grads) || g.failed()) return mlir::failure();
  return std::make_pair(tracked[0], *grads);
}

// Moves `op` up to just after the last definition among its operands in its block, first
// moving so the elementwise ops that only feed it (the fold of the rank's micro-batch sums):
// an overlapped reduction then starts as soon as its gradient exists (the head's, early in
// the backward), not after the whole backward.
void issueEarly(mlir::Operation *op) {
  mlir::Block *block = op->getBlock();
  mlir::Operation *after = nullptr;
  for (Value v : op->getOperands()) {
    mlir::Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != block) continue;
    if (isElementwise(def) && def->hasOneUse()) issueEarly(def);
    if (!after || after->isBeforeInBlock(def)) after = def;
  }
  if (after) op->moveAfter(after);
}

Value TrainStepBuilder::owners(step::ParamOp p) {
  mlir::RankedTensorType t = p.getStoredType();
  int64_t rows = t.getDimSize(0), per = rows / shards;
  llvm::SmallVector<int64_t> shape(t.getRank(), 1), table;
  shape[0] = rows;
  for (int64_t r = 0; r < rows; ++r) table.push_back(r / per);
  auto type = mlir::RankedTensorType::get(shape, b.getI64Type());
  mlir::OpBuilder top(b.getContext());
  top.setInsertionPointToStart(entry);
  return top.create<step::ConstantOp>(loc, type,
                                      mlir::DenseElementsAttr::get(type, llvm::ArrayRef(table)));
}

std::pair<Value, llvm::SmallVector<Value>> TrainStepBuilder::reduceOverRanks(
    ad::GradBuilder &g, Value loss, llvm::ArrayRef<Value> grads, bool overlap, bool scatter) {
  auto reduce = [&](Value v, step::ParamOp p) {
    if (scatter && p && scattered(p)) {
      Value started = g.one<step::ReduceScatterStartOp>({v, owners(p)},
                                                        {g.i64Attr("parts", shards)});
      if (mlir::Operation *start = started.getDefiningOp(); start && overlap) issueEarly(start);
      return g.one<step::ReduceScatterWaitOp>({started}, {g.i64Attr("parts", shards)});
    }
    if (!overlap) return g.one<step::AllReduceOp>({v});
    Value started = g.one<step::AllReduceStartOp>({v});
    if (mlir::Operation *start = started.getDefiningOp()) issueEarly(start);
    return g.one<step::AllReduceWaitOp>({started});
  };
  Value l = reduce(castTo(g, loss, g.builder().getF32Type()), nullptr);
  llvm::SmallVector<Value> reduced;
  for (auto [grad, p] : llvm::zip(grads, paramOps)) reduced.push_back(reduce(grad, p));
  return {l, reduced};
}

mlir::FailureOr<std::pair<Value, llvm::SmallVector<Value>>> TrainStepBuilder::lossAndGrads(
    llvm::ArrayRef<Value> params, llvm::ArrayRef<Value> inputs, bool scatter) {
  int64_t k = config.microBatches;
  // The measures are values of the pass; a micro-batch loop would need to carry them out.
  if (rebuildError && k != 1)
    return model.emitError() << "--rebuild-error measures one pass: it needs micro_batches = 1, "
                                "found "
                             << k;
  if (dataParallel) {
    if (llvm::any_of(params, [](Value p) { return !ad::elementTypeOf(p).isF32(); }))
      return model.emitError() << "--data-parallel reduces f32 gradients; this model has "
                                  "parameters of another dtype";
    if (!llvm::isPowerOf2_64(k))
      return model.emitError() << "--data-parallel splits the micro-batches over the ranks and "
                                  "sums them in a binary tree (so that N ranks give one "
                                  "process's bits), which needs micro_batches to be a power of "
                                  "two, found "
                               << k;
  }
  if (k == 1) {
    auto pass = singlePass(params, inputs);
    if (failed(pass) || !dataParallel) return pass;
    ad::GradBuilder g(b, loc);
    return reduceOverRanks(g, pass->first, pass->second, overlapReductions, scatter);
  }
  // The micro-batches' losses and gradients are averaged, which is the full batch's only for a
  // mean over the batch: a summed loss would come out 1/K of it. Refused where it is summed.
  if (mlir::Operation *def = model.getLossOp().getLoss().getDefiningOp()) {
    auto ce = llvm::dyn_cast<step::CrossEntropyOp>(def);
    if ((ce && ce.getReduction() == "sum") || llvm::isa<step::SumOp>(def))
      return def->emitError()
             << "micro_batches = " << k
             << " averages the micro-batches' losses, so this summed loss would be 1/" << k
             << " of the full batch's; use a mean over the batch (cross_entropy's default "
                "reduction = \"mean\", or step.mean) or micro_batches = 1";
  }
  // Accumulate over K micro-batches in one repeat: inputs [B, ...] are viewed as [K, B/K, ...].
  ad::GradBuilder g(b, loc);
  llvm::SmallVector<Value> slices;
  for (Value input : inputs) {
    llvm::SmallVector<int64_t> shape(ad::shapeOf(input));
    if (shape.empty() || shape[0] % k)
      return model.emitError() << "micro_batches = " << k << " must divide the batch size "
                               << (shape.empty() ? 0 : shape[0]);
    shape[0] /= k;
    shape.insert(shape.begin(), k);
    slices.push_back(g.reshape(input, shape));
  }
  mlir::Type f32 = b.getF32Type();
  // Data-parallel: a binary tree over the micro-batch index, ((g0 + g1) + (g2 + g3)). It is a
  // binary counter: after micro-batch i, merges[i] (its trailing ones) pending partial sums
  // are folded into it, then it is kept at level merges[i]; `levels` more sets of
  // accumulators. Each of N ranks runs an aligned block of K/N micro-batches (the loop is
  // marked step.rank_split: its bounds come from the runtime) and so ends with its block's
  // subtree; the all-reduce sums those in the same tree: one process's bits. The
  // accumulators start at -0, the exact identity of IEEE addition (x + -0 = x, even for
  // x = +0 and -0), so a level above the rank's block, never written there, adds nothing.
  double zero = dataParallel ? -0.0 : 0.0;
  llvm::SmallVector<Value> inits{g.scalar(zero, f32)};
  for (Value p : params) inits.push_back(g.splat(zero, p.getType()));
  size_t width = inits.size();
  int64_t levels = dataParallel ? llvm::Log2_64(k) : 0;
  for (int64_t l = 0; l < levels; ++l)
    for (size_t j = 0; j < width; ++j) inits.push_back(inits[j]);
  llvm::SmallVector<mlir::Type> types;
  for (Value v : inits) types.push_back(v.getType());
  // Random ops (dropout, jitter) draw from step * K + micro-batch, so micro-batches differ.
  bool hasRandom = step::drawsRandomNumbers(model.getBody());
  if (hasRandom)
    slices.push_back(g.one<step::IotaOp>({}, {g.arrayAttr("shape", {k}), g.i64Attr("axis", 0),
                                              g.attr("dtype", mlir::TypeAttr::get(b.getI64Type()))}));
  if (levels > 0) {
    llvm::SmallVector<int64_t> merges;
    for (int64_t i = 0; i < k; ++i) merges.push_back(llvm::countr_one(static_cast<uint64_t>(i)));
    auto table = mlir::RankedTensorType::get({k}, b.getI64Type());
    slices.push_back(b.create<step::ConstantOp>(
        loc, table, mlir::DenseElementsAttr::get(table, llvm::ArrayRef<int64_t>(merges))));
  }
  // Overlapped reductions: the loop runs all but the rank's last micro-batch, which runs
  // after it (`peeled`); the loop's slices are the first K - 1.
  llvm::SmallVector<Value> peeled, loopSlices(slices);
  if (overlapReductions) {
    for (Value &s : loopSlices) {
      peeled.push_back(g.one<step::LastMicroBatchOp>({s}));
      llvm::SmallVector<int64_t> start(ad::rankOf(s), 0), limit(ad::shapeOf(s));
      limit[0] = k - 1;
      s = g.one<step::SliceOp>({s}, {g.arrayAttr("start", start), g.arrayAttr("limit", limit)});
    }
  }
  int64_t trips = overlapReductions ? k - 1 : k;
  auto repeat = b.create<step::RepeatOp>(loc, types, b.getStringAttr("micro_batch"),
                                         b.getI64IntegerAttr(trips), inits, loopSlices, nullptr,
                                         nullptr);
  if (dataParallel) repeat->setAttr("step.rank_split", b.getUnitAttr());
  if (overlapReductions) repeat->setAttr("step.rank_split_peeled", b.getUnitAttr());
  mlir::Block *body = b.createBlock(&repeat.getBody());
  for (Value v : inits) body->addArgument(v.getType(), loc);
  llvm::SmallVector<Value> sliceArgs;
  for (Value s : slices) {
    auto t = llvm::cast<mlir::RankedTensorType>(s.getType());
    sliceArgs.push_back(body->addArgument(
        mlir::RankedTensorType::get(t.getShape().drop_front(), t.getElementType()), loc));
  }
  Value merges = levels > 0 ? sliceArgs.pop_back_val() : Value();
  Value outerStep = stepCounter;
  if (hasRandom) {
    stepCounter = microBatchStep(sliceArgs.pop_back_val(), k);
  }
  auto pass = singlePass(params, sliceArgs, /*microBatch=*/true);
  stepCounter = outerStep;
  if (failed(pass)) return microBatchFailure(k);
  ad::GradBuilder gi(b, loc);
  llvm::SmallVector<Value> mine{
      gi.one<step::CastOp>({pass->first}, {gi.attr("to", mlir::TypeAttr::get(f32))})};
  mine.append(pass->second.begin(), pass->second.end());
  llvm::SmallVector<Value> next;
  if (levels == 0) {
    for (size_t j = 0; j < width; ++j) next.push_back(gi.add(body->getArgument(j), mine[j]));
  } else {
    auto level = [&](int64_t l, size_t j) { return body->getArgument((l + 1) * width + j); };
    for (int64_t l = 0; l < levels; ++l) {  // fold the pending sums, earlier ones on the left
      Value merge = gi.compare(merges, gi.scalar(static_cast<double>(l), b.getI64Type()), "gt");
      for (size_t j = 0; j < width; ++j)
        mine[j] = gi.select(merge, gi.add(level(l, j), mine[j]), mine[j]);
    }
    next = mine;  // the running subtree; the whole sum after the last micro-batch
    for (int64_t l = 0; l < levels; ++l) {
      Value keep = gi.compare(merges, gi.scalar(static_cast<double>(l), b.getI64Type()), "eq");
      for (size_t j = 0; j < width; ++j) next.push_back(gi.select(keep, mine[j], level(l, j)));
    }
  }
  b.create<step::YieldOp>(loc, next);
  b.setInsertionPointAfter(repeat);
  if (g.failed() || gi.failed()) return mlir::failure();
  Value loss = repeat.getResult(0);
  llvm::SmallVector<Value> sums;
  for (size_t i = 0; i < params.size(); ++i) sums.push_back(repeat.getResult(i + 1));
  if (overlapReductions) {
    // The rank's last micro-batch closes every pending subtree: its index ends in at least
    // log2(K/N) ones, and the levels above its block were never written there (they hold -0,
    // which adds nothing), so all levels fold in, earlier ones on the left, as in the loop.
    if (levels > 0) peeled.pop_back();  // the merges table
    if (hasRandom) stepCounter = microBatchStep(peeled.pop_back_val(), k);
    // It runs in a repeat of its own, one iteration (from the runtime's bounds: the lowering
    // cannot inline it), so that its buffers live in a loop body as the loop's do: at the top
    // level CSE would share them with a later pass's loop (SAM's second), and one-shot
    // bufferization would keep them live in between. The body reduces its sums (start and
    // wait) and yields them; the carried inits (the loop's running subtree) go unread. A
    // reduce-scattered gradient comes out as this rank's block: its init is the block of the
    // running sum (a view: no buffer of its own).
    llvm::SmallVector<Value> lastInits;
    llvm::SmallVector<mlir::Type> lastTypes;
    for (size_t j = 0; j < width; ++j) {
      Value init = repeat.getResult(j);
      if (j > 0 && scatter && scattered(paramOps[j - 1]))
        init = g.one<step::RankShardOp>({init}, {g.i64Attr("parts", shards)});
      lastInits.push_back(init);
      lastTypes.push_back(init.getType());
    }
    auto lastRepeat = b.create<step::RepeatOp>(loc, lastTypes, b.getStringAttr("micro_batch_last"),
                                               b.getI64IntegerAttr(1), lastInits,
                                               mlir::ValueRange{}, nullptr, nullptr);
    lastRepeat->setAttr("step.rank_split_last", b.getI64IntegerAttr(k));
    mlir::Block *lastBody = b.createBlock(&lastRepeat.getBody());
    for (Value v : lastInits) lastBody->addArgument(v.getType(), loc);
    auto last = singlePass(params, peeled, /*microBatch=*/true);
    stepCounter = outerStep;
    if (failed(last)) return microBatchFailure(k);
    ad::GradBuilder gp(b, loc);
    llvm::SmallVector<Value> mine{
        gp.one<step::CastOp>({last->first}, {gp.attr("to", mlir::TypeAttr::get(f32))})};
    mine.append(last->second.begin(), last->second.end());
    for (int64_t l = 0; l < levels; ++l)
      for (size_t j = 0; j < width; ++j)
        mine[j] = gp.add(repeat.getResult((l + 1) * width + j), mine[j]);
    auto [reducedLoss, reduced] =
        reduceOverRanks(gp, mine[0], llvm::ArrayRef<Value>(mine).drop_front(), true, scatter);
    llvm::SmallVector<Value> yielded{reducedLoss};
    yielded.append(reduced.begin(), reduced.end());
    b.create<step::YieldOp>(loc, yielded);
    b.setInsertionPointAfter(lastRepeat);
    if (gp.failed()) return mlir::failure();
    loss = lastRepeat.getResult(0);
    sums.clear();
    for (size_t i = 0; i < params.size(); ++i) sums.push_back(lastRepeat.getResult(i + 1));
  } else if (dataParallel) {
    std::tie(loss, sums) = reduceOverRanks(g, loss, sums, false, scatter);
  }
  double inv = 1.0 / static_cast<double>(k);
  llvm::SmallVector<Value> grads;
  for (Value s : sums) grads.push_back(g.scale(s, inv));
  return std::make_pair(g.scale(loss, inv), grads);
}

mlir::FailureOr<llvm::SmallVector<Value>> TrainStepBuilder::samPerturbation(
    llvm::ArrayRef<Value> params, llvm::ArrayRef<Value> grads) {
  ad::GradBuilder g(b, loc);
  mlir::Type et = b.getF32Type();
  llvm::SmallVector<Value> directions, scaled;
  for (auto [p, grad] : llvm::zip(params, grads)) {
    // Adaptive SAM (ASAM, Kwon et al. 2021) measures the step in T_w-scaled coordinates with
    // T_w = |w| + η: ε = ρ T_w² g / ‖T_w g‖. The η keeps zero weights (a zero-initialised
    // head) in the perturbation; without it they would never be perturbed.
    if (config.samAdaptive) {
      Value tw = g.add(g.one<step::AbsOp>({p}, {}), g.scalar(config.samEta, ad::elementTypeOf(p)));
      directions.push_back(g.mul(g.mul(tw, tw), grad));
      scaled.push_back(g.mul(tw, grad));
    } else {
      directions.push_back(grad);
      scaled.push_back(grad);
    }
  }
  NormOptions how;
  how.byColumns = columnNorms;
  // Every data-parallel step sums its norms by blocks of rows, so that a sharded step (whose
  // ranks hold blocks) computes the unsharded one's bits on every target.
  how.rowBlocks = dataParallel;
  Value norm = emitGlobalNorm(g, scaled, et, how);
  Value factor = g.div(g.scalar(config.samRho, et), g.add(norm, g.scalar(1e-12, et)));
  llvm::SmallVector<Value> perturbed;
  for (auto [p, d] : llvm::zip(params, directions))
    perturbed.push_back(g.add(p, g.mul(d, castTo(g, factor, ad::elementTypeOf(p)))));
  if (g.failed()) return mlir::failure();
  return perturbed;
}

mlir::LogicalResult TrainStepBuilder::checkShards() {
  if (shards == 0) return mlir::success();
  if (!dataParallel)
    return model.emitError() << "--shard-optimizer splits the optimizer state over the ranks of "
                                "a data-parallel run: it needs --data-parallel";
  int64_t k = config.microBatches;
  if (shards < 2 || !llvm::isPowerOf2_64(shards) || k % shards != 0)
    return model.emitError() << "--shard-optimizer=" << shards
                             << " must be a power of two, at least 2, that divides the "
                             << k << " micro-batches (each rank runs an aligned block of them)";
  // The gradient norm sums at most kMaxNormRowBlocks blocks of rows separately, and a rank's
  // share of it must be whole blocks.
  if (shards > kMaxNormRowBlocks)
    return model.emitError() << "--shard-optimizer=" << shards << ": at most "
                             << kMaxNormRowBlocks << " ranks";
  if (llvm::none_of(paramOps, [&](step::ParamOp p) { return sharded(p); }))
    return model.emitError() << "--shard-optimizer=" << shards
                             << ": no parameter's first axis divides into " << shards
                             << " blocks, so nothing would be sharded";
  return mlir::success();
}

mlir::LogicalResult TrainStepBuilder::bindMicroBatchInstance(step::ModelOp instance) {
  auto mismatch = [&](const std::string &what) {
    return instance.emitError() << "the micro-batch instance of @" << model.getSymName()
                                << " does not match it: " << what;
  };
  llvm::SmallVector<step::ParamOp> params;
  instance.getBody().walk([&](step::ParamOp p) { params.push_back(p); });
  if (params.size() != paramOps.size()) return mismatch("another number of parameters");
  for (auto [mine, theirs] : llvm::zip(paramOps, params)) {
    if (mine.getDeclName() != theirs.getDeclName() ||
        mine.getStoredType() != theirs.getStoredType())
      return mismatch("parameter '" + mine.getDeclName() + "'");
    microParamOps.push_back(theirs);
  }
  for (mlir::Operation &op : instance.getBody().front())
    if (auto input = llvm::dyn_cast<step::InputOp>(op))
      for (Value r : input.getResults()) microInputs.push_back(r);
  if (microInputs.size() != inputSlots.size()) return mismatch("another number of inputs");
  for (auto [slot, v] : llvm::zip(inputSlots, microInputs)) {
    llvm::ArrayRef<int64_t> whole = ad::shapeOf(slot.modelValue), part = ad::shapeOf(v);
    if (whole.empty() || part.size() != whole.size() || part.drop_front() != whole.drop_front() ||
        part[0] * config.microBatches != whole[0])
      return mismatch("input '" + slot.name + "' is not 1/" +
                      std::to_string(config.microBatches) + " of the batch");
  }
  llvm::SmallVector<step::RepeatOp> repeats, instanceRepeats;
  model.getBody().walk([&](step::RepeatOp r) { repeats.push_back(r); });
  instance.getBody().walk([&](step::RepeatOp r) { instanceRepeats.push_back(r); });
  if (repeats.size() != instanceRepeats.size()) return mismatch("another number of repeats");
  for (auto [mine, theirs] : llvm::zip(repeats, instanceRepeats))
    theirs->setAttrs(mine->getAttrDictionary());
  micro = instance;
  return mlir::success();
}

mlir::LogicalResult TrainStepBuilder::build(mlir::ModuleOp module) {
  model.getBody().walk([&](step::ParamOp p) { paramOps.push_back(p); });
  if (paramOps.empty())
    return model.emitError() << "the model has no parameters to train (declare them with step.param)";
  for (mlir::Operation &op : model.getBody().front())
    if (auto input = llvm::dyn_cast<step::InputOp>(op))
      for (auto [i, r] : llvm::enumerate(input.getResults()))
        inputSlots.push_back({input.getName().str(), r, static_cast<int>(i)});
  llvm::SmallVector<std::string> slots = optimizerSlots(config);
  if (failed(checkShards())) return mlir::failure();
  if (step::ModelOp instance = step::microBatchInstance(module, model); instance && config.microBatches > 1)
    if (failed(bindMicroBatchInstance(instance))) return mlir::failure();

  // Signature: params, optimizer state by slot, inputs, step counter.
  llvm::SmallVector<mlir::Type> argTypes;
  llvm::SmallVector<mlir::DictionaryAttr> argAttrs;
  auto role = [&](llvm::StringRef r, llvm::StringRef name,
                  llvm::ArrayRef<mlir::NamedAttribute> extra = {}) {
    llvm::SmallVector<mlir::NamedAttribute> attrs{b.getNamedAttr("step.role", b.getStringAttr(r)),
                                                  b.getNamedAttr("step.name", b.getStringAttr(name))};
    attrs.append(extra.begin(), extra.end());
    return b.getDictionaryAttr(attrs);
  };
  for (step::ParamOp p : paramOps) {
    argTypes.push_back(p.getStoredType());
    argAttrs.push_back(role("param", p.getDeclName()));
  }
  // A sharded parameter's state is this rank's block of it (step.shards: how many blocks the
  // first axis is cut into); the runtime gathers the blocks for checkpoints.
  for (const std::string &slot : slots)
    for (step::ParamOp p : paramOps) {
      mlir::RankedTensorType t = p.getStoredType();
      llvm::SmallVector<mlir::NamedAttribute> extra{
          b.getNamedAttr("step.slot", b.getStringAttr(slot))};
      if (sharded(p)) {
        llvm::SmallVector<int64_t> shape(t.getShape());
        shape[0] /= shards;
        t = mlir::RankedTensorType::get(shape, t.getElementType());
        extra.push_back(b.getNamedAttr("step.shards", b.getI64IntegerAttr(shards)));
      }
      argTypes.push_back(t);
      argAttrs.push_back(role("state", p.getDeclName(), extra));
    }
  for (const InputSlot &in : inputSlots) {
    argTypes.push_back(in.modelValue.getType());
    argAttrs.push_back(role("input", in.name,
                            {b.getNamedAttr("step.index", b.getI64IntegerAttr(in.index))}));
  }
  argTypes.push_back(mlir::RankedTensorType::get({}, b.getI64Type()));
  argAttrs.push_back(role("step", "step"));

  b.setInsertionPointToEnd(module.getBody());
  auto fn = b.create<mlir::func::FuncOp>(loc, "train_step", b.getFunctionType(argTypes, {}));
  entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  size_t numParams = paramOps.size();
  auto args = entry->getArguments();
  llvm::SmallVector<Value> params(args.take_front(numParams));
  llvm::SmallVector<llvm::SmallVector<Value>> state;
  for (size_t s = 0; s < slots.size(); ++s)
    state.emplace_back(args.slice(numParams * (s + 1), numParams));
  size_t inputStart = numParams * (slots.size() + 1);
  llvm::SmallVector<Value> inputs(args.slice(inputStart, inputSlots.size()));
  stepCounter = args.back();

  // Halves of the batch when SAM takes its second gradient on the next micro-batch.
  ad::GradBuilder g(b, loc);
  llvm::SmallVector<Value> firstInputs(inputs), secondInputs(inputs);
  bool sam = config.samRho > 0;
  if (sam && config.samNextBatch) {
    firstInputs.clear();
    secondInputs.clear();
    for (Value in : inputs) {
      llvm::SmallVector<int64_t> shape(ad::shapeOf(in));
      if (shape.empty() || shape[0] % 2)
        return model.emitError() << "SAM with next_batch needs an even batch, found "
                                 << (shape.empty() ? 0 : shape[0]);
      llvm::SmallVector<int64_t> start(shape.size(), 0), mid(shape);
      mid[0] = shape[0] / 2;
      llvm::SmallVector<int64_t> midStart(shape.size(), 0);
      midStart[0] = shape[0] / 2;
      firstInputs.push_back(g.one<step::SliceOp>({in}, {g.arrayAttr("start", start),
                                                         g.arrayAttr("limit", mid)}));
      secondInputs.push_back(g.one<step::SliceOp>({in}, {g.arrayAttr("start", midStart),
                                                          g.arrayAttr("limit", shape)}));
    }
  }

  auto first = lossAndGrads(params, firstInputs, /*scatter=*/!sam);
  if (failed(first)) return mlir::failure();
  Value loss = first->first, samLoss;
  llvm::SmallVector<Value> grads = first->second;
  if (sam) {
    auto perturbed = samPerturbation(params, grads);
    if (failed(perturbed)) return mlir::failure();
    auto second = lossAndGrads(*perturbed, secondInputs, /*scatter=*/true);
    if (failed(second)) return mlir::failure();
    samLoss = second->first;
    grads = second->second;
  }
  if (rebuildError && rebuildErrors.empty())
    return model.emitError() << "--rebuild-error measures the rebuilt inputs of reversible "
                                "repeats, and this model's backward rebuilds none";

  // The schedule and Adam's bias corrections read the step counter in f64, exact to 2^53
  // steps; the learning rate is handed on in f32.
  mlir::Type f32 = b.getF32Type();
  Value t = g.one<step::CastOp>({stepCounter}, {g.attr("to", mlir::TypeAttr::get(b.getF64Type()))});
  llvm::SmallVector<ParamSlot> slotsInfo;
  for (auto [p, v, grad] : llvm::zip(paramOps, params, grads))
    slotsInfo.push_back({p.getDeclName(), v, grad,
                         static_cast<int>(p.getStoredType().getRank() -
                                          p.getDeclaredType().getRank())});
  // --shard-optimizer (ZeRO stage 1): a scattered parameter's gradient is this rank's block
  // of its rows (the reduce-scatter's, the tree's bits); the norm sums every gradient by
  // blocks of rows (as the unsharded step does), the rank's blocks' shares all-gathered.
  // Clipping is elementwise or per layer, so a block clips as the whole does.
  llvm::SmallVector<bool> blocks;
  for (step::ParamOp p : paramOps) blocks.push_back(scattered(p));
  NormOptions how;
  how.byColumns = columnNorms;
  // Every data-parallel step sums its norms by blocks of rows, so that a sharded step (whose
  // ranks hold blocks) computes the unsharded one's bits on every target.
  how.rowBlocks = dataParallel;
  if (llvm::is_contained(blocks, true)) {
    how.blocks = blocks;
    how.parts = shards;
  }
  Value gradNorm = emitGlobalNorm(g, grads, f32, how);
  for (auto [p, info] : llvm::zip(paramOps, slotsInfo))
    if (scattered(p)) {
      info.wholeValue = info.value;
      info.value = g.one<step::RankShardOp>({info.value}, {g.i64Attr("parts", shards)});
    }
  llvm::SmallVector<Value> clipped = emitClipping(g, config, slotsInfo, gradNorm, how);
  for (auto [info, c] : llvm::zip(slotsInfo, clipped)) info.grad = c;
  // Each rank updates only its block of each sharded parameter with its block of the state,
  // and the ranks then gather the parameter. The update is elementwise, so a block's new
  // values are the whole update's bits. A sharded parameter that is not scattered has the
  // whole reduced gradient (the tree's): its block is cut here.
  for (auto [p, info] : llvm::zip(paramOps, slotsInfo))
    if (sharded(p) && !scattered(p)) {
      info.value = g.one<step::RankShardOp>({info.value}, {g.i64Attr("parts", shards)});
      info.grad = g.one<step::RankShardOp>({info.grad}, {g.i64Attr("parts", shards)});
    }
  Value lr = castTo(g, emitLearningRate(g, config, t), f32);
  llvm::SmallVector<Value> newParams;
  llvm::SmallVector<llvm::SmallVector<Value>> newState;
  emitOptimizerUpdate(g, config, slotsInfo, state, lr, t, newParams, newState);
  for (auto [p, np] : llvm::zip(paramOps, newParams))
    if (sharded(p)) np = g.one<step::AllGatherOp>({np}, {g.i64Attr("parts", shards)});

  llvm::SmallVector<Value> results(newParams);
  llvm::SmallVector<mlir::DictionaryAttr> resultAttrs(argAttrs.begin(),
                                                      argAttrs.begin() + numParams * (slots.size() + 1));
  for (auto &slot : newState) results.append(slot.begin(), slot.end());
  auto metric = [&](llvm::StringRef name, Value v) {
    results.push_back(v);
    resultAttrs.push_back(role("metric", name));
  };
  metric("loss", loss);
  metric("grad_norm", gradNorm);
  metric("lr", lr);
  if (sam) metric("sam_loss", samLoss);
  // --rebuild-error: the worst reconstruction of any reversible repeat, either pass.
  if (rebuildError) {
    Value worst = rebuildErrors.front();
    for (Value e : llvm::ArrayRef<Value>(rebuildErrors).drop_front())
      worst = g.one<step::MaxOp>({worst, e});
    metric("rebuild_error", castTo(g, worst, f32));
  }
  // The gradients themselves (--export-grads), before clipping, for `train --save-grads`.
  if (exportGrads)
    for (auto [p, grad] : llvm::zip(paramOps, grads)) {
      results.push_back(grad);
      resultAttrs.push_back(role("grad", p.getDeclName()));
    }
  b.create<mlir::func::ReturnOp>(loc, results);
  fn.setFunctionType(b.getFunctionType(argTypes, mlir::ValueRange(results).getTypes()));
  fn.setAllArgAttrs(argAttrs);
  fn.setAllResultAttrs(resultAttrs);
  // The runtime splits these micro-batches over the ranks (DescribeProgram records it).
  if (dataParallel) fn->setAttr("step.data_parallel", b.getI64IntegerAttr(config.microBatches));
  if (shards > 0) fn->setAttr("step.shard_optimizer", b.getI64IntegerAttr(shards));
  ad::eraseDeadStepOps(fn.getBody());
  if (g.failed()) return model.emitError() << "internal error while assembling the train step";
  return mlir::success();
}

struct BuildTrainStepPass : impl::BuildTrainStepBase<BuildTrainStepPass> {
  using BuildTrainStepBase::BuildTrainStepBase;

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    auto models = step::trainedModels(module);
    if (models.size() != 1) {
      module.emitError() << "expected one step.model, found " << models.size();
      return signalPassFailure();
    }
    if (module.lookupSymbol("train_step")) {
      module.emitError() << "the module already has a @train_step";
      return signalPassFailure();
    }
    // Unset options hold NaN / 0 / "": anything else given reaches the validation.
    TrainOverrides overrides;
    if (!optimizer.empty()) overrides.optimizer = optimizer;
    if (!std::isnan(lr)) overrides.lr = lr;
    if (!std::isnan(samRho)) overrides.samRho = samRho;
    if (microBatches != 0) overrides.microBatches = microBatches;
    if (!clip.empty()) overrides.clip = clip;
    mlir::FailureOr<TrainConfig> config = resolveTrainConfig(models[0], overrides);
    if (failed(config)) return signalPassFailure();
    writeTrainConfig(models[0], *config);
    if (failed(TrainStepBuilder(models[0], *config, exportGrads, columnNorms, dataParallel,
                                overlapReductions, shardOptimizer, rebuildError)
                   .build(module)))
      return signalPassFailure();
  }
};

}  // namespace
}  // namespace stepc::train
