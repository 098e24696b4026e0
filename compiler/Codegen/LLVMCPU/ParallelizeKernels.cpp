//===- ParallelizeKernels.cpp - --step-parallelize-kernels ----------------===//
//
// The CPU's way to run a tiled kernel (--step-tile-kernels) on several threads. A kernel whose
// body is an `scf.forall` becomes a function of a range of its iterations: two index
// arguments (lo, hi) are appended, and the forall becomes an `scf.for` over [lo, hi) of its
// linearised iteration space. Callers pass the whole range, [0, tasks), and the function is
// marked `step.parallel_tasks = tasks`; --step-dispatch-parallel-kernels then hands such calls
// to the runtime's thread pool, which calls the function once per thread with a part of the
// range.
//
// A cumsum's scan kernel (ScanLoop.h) has no forall: its loop is first split over the state's
// first non-axis dimension (the batch, for byte_lm_residual: 16 scans of its columns), which then runs
// the same way.
//
// Why a range and not one call per iteration: the kernel's code stays exactly what LLVM
// vectorises today (the loops inside a tile are untouched), and a thread pays one call for
// all its iterations.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Delinearize.h"
#include "compiler/Codegen/LLVMCPU/Passes.h"
#include "compiler/Codegen/Common/ScanLoop.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_PARALLELIZEKERNELS
#include "compiler/Codegen/LLVMCPU/Passes.h.inc"

namespace {

// Rewrites `forall` in place as a loop over [lo, hi) of its linearised iterations; returns the
// number of iterations, or failure if its bounds are not constants.
mlir::FailureOr<int64_t> forallToRange(mlir::scf::ForallOp forall, mlir::Value lo,
                                       mlir::Value hi) {
  if (forall.getNumResults() != 0) return mlir::failure();
  auto lbs = forall.getStaticLowerBound(), ubs = forall.getStaticUpperBound(),
       steps = forall.getStaticStep();
  auto trips = tripCounts(lbs, ubs, steps);
  if (!trips) return mlir::failure();
  int64_t total = 1;
  for (int64_t t : *trips) total *= t;
  mlir::OpBuilder b(forall);
  mlir::Location loc = forall.getLoc();
  mlir::Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<mlir::scf::ForOp>(loc, lo, hi, one);
  b.setInsertionPointToStart(loop.getBody());
  llvm::SmallVector<mlir::Value> ivs =
      delinearize(b, loc, loop.getInductionVar(), *trips, lbs, steps);
  inlineLoopBody(forall, forall.getBody(), ivs, loop.getBody()->getTerminator());
  return total;
}

struct ParallelizeKernelsPass : impl::ParallelizeKernelsBase<ParallelizeKernelsPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *ctx = &getContext();
    llvm::DenseMap<mlir::StringAttr, int64_t> tasksOf;
    for (auto fn : module.getOps<mlir::func::FuncOp>()) {
      if (!fn->hasAttr("step.kernel") || fn.isExternal() || fn->hasAttr("step.parallel_tasks"))
        continue;
      for (mlir::Operation &op : llvm::make_early_inc_range(fn.getBody().front()))
        if (auto loop = llvm::dyn_cast<mlir::scf::ForOp>(op); loop && loop->hasAttr("step.scan"))
          if (auto scan = matchScanLoop(loop)) (void)splitScanOverForall(loop, *scan);
      llvm::SmallVector<mlir::scf::ForallOp> foralls;
      for (mlir::Operation &op : fn.getBody().front())
        if (auto forall = llvm::dyn_cast<mlir::scf::ForallOp>(op)) foralls.push_back(forall);
      if (foralls.size() != 1) continue;
      mlir::Block &entry = fn.getBody().front();
      auto index = mlir::IndexType::get(ctx);
      mlir::Value lo = entry.addArgument(index, fn.getLoc());
      mlir::Value hi = entry.addArgument(index, fn.getLoc());
      auto total = forallToRange(foralls.front(), lo, hi);
      if (failed(total)) {
        foralls.front().emitError("expected an scf.forall on buffers with constant bounds");
        return signalPassFailure();
      }
      fn.setType(mlir::FunctionType::get(ctx, entry.getArgumentTypes(), {}));
      fn->setAttr("step.parallel_tasks", mlir::IntegerAttr::get(mlir::IntegerType::get(ctx, 64),
                                                                *total));
      tasksOf[fn.getSymNameAttr()] = *total;
    }
    module.walk([&](mlir::func::CallOp call) {
      auto it = tasksOf.find(call.getCalleeAttr().getAttr());
      if (it == tasksOf.end()) return;
      mlir::OpBuilder b(call);
      llvm::SmallVector<mlir::Value> args(call.getOperands());
      args.push_back(b.create<mlir::arith::ConstantIndexOp>(call.getLoc(), 0));
      args.push_back(b.create<mlir::arith::ConstantIndexOp>(call.getLoc(), it->second));
      call->setOperands(args);
    });
  }
};

}  // namespace

}  // namespace stepc::codegen
