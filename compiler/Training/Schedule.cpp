//===- Schedule.cpp - the LR schedule, computed from the step counter ----===//
#include <cmath>

#include "compiler/Training/UpdateRules.h"

namespace stepc::train {

mlir::Value emitLearningRate(ad::GradBuilder &g, const TrainConfig &c, mlir::Value t) {
  mlir::Type f32 = ad::elementTypeOf(t);
  auto s = [&](double v) { return g.scalar(v, f32); };
  if (c.schedule == "constant") return s(c.lr);
  double warmup = static_cast<double>(c.warmup);
  double span = std::max(1.0, static_cast<double>(c.total - c.warmup));
  // Cosine annealing from lr to `floor` over (warmup, total].
  double floor = c.schedule == "one_cycle" ? c.finalLr : c.minLr;
  mlir::Value progress = g.one<step::MinOp>({g.div(g.sub(t, s(warmup)), s(span)), s(1.0)});
  mlir::Value cosine = g.one<step::CosOp>({g.scale(progress, M_PI)});
  mlir::Value annealed = g.add(s(floor), g.scale(g.add(s(1.0), cosine), 0.5 * (c.lr - floor)));
  mlir::Value warm;
  if (c.schedule == "one_cycle")
    warm = g.add(s(c.startLr), g.scale(t, (c.lr - c.startLr) / std::max(warmup, 1.0)));
  else
    warm = g.scale(g.add(t, s(1.0)), c.lr / std::max(warmup, 1.0));
  return g.select(g.compare(t, s(warmup), "lt"), warm, annealed);
}

}  // namespace stepc::train
