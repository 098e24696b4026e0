//===- KernelsToGpu.cpp - --step-kernels-to-gpu ---------------------------===//
//
// The CUDA mapping of the kernels the CPU backend also runs (the `buffers` stage: outlined
// `step.kernel` functions, tiled to scf.forall by --step-tile-kernels). Each kernel becomes a
// `gpu.func` in the module `@stepc_kernels`, and each call of it in the host plan a
// `gpu.launch_func`:
//   - forall iterations (tiles) are blocks: the block id, delinearised, gives the tile; an
//     untiled kernel is spread over a grid of blocks instead (grid-stride loop), up to 8 per SM
//     of the --gpu-arch (GpuTargets.h: 1056 on sm_90);
//   - a scan kernel (a cumsum's loop, outlined whole) is a block scan (BlockScan.h): a block
//     of 32 warps takes 32 columns, the axis split into 32 segments, with the segments'
//     totals scanned by warp shuffles; a scan loop of another form keeps its sequential loop,
//     the ops inside spread over the grid's threads the same way (each thread keeps its own
//     columns at every step);
//   - the MoE routings' loop nests (marked step.block_route, step.block_route_experts) are
//     block kernels built for them (BlockRoute.h): token choice a block per expert, expert
//     choice one block taking the experts in turn;
//   - inside a tile, the linalg op becomes loops; its outermost parallel loop is spread over
//     the block's threads (thread t takes elements t, t + blockDim, ...); reduction loops run
//     in each thread, over the elements that thread owns, so no two threads write one element;
//   - a kernel that reduces along its innermost loop (row sums, norms, softmax, the gradient
//     norm) takes its tile's rows one after another (untiled: the rows spread over the grid's
//     blocks), each shared by the block's threads and combined with gpu.all_reduce
//     (BlockReduction.h); a block has 256 threads then, fewer for a short row; a single long
//     row is split over the grid, with a second kernel combining the blocks' partials;
//   - another kernel without a parallel loop runs in thread 0.
// The block size of an elementwise kernel is the tile's parallel element count rounded up to a
// warp, at most 256 (a block reduction's: 256 or its row rounded up to warps; a block scan's:
// 1024). Each
// gpu.func carries it as `known_block_size` (NVVM's maxntid), so ptxas budgets registers for
// the block the launch asks for.
//
// Column reductions (the innermost loop parallel) keep a thread per output element: the
// threads then read consecutive elements. GEMMs stay host calls (--step-cuda-host).
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/LLVMGPU/BlockReduction.h"
#include "compiler/Codegen/LLVMGPU/GpuTargets.h"
#include "compiler/Codegen/LLVMGPU/BlockRoute.h"
#include "compiler/Codegen/LLVMGPU/BlockScan.h"
#include "compiler/Codegen/Common/Delinearize.h"
#include "compiler/Codegen/LLVMGPU/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_KERNELSTOGPU
#include "compiler/Codegen/LLVMGPU/Passes.h.inc"

namespace {

constexpr int64_t kMaxThreads = kGpuBlockThreads;

// Replaces the top-level scf.forall of `fn` (if any) by the block id's tile; returns the tile
// count, or 0 without a forall (a kernel whose grid is free for its own spreading).
mlir::FailureOr<int64_t> tilesToBlocks(mlir::gpu::GPUFuncOp fn) {
  mlir::scf::ForallOp forall;
  for (mlir::Operation &op : fn.getBody().front())
    if (auto f = llvm::dyn_cast<mlir::scf::ForallOp>(op)) forall = f;
  if (!forall) return 0;
  auto lbs = forall.getStaticLowerBound(), ubs = forall.getStaticUpperBound(),
       steps = forall.getStaticStep();
  auto trips = tripCounts(lbs, ubs, steps);
  if (!trips || forall.getNumResults() != 0) return mlir::failure();
  int64_t total = 1;
  for (int64_t t : *trips) total *= t;
  mlir::OpBuilder b(forall);
  mlir::Value block = b.create<mlir::gpu::BlockIdOp>(forall.getLoc(), mlir::gpu::Dimension::x);
  auto ivs = delinearize(b, forall.getLoc(), block, *trips, lbs, steps);
  inlineLoopBody(forall, forall.getBody(), ivs, forall);
  return total;
}

// Spreads one outermost scf.parallel over the threads: the block's (thread t takes elements
// t, t + blockDim, ...) or, with `grid`, the whole grid's (element bid * blockDim + t, then
// strides of gridDim * blockDim). Returns its element count, or -1 if not static.
mlir::FailureOr<int64_t> spread(mlir::scf::ParallelOp parallel, bool grid) {
  if (parallel.getNumResults() != 0) return mlir::failure();
  mlir::Location loc = parallel.getLoc();
  // Trip counts may be dynamic (a partial last tile): computed as values, delinearised with
  // divisions by them. Constant ones fold.
  mlir::OpBuilder b(parallel);
  namespace ar = mlir::arith;
  llvm::SmallVector<mlir::Value> trips;
  int64_t staticTotal = 1;
  mlir::Value total = b.create<ar::ConstantIndexOp>(loc, 1);
  for (auto [lb, ub, st] : llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(),
                                     parallel.getStep())) {
    // (span + step - 1) / step: arith.ceildivui has no NVVM lowering.
    mlir::Value span = b.create<ar::SubIOp>(loc, ub, lb);
    mlir::Value bias = b.create<ar::SubIOp>(loc, st, b.create<ar::ConstantIndexOp>(loc, 1));
    mlir::Value trip = b.create<ar::DivUIOp>(loc, b.create<ar::AddIOp>(loc, span, bias), st);
    trips.push_back(trip);
    total = b.create<ar::MulIOp>(loc, total, trip);
    auto lbc = lb.getDefiningOp<ar::ConstantIndexOp>(), ubc = ub.getDefiningOp<ar::ConstantIndexOp>(),
         stc = st.getDefiningOp<ar::ConstantIndexOp>();
    if (lbc && ubc && stc && staticTotal >= 0)
      staticTotal *= std::max<int64_t>(0, (ubc.value() - lbc.value() + stc.value() - 1) / stc.value());
    else
      staticTotal = -1;  // unknown: launch the most threads
  }
  mlir::Value first = b.create<mlir::gpu::ThreadIdOp>(loc, mlir::gpu::Dimension::x);
  mlir::Value stride = b.create<mlir::gpu::BlockDimOp>(loc, mlir::gpu::Dimension::x);
  if (grid) {
    mlir::Value block = b.create<mlir::gpu::BlockIdOp>(loc, mlir::gpu::Dimension::x);
    mlir::Value blocks = b.create<mlir::gpu::GridDimOp>(loc, mlir::gpu::Dimension::x);
    first = b.create<ar::AddIOp>(loc, b.create<ar::MulIOp>(loc, block, stride), first);
    stride = b.create<ar::MulIOp>(loc, blocks, stride);
  }
  auto loop = b.create<mlir::scf::ForOp>(loc, first, total, stride);
  b.setInsertionPointToStart(loop.getBody());
  llvm::SmallVector<mlir::Value> ivs = split(b, loc, loop.getInductionVar(), trips);
  for (auto [d, iv] : llvm::enumerate(ivs))
    iv = b.create<ar::AddIOp>(loc, parallel.getLowerBound()[d],
                              b.create<ar::MulIOp>(loc, iv, parallel.getStep()[d]));
  inlineLoopBody(parallel, parallel.getBody(), ivs, loop.getBody()->getTerminator());
  return staticTotal;
}

// Spreads the kernel's outermost scf.parallel loops over threads (see spread); returns the
// largest element count (-1 if one is not static; 0 if there is no parallel loop, and then
// everything but constants runs in thread 0). A scan kernel has two, one after the other in
// its sequential loop (the add to the running sum, the copy into the result): the same shape,
// so a thread takes the same elements in both and at every step, and needs no barrier.
mlir::FailureOr<int64_t> elementsToThreads(mlir::gpu::GPUFuncOp fn, bool grid) {
  llvm::SmallVector<mlir::scf::ParallelOp> parallels;
  fn.walk<mlir::WalkOrder::PreOrder>([&](mlir::scf::ParallelOp p) {
    parallels.push_back(p);
    return mlir::WalkResult::skip();
  });
  if (parallels.empty()) {
    // The guard goes last, so the constants before it dominate the work moved into it.
    mlir::Location loc = fn.getLoc();
    mlir::Block &entry = fn.getBody().front();
    llvm::SmallVector<mlir::Operation *> work;
    for (mlir::Operation &op : entry.without_terminator())
      if (!op.hasTrait<mlir::OpTrait::ConstantLike>()) work.push_back(&op);
    mlir::OpBuilder b(entry.getTerminator());
    mlir::Value tid = b.create<mlir::gpu::ThreadIdOp>(loc, mlir::gpu::Dimension::x);
    mlir::Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
    mlir::Value first = b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq, tid,
                                                      zero);
    auto guard = b.create<mlir::scf::IfOp>(loc, first, /*withElseRegion=*/false);
    for (mlir::Operation *op : work) op->moveBefore(guard.thenBlock()->getTerminator());
    return 0;
  }
  // The scan's argument for needing no barrier: the loops have one shape, so a thread takes
  // the same elements in each. Checked, since nothing could synchronise a grid otherwise.
  auto shape = [](mlir::scf::ParallelOp p) {
    llvm::SmallVector<int64_t> out;
    for (mlir::ValueRange values : {p.getLowerBound(), p.getUpperBound(), p.getStep()})
      for (mlir::Value v : values) {
        auto c = v.getDefiningOp<mlir::arith::ConstantIndexOp>();
        out.push_back(c ? c.value() : mlir::ShapedType::kDynamic);
      }
    return out;
  };
  if (parallels.size() > 1)
    for (mlir::scf::ParallelOp p : parallels)
      if (shape(p) != shape(parallels.front()) ||
          llvm::is_contained(shape(p), mlir::ShapedType::kDynamic)) {
        p.emitError("the loops of a kernel with several must have one static shape, so that each "
                    "GPU thread owns the same elements in all of them");
        return mlir::failure();
      }
  int64_t most = 0;
  for (mlir::scf::ParallelOp p : parallels) {
    auto n = spread(p, grid);
    if (failed(n)) return mlir::failure();
    most = (*n < 0 || most < 0) ? -1 : std::max(most, *n);
  }
  return most;
}

struct KernelsToGpuPass : impl::KernelsToGpuBase<KernelsToGpuPass> {
  using KernelsToGpuBase::KernelsToGpuBase;

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *ctx = &getContext();
    if (module.lookupSymbol("stepc_kernels")) return;  // mapped already
    std::string error;
    const GpuTarget *gpu = lookupGpuTarget(gpuArch, error);
    if (!gpu) {
      module.emitError(error);
      return signalPassFailure();
    }
    // An untiled kernel's grid: enough blocks for one element per thread, at most this many
    // (then each thread takes several).
    const int64_t maxBlocks = maxGridBlocks(*gpu);
    mlir::OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule = b.create<mlir::gpu::GPUModuleOp>(module.getLoc(), "stepc_kernels");
    module->setAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
    struct Launch {
      mlir::gpu::GPUFuncOp fn;
      int64_t blocks, threads;
      mlir::gpu::GPUFuncOp finish = {};  // a split row's second kernel (one block)
      int64_t finishThreads = 0;
    };
    llvm::DenseMap<mlir::StringAttr, Launch> launches;
    mlir::IRRewriter rewriter(ctx);
    for (auto kernel : llvm::to_vector(module.getOps<mlir::func::FuncOp>())) {
      if (!kernel->hasAttr("step.kernel") || kernel.isExternal()) continue;
      b.setInsertionPoint(gpuModule.getBody()->getTerminator());
      auto fn = b.create<mlir::gpu::GPUFuncOp>(kernel.getLoc(), kernel.getSymName(),
                                               kernel.getFunctionType());
      fn->setAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
      mlir::IRMapping map;
      mlir::Block &entry = fn.getBody().front();
      for (auto [from, to] : llvm::zip(kernel.getArguments(), entry.getArguments()))
        map.map(from, to);
      b.setInsertionPointToEnd(&entry);
      for (mlir::Operation &op : kernel.getBody().front().without_terminator()) b.clone(op, map);
      b.create<mlir::gpu::ReturnOp>(kernel.getLoc());
      auto blocks = tilesToBlocks(fn);
      if (failed(blocks)) {
        kernel.emitError("cannot map this kernel's scf.forall to GPU blocks");
        return signalPassFailure();
      }
      // Untiled (no forall): the grid is the kernel's own to spread its work over.
      bool untiled = *blocks == 0;
      int64_t tiles = untiled ? 1 : *blocks;
      if (untiled) {
        auto route = mapBlockRoute(fn);
        if (succeeded(route) && !*route) route = mapBlockRouteExperts(fn);
        if (failed(route)) return signalPassFailure();
        if (*route) {
          launches[kernel.getSymNameAttr()] = {fn, (*route)->blocks, (*route)->threads};
          continue;
        }
        if (auto scan = mapBlockScan(fn)) {
          launches[kernel.getSymNameAttr()] = {fn, scan->blocks, scan->threads};
          continue;
        }
      }
      llvm::SmallVector<mlir::linalg::LinalgOp> linalgOps;
      fn.walk([&](mlir::linalg::LinalgOp op) { linalgOps.push_back(op); });
      if (linalgOps.size() == 1) {
        mlir::OpBuilder rb(linalgOps.front());
        if (auto r = mapBlockReduction(rb, linalgOps.front(), /*gridRows=*/untiled, maxBlocks)) {
          int64_t gridBlocks = tiles;
          if (untiled)
            gridBlocks = r->rows < 0 ? maxBlocks : std::clamp<int64_t>(r->rows, 1, maxBlocks);
          if (r->finish) gridBlocks = r->rows;  // one block per partial
          launches[kernel.getSymNameAttr()] = {fn, gridBlocks, r->threads, r->finish,
                                               r->finishThreads};
          continue;
        }
      }
      for (mlir::linalg::LinalgOp op : linalgOps) {
        rewriter.setInsertionPoint(op);
        if (failed(mlir::linalg::linalgOpToParallelLoops(rewriter, op))) {
          op->emitError("cannot turn this kernel into loops for the GPU");
          return signalPassFailure();
        }
        rewriter.eraseOp(op);
      }
      // An untiled kernel spreads its elements over a grid of blocks.
      bool grid = untiled;
      auto elements = elementsToThreads(fn, grid);
      if (failed(elements)) {
        kernel.emitError("cannot spread this kernel over GPU threads");
        return signalPassFailure();
      }
      int64_t n = *elements < 0 ? kMaxThreads * maxBlocks : *elements;
      int64_t threads = std::min<int64_t>(kMaxThreads, std::max<int64_t>(32, (n + 31) / 32 * 32));
      int64_t gridBlocks = tiles;
      if (n == 0) threads = 32;
      else if (grid) gridBlocks = std::min<int64_t>(maxBlocks, (n + threads - 1) / threads);
      launches[kernel.getSymNameAttr()] = {fn, gridBlocks, threads};
    }
    // The host plan launches what it called.
    llvm::SmallVector<mlir::func::CallOp> calls;
    module.walk([&](mlir::func::CallOp call) {
      if (launches.count(call.getCalleeAttr().getAttr())) calls.push_back(call);
    });
    for (auto &[name, l] : launches) {
      l.fn.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({static_cast<int32_t>(l.threads), 1, 1}));
      if (l.finish)
        l.finish.setKnownBlockSizeAttr(
            b.getDenseI32ArrayAttr({static_cast<int32_t>(l.finishThreads), 1, 1}));
    }
    for (mlir::func::CallOp call : calls) {
      const Launch &l = launches[call.getCalleeAttr().getAttr()];
      b.setInsertionPoint(call);
      auto c = [&](int64_t v) -> mlir::Value {
        return b.create<mlir::arith::ConstantIndexOp>(call.getLoc(), v);
      };
      mlir::Value one = c(1);
      b.create<mlir::gpu::LaunchFuncOp>(
          call.getLoc(), l.fn, mlir::gpu::KernelDim3{c(l.blocks), one, one},
          mlir::gpu::KernelDim3{c(l.threads), one, one}, mlir::Value(), call.getOperands());
      if (l.finish)
        b.create<mlir::gpu::LaunchFuncOp>(
            call.getLoc(), l.finish, mlir::gpu::KernelDim3{one, one, one},
            mlir::gpu::KernelDim3{c(l.finishThreads), one, one}, mlir::Value(),
            call.getOperands());
      call.erase();
    }
    for (auto kernel : llvm::to_vector(module.getOps<mlir::func::FuncOp>()))
      if (kernel->hasAttr("step.kernel")) kernel.erase();
  }
};

}  // namespace

}  // namespace stepc::codegen
