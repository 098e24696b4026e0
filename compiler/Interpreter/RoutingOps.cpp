//===- RoutingOps.cpp - top_k, routing and the routed gather -------------===//
//
// The definitions the compiled kernels are checked against: top_k by a stable selection (equal
// values keep the lower index first, NaN above every number), the two routings by their rules
// written plainly (a priority pass for token choice; for expert choice each expert in turn
// sorting its eligible tokens by the f32 score the compiled code compares), and gather_rows with
// its two maps checked against each other, so that a model whose maps disagree fails here
// instead of training on a wrong gradient.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <numeric>

#include "compiler/Interpreter/Kernels.h"
#include "llvm/ADT/TypeSwitch.h"

namespace stepc::interp {
namespace {

// a ranks before b (a at a lower index than b when they are equal).
bool ranksBefore(double a, double b) {
  if (std::isnan(a)) return !std::isnan(b);
  return a > b;
}

void topK(const Tensor &in, int64_t k, Tensor &values, Tensor &indices) {
  int64_t n = in.shape().back(), rows = in.numElements() / n;
  std::vector<int64_t> order(n);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = &in.data[r * n];
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return ranksBefore(row[a], row[b]); });
    for (int64_t j = 0; j < k; ++j) {
      values.data[r * k + j] = row[order[j]];
      indices.data[r * k + j] = static_cast<double>(order[j]);
    }
  }
}

struct Routes {
  Tensor &choices, &slots;
  int64_t capacity, k;
  void fill() {
    std::fill(choices.data.begin(), choices.data.end(), -1.0);
    std::fill(slots.data.begin(), slots.data.end(), -1.0);
  }
  void assign(int64_t expert, int64_t c, int64_t token, int64_t j) {
    choices.data[expert * capacity + c] = static_cast<double>(token * k + j);
    slots.data[token * k + j] = static_cast<double>(expert * capacity + c);
  }
};

mlir::LogicalResult routeTokens(mlir::Operation *op, const Tensor &experts, int64_t numExperts,
                                Routes routes) {
  int64_t tokens = experts.shape()[0], k = experts.shape()[1];
  routes.fill();
  std::vector<int64_t> load(numExperts, 0);
  for (int64_t j = 0; j < k; ++j)
    for (int64_t t = 0; t < tokens; ++t) {
      double e = experts.data[t * k + j];
      if (!(e >= 0 && e < numExperts) || e != std::floor(e))
        return op->emitError() << "expert " << e << " of token " << t << " (choice " << j
                               << ") is out of range for " << numExperts << " experts";
      int64_t expert = static_cast<int64_t>(e);
      if (load[expert] < routes.capacity) routes.assign(expert, load[expert]++, t, j);
    }
  return mlir::success();
}

void routeExperts(const Tensor &scores, Routes routes, Tensor &chosen) {
  int64_t tokens = scores.shape()[0], numExperts = scores.shape()[1], k = routes.k;
  routes.fill();
  std::fill(chosen.data.begin(), chosen.data.end(), -1.0);
  std::vector<int64_t> taken(tokens, 0), eligible;
  for (int64_t e = 0; e < numExperts; ++e) {
    eligible.clear();
    for (int64_t t = 0; t < tokens; ++t)
      if (taken[t] < k) eligible.push_back(t);
    // The compiled routing compares f32 scores: rank them as f32 here too.
    auto score = [&](int64_t t) { return static_cast<double>(static_cast<float>(scores.data[t * numExperts + e])); };
    std::stable_sort(eligible.begin(), eligible.end(),
                     [&](int64_t a, int64_t b) { return ranksBefore(score(a), score(b)); });
    eligible.resize(std::min<size_t>(eligible.size(), routes.capacity));
    std::sort(eligible.begin(), eligible.end());  // slots in token order
    for (size_t c = 0; c < eligible.size(); ++c) {
      int64_t t = eligible[c];
      chosen.data[t * k + taken[t]] = static_cast<double>(e);
      routes.assign(e, static_cast<int64_t>(c), t, taken[t]++);
    }
  }
}

// result[p] = source[ids[p] div group] (zero for −1), after checking that the maps are each
// other's inverse.
mlir::LogicalResult gatherRows(mlir::Operation *op, const Tensor &source, const Tensor &ids,
                               const Tensor &inverse, int64_t group, Tensor &out) {
  int64_t width = source.shape()[1], rows = inverse.numElements(), positions = ids.numElements();
  for (int64_t p = 0; p < positions; ++p) {
    double id = ids.data[p];
    if (id == -1) continue;
    if (!(id >= 0 && id < rows) || id != std::floor(id))
      return op->emitError() << "id " << id << " at position " << p << " is out of range for "
                             << rows << " rows (−1 marks an empty slot)";
    int64_t q = static_cast<int64_t>(id);
    if (inverse.data[q] != static_cast<double>(p))
      return op->emitError() << "position " << p << " reads row " << q
                             << " but the inverse maps that row to " << inverse.data[q];
    std::copy_n(&source.data[(q / group) * width], width, &out.data[p * width]);
  }
  for (int64_t q = 0; q < rows; ++q) {
    double p = inverse.data[q];
    if (p == -1) continue;
    if (!(p >= 0 && p < positions) || ids.data[static_cast<int64_t>(p)] != static_cast<double>(q))
      return op->emitError() << "the inverse maps row " << q << " to position " << p
                             << ", which does not read it";
  }
  return mlir::success();
}

}  // namespace

KernelResult runRoutingOp(mlir::Operation *op, Operands in, Results out) {
  return llvm::TypeSwitch<mlir::Operation *, KernelResult>(op)
      .Case<step::TopKOp>([&](step::TopKOp top) {
        topK(*in[0], top.getK(), out[0], out[1]);
        return mlir::success();
      })
      .Case<step::RouteTokensOp>([&](step::RouteTokensOp route) {
        Routes routes{out[0], out[1], out[0].shape()[1], in[0]->shape()[1]};
        return routeTokens(op, *in[0], route.getNumExperts(), routes);
      })
      .Case<step::RouteExpertsOp>([&](step::RouteExpertsOp route) {
        Routes routes{out[0], out[1], out[0].shape()[1], route.getK()};
        routeExperts(*in[0], routes, out[2]);
        return mlir::success();
      })
      .Case<step::GatherRowsOp>([&](step::GatherRowsOp gather) {
        return gatherRows(op, *in[0], *in[1], *in[2], gather.getGroup(), out[0]);
      })
      .Default([](mlir::Operation *) { return std::nullopt; });
}

}  // namespace stepc::interp
