//===- RoutingVjps.cpp - VJPs of top_k and gather_rows --------------------===//
//
// The routings themselves give integers and carry no gradient; the gates' gradient flows
// through top_k's values (or the ops the model reads its gates with) and the rows' through
// gather_rows, whose adjoint is the gather by the inverse map: every step of a mixture of
// experts' backward is a gather with a fixed order of summation, so its bits do not depend on
// the schedule or the thread count.
//
//===----------------------------------------------------------------------===//
#include "compiler/Autodiff/VjpModel.h"

namespace stepc::ad {
namespace {

using llvm::ArrayRef;
using mlir::LogicalResult;
using mlir::success;
using mlir::Value;
using Grads = llvm::SmallVectorImpl<Value>;

// values[r, j] = x[r, indices[r, j]]: the adjoint puts dvalues back at the chosen positions,
// dx[r, e] = Σ_j (indices[r, j] == e ? dvalues[r, j] : 0), a select per (r, j, e) summed
// over j in order (a row's indices are distinct, so at most one term is not 0). Elementwise
// over [r, e] once the k-term sum is unrolled, it fuses into the router's backward; a
// scatter-add of rows of width 1 (its first form) was a fill and a scan over the r·k choices,
// one dependent step after another on a GPU. A select, not a mask product: 0 · inf would
// spread a non-finite gradient to every expert of the row.
LogicalResult vjpTopK(step::TopKOp op, GradBuilder &g, ArrayRef<Value> gy, Grads &gx) {
  if (!gy[0]) return success();
  Value x = op.getInput();
  int64_t n = shapeOf(x).back(), k = op.getK(), rows = 1;
  for (int64_t d : shapeOf(x).drop_back()) rows *= d;
  Value indices = g.reshape(op.getIndices(), {rows, k, 1});
  Value grad = g.reshape(gy[0], {rows, k, 1});
  Value positions = g.one<step::IotaOp>(
      {}, {g.arrayAttr("shape", {n}), g.i64Attr("axis", 0),
           g.attr("dtype", mlir::TypeAttr::get(elementTypeOf(indices)))});
  Value hit = g.compare(indices, positions, "eq");  // [rows, k, n]
  Value picked = g.select(hit, grad, g.scalar(0.0, elementTypeOf(grad)));
  gx[0] = g.reshape(g.sum(picked, {1}), shapeOf(x));
  return success();
}

// result[p] = source[ids[p] div g]: d(virtual row q) = dresult[inverse[q]] (zero for −1), and
// a source row sums its g virtual rows in order. The adjoint's own maps are the forward's
// swapped, so it is a gather_rows that is again differentiable.
LogicalResult vjpGatherRows(step::GatherRowsOp op, GradBuilder &g, ArrayRef<Value> gy,
                            Grads &gx) {
  Value source = op.getSource();
  int64_t rows = shapeOf(source)[0], width = shapeOf(source)[1], group = op.getGroup();
  int64_t positions = 1;
  for (int64_t d : shapeOf(op.getIds())) positions *= d;
  Value grad = g.reshape(gy[0], {positions, width});
  Value gathered = g.one<step::GatherRowsOp>(
      {grad, g.reshape(op.getInverse(), {rows, group}), op.getIds()});  // [N, g, D]
  gx[0] = group == 1 ? g.reshape(gathered, {rows, width}) : g.sum(gathered, {1});
  return success();
}

}  // namespace

void attachRoutingVjps(mlir::MLIRContext *ctx) {
  attachVjp<step::TopKOp, vjpTopK>(ctx);
  attachVjp<step::GatherRowsOp, vjpGatherRows>(ctx);
}

}  // namespace stepc::ad
