//===- Clipping.cpp - gradient clipping by global norm and AGC ----------===//
#include "compiler/Training/UpdateRules.h"

#include <algorithm>

namespace stepc::train {

mlir::Value castTo(ad::GradBuilder &g, mlir::Value v, mlir::Type type) {
  if (ad::elementTypeOf(v) == type) return v;
  return g.one<step::CastOp>({v}, {g.attr("to", mlir::TypeAttr::get(type))});
}

int64_t normRowBlocks(int64_t rows) {
  return rows > 0 ? std::min<int64_t>(rows & -rows, kMaxNormRowBlocks) : 1;
}

int64_t normRowBlocks(mlir::Value v) {
  llvm::ArrayRef<int64_t> shape = ad::shapeOf(v);
  return shape.empty() ? 1 : normRowBlocks(shape[0]);
}

mlir::Value blockSquares(ad::GradBuilder &g, mlir::Value x, int64_t blocks, int64_t wholeRows,
                         bool byColumns) {
  llvm::SmallVector<int64_t> shape(ad::shapeOf(x));
  llvm::SmallVector<int64_t> split{blocks, shape[0] / blocks};
  split.append(shape.begin() + 1, shape.end());
  mlir::Value sq = g.reshape(x, split);
  sq = g.mul(sq, sq);
  // GradBuilder::sumOfSquares's choice, made on the whole tensor's shape so that a rank's
  // block sums the way the whole does.
  int64_t columns = shape.back(), count = wholeRows;
  for (int64_t d : llvm::ArrayRef<int64_t>(shape).drop_front()) count *= d;
  int64_t rank = static_cast<int64_t>(split.size());
  llvm::SmallVector<int64_t> inner;
  bool columnsFirst = byColumns && shape.size() >= 2 && columns >= 16 && count / columns >= 16;
  for (int64_t a = 1; a < (columnsFirst ? rank - 1 : rank); ++a) inner.push_back(a);
  mlir::Value partial = g.sum(sq, inner);
  return columnsFirst ? g.sum(partial, {1}) : partial;
}

mlir::Value pairwiseSum(ad::GradBuilder &g, mlir::Value x) {
  llvm::SmallVector<int64_t> shape(ad::shapeOf(x));
  while (shape[0] > 1) {
    llvm::SmallVector<int64_t> pairs{shape[0] / 2, 2};
    pairs.append(shape.begin() + 1, shape.end());
    mlir::Value p = g.reshape(x, pairs);
    llvm::SmallVector<int64_t> start(pairs.size(), 0), limit(pairs);
    limit[1] = 1;
    mlir::Value left = g.one<step::SliceOp>({p}, {g.arrayAttr("start", start),
                                                  g.arrayAttr("limit", limit)});
    start[1] = 1;
    limit[1] = 2;
    mlir::Value right = g.one<step::SliceOp>({p}, {g.arrayAttr("start", start),
                                                   g.arrayAttr("limit", limit)});
    shape[0] /= 2;
    x = g.add(g.reshape(left, shape), g.reshape(right, shape));
  }
  return x;
}

mlir::Value gatherShares(ad::GradBuilder &g, llvm::ArrayRef<mlir::Value> shares, int64_t parts,
                         llvm::SmallVectorImpl<mlir::Value> &gathered) {
  llvm::SmallVector<mlir::Value> flat;
  llvm::SmallVector<int64_t> counts;
  int64_t width = 0;
  for (mlir::Value s : shares) {
    int64_t count = 1;
    for (int64_t d : ad::shapeOf(s)) count *= d;
    flat.push_back(g.reshape(s, {count}));
    counts.push_back(count);
    width += count;
  }
  mlir::Value row = flat.size() == 1 ? flat[0] : g.one<step::ConcatOp>(flat, {g.i64Attr("axis", 0)});
  // Marked so that `info` counts it apart from the parameters' gathers.
  mlir::Value shared = g.one<step::AllGatherOp>({row}, {g.i64Attr("parts", parts)});
  if (mlir::Operation *op = shared.getDefiningOp())
    op->setAttr("step.norm_shares", mlir::UnitAttr::get(op->getContext()));
  mlir::Value all = g.reshape(shared, {parts, width});
  int64_t at = 0;
  for (auto [s, count] : llvm::zip(shares, counts)) {
    mlir::Value cols = g.one<step::SliceOp>(
        {all}, {g.arrayAttr("start", {0, at}), g.arrayAttr("limit", {parts, at + count})});
    llvm::SmallVector<int64_t> shape(ad::shapeOf(s));
    shape[0] = parts;
    gathered.push_back(g.reshape(cols, shape));
    at += count;
  }
  return all;
}

mlir::Value emitGlobalNorm(ad::GradBuilder &g, llvm::ArrayRef<mlir::Value> values,
                           mlir::Type type, const NormOptions &options) {
  // Each value's blocks of rows are summed in a pairwise tree, ((b0 + b1) + (b2 + b3)) ...; a
  // rank's block of rows is an aligned subtree of it, so the rank folds its own and the ranks'
  // results (one all-gather for all the values) finish the tree: the whole value's bits.
  auto isBlock = [&](size_t i) { return i < options.blocks.size() && options.blocks[i]; };
  llvm::SmallVector<mlir::Value> shares, gathered;
  for (auto [i, v] : llvm::enumerate(values))
    if (isBlock(i)) {
      int64_t whole = ad::shapeOf(v)[0] * options.parts;
      int64_t blocks = normRowBlocks(whole);
      shares.push_back(
          pairwiseSum(g, blockSquares(g, v, blocks / options.parts, whole, options.byColumns)));
    }
  if (!shares.empty()) gatherShares(g, shares, options.parts, gathered);
  mlir::Value total = g.scalar(0.0, type);
  size_t next = 0;
  for (auto [i, v] : llvm::enumerate(values)) {
    mlir::Value squares;
    if (isBlock(i)) {
      squares = g.reshape(pairwiseSum(g, gathered[next++]), {});
    } else if (options.rowBlocks && normRowBlocks(v) > 1) {
      squares = g.reshape(pairwiseSum(g, blockSquares(g, v, normRowBlocks(v), ad::shapeOf(v)[0],
                                                      options.byColumns)),
                          {});
    } else {
      squares = g.sumOfSquares(v, options.byColumns);
    }
    total = g.add(total, castTo(g, squares, type));
  }
  return g.one<step::SqrtOp>({total});
}

namespace {

// The L2 norm over `axes`, kept as size-1 dims (elementwise |x| when there are none).
mlir::Value unitNorm(ad::GradBuilder &g, mlir::Value x, llvm::ArrayRef<int64_t> axes) {
  mlir::Value sq = g.mul(x, x);
  return g.one<step::SqrtOp>({axes.empty() ? sq : g.sum(sq, axes, /*keepdim=*/true)});
}

}  // namespace

llvm::SmallVector<mlir::Value> emitClipping(ad::GradBuilder &g, const TrainConfig &c,
                                            llvm::ArrayRef<ParamSlot> params, mlir::Value norm,
                                            const NormOptions &options) {
  llvm::SmallVector<mlir::Value> out;
  if (c.clip == "none") {
    for (const ParamSlot &p : params) out.push_back(p.grad);
    return out;
  }
  mlir::Type normType = ad::elementTypeOf(norm);
  if (c.clip == "global_norm") {
    mlir::Value coef =
        g.div(g.scalar(c.maxNorm, normType), g.add(norm, g.scalar(1e-6, normType)));
    coef = g.one<step::MinOp>({coef, g.scalar(1.0, normType)});
    for (const ParamSlot &p : params)
      out.push_back(g.mul(p.grad, castTo(g, coef, ad::elementTypeOf(p.grad))));
    return out;
  }
  // AGC. A norm over the first axis (an unstacked parameter's columns) sums blocks of rows in
  // a pairwise tree with options.rowBlocks, as the global norm does: a rank holding a block
  // of the gradient's rows (ParamSlot::wholeValue set) folds its subtree, and the ranks'
  // results are all-gathered (all the parameters' at once) to finish it.
  struct Norms {
    llvm::SmallVector<int64_t> axes;
    bool blocked = false;  // by blocks of rows
    mlir::Value squares;   // [1, ..., kept]: the squares summed over `axes` (keepdim), or the
                           // rank's subtree's
  };
  llvm::SmallVector<Norms> norms;
  llvm::SmallVector<mlir::Value> shares, gathered;
  for (const ParamSlot &p : params) {
    Norms n;
    int64_t rank = ad::rankOf(p.grad);
    int64_t declaredRank = rank - p.stackedDims;
    for (int64_t a = p.stackedDims; a < (declaredRank > 1 ? rank - 1 : rank); ++a)
      n.axes.push_back(a);
    int64_t rows = rank > 0 ? ad::shapeOf(p.grad)[0] * (p.wholeValue ? options.parts : 1) : 0;
    int64_t blocks = normRowBlocks(rows);
    // A rank's block of the rows cannot give a norm over all of them alone: blocked whenever
    // the gradient is one (wholeValue), whatever rowBlocks says.
    n.blocked = (options.rowBlocks || p.wholeValue) && !n.axes.empty() && n.axes[0] == 0 &&
                blocks > 1;
    if (n.blocked) {
      int64_t mine = p.wholeValue ? blocks / options.parts : blocks;
      llvm::SmallVector<int64_t> shape(ad::shapeOf(p.grad));
      llvm::SmallVector<int64_t> split{mine, shape[0] / mine};
      split.append(shape.begin() + 1, shape.end());
      llvm::SmallVector<int64_t> reduced;
      for (int64_t a : n.axes) reduced.push_back(a + 1);
      mlir::Value y = g.reshape(p.grad, split);
      n.squares = pairwiseSum(g, g.sum(g.mul(y, y), reduced, /*keepdim=*/true));
      if (p.wholeValue) shares.push_back(n.squares);
    }
    norms.push_back(n);
  }
  if (!shares.empty()) gatherShares(g, shares, options.parts, gathered);
  size_t next = 0;
  for (auto [p, n] : llvm::zip(params, norms)) {
    mlir::Type et = ad::elementTypeOf(p.grad);
    mlir::Value gn;
    if (n.blocked) {
      mlir::Value squares = p.wholeValue ? pairwiseSum(g, gathered[next++]) : n.squares;
      llvm::SmallVector<int64_t> kept(ad::shapeOf(squares).drop_front());
      gn = g.one<step::SqrtOp>({g.reshape(squares, kept)});
    } else {
      gn = unitNorm(g, p.grad, n.axes);
    }
    // The parameter's norm from the whole parameter (every rank has it) when the norm spans
    // its rows.
    mlir::Value value = p.wholeValue && n.blocked ? p.wholeValue : p.value;
    mlir::Value pn = g.one<step::MaxOp>({unitNorm(g, value, n.axes), g.scalar(c.agcEpsParam, et)});
    gn = g.one<step::MaxOp>({gn, g.scalar(c.agcEpsGrad, et)});
    mlir::Value scale = g.one<step::MinOp>({g.scale(g.div(pn, gn), c.agcLambda), g.scalar(1.0, et)});
    out.push_back(g.mul(p.grad, scale));
  }
  return out;
}

}  // namespace stepc::train
