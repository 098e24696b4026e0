//===- CollectivePatterns.cpp - all_reduce, rank_shard, all_gather --------===//
//
// step.all_reduce becomes a linalg.copy into a fresh tensor, marked `step.collective` (so do
// its halves all_reduce_start and all_reduce_wait, "all_reduce_start" / "_wait"): on
// tensors a copy is what one rank computes (the input), and a copy bufferizes to exactly the
// two buffers the runtime's reduction reads and writes. After bufferization,
// --step-collectives-to-runtime replaces the marked copy by the runtime call; the fusion pass
// leaves marked ops alone.
//
// step.last_micro_batch is a slice of the first axis at stepc_micro_batch_end(K) - 1.
//
// --shard-optimizer's ops need this rank's index, a call `stepc_rank() -> i64` (0 for one
// process). step.rank_shard is a slice of the rows from rank · n/parts. step.all_gather puts
// the rank's block in its rows of a fresh whole tensor (the other rows undefined: all one rank
// knows), then a linalg.copy of that whole tensor marked "all_gather", which the runtime call
// replaces: it copies this rank's rows and fills in the other ranks'. The copy's result is
// the whole tensor, so bufferization keeps every row of it (an insert_slice result would let
// it keep only the rank's block).
//
//===----------------------------------------------------------------------===//
#include "compiler/Conversion/StepToLinalg/LoweringUtils.h"
#include "compiler/Conversion/StepToLinalg/Patterns.h"
#include "dialects/step/IR/StepDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace stepc::lowering {
namespace {

// all_reduce, all_reduce_start and all_reduce_wait: a copy into a fresh tensor, marked with
// the collective's name.
template <typename Op>
struct MarkedCopyLowering : mlir::OpRewritePattern<Op> {
  MarkedCopyLowering(mlir::MLIRContext *ctx, llvm::StringRef name)
      : mlir::OpRewritePattern<Op>(ctx), name(name.str()) {}
  mlir::LogicalResult matchAndRewrite(Op op, mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getResult().getType());
    mlir::Value init =
        rw.create<mlir::tensor::EmptyOp>(op.getLoc(), type.getShape(), type.getElementType());
    auto copy = rw.create<mlir::linalg::CopyOp>(op.getLoc(), op.getInput(), init);
    copy->setAttr(kCollectiveAttr, rw.getStringAttr(name));
    rw.replaceOp(op, copy->getResults());
    return mlir::success();
  }
  std::string name;
};

// The first row of this rank's block of `rows` rows (an index).
mlir::Value blockStart(mlir::PatternRewriter &rw, mlir::Operation *op, int64_t rows) {
  mlir::Location loc = op->getLoc();
  mlir::Value rank = callRuntimeI64(rw, op, "stepc_rank", mlir::ValueRange{});
  mlir::Value index = rw.create<mlir::arith::IndexCastOp>(loc, rw.getIndexType(), rank);
  mlir::Value size = rw.create<mlir::arith::ConstantIndexOp>(loc, rows);
  return rw.create<mlir::arith::MulIOp>(loc, index, size);
}

// Offsets [start, 0, ...], sizes `block`, unit strides.
void blockSlice(mlir::PatternRewriter &rw, mlir::Value start, mlir::RankedTensorType block,
                llvm::SmallVectorImpl<mlir::OpFoldResult> &offsets,
                llvm::SmallVectorImpl<mlir::OpFoldResult> &sizes,
                llvm::SmallVectorImpl<mlir::OpFoldResult> &strides) {
  offsets.assign(block.getRank(), rw.getIndexAttr(0));
  offsets[0] = start;
  for (int64_t d : block.getShape()) sizes.push_back(rw.getIndexAttr(d));
  strides.assign(block.getRank(), rw.getIndexAttr(1));
}

struct RankShardLowering : mlir::OpRewritePattern<step::RankShardOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::RankShardOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto block = llvm::cast<mlir::RankedTensorType>(op.getResult().getType());
    llvm::SmallVector<mlir::OpFoldResult> offsets, sizes, strides;
    blockSlice(rw, blockStart(rw, op, block.getDimSize(0)), block, offsets, sizes, strides);
    rw.replaceOpWithNewOp<mlir::tensor::ExtractSliceOp>(op, block, op.getInput(), offsets, sizes,
                                                        strides);
    return mlir::success();
  }
};

struct AllGatherLowering : mlir::OpRewritePattern<step::AllGatherOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::AllGatherOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getResult().getType());
    auto block = llvm::cast<mlir::RankedTensorType>(op.getInput().getType());
    mlir::Location loc = op.getLoc();
    llvm::SmallVector<mlir::OpFoldResult> offsets, sizes, strides;
    blockSlice(rw, blockStart(rw, op, block.getDimSize(0)), block, offsets, sizes, strides);
    auto empty = [&]() -> mlir::Value {
      return rw.create<mlir::tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
    };
    mlir::Value placed = rw.create<mlir::tensor::InsertSliceOp>(loc, op.getInput(), empty(),
                                                                offsets, sizes, strides);
    auto copy = rw.create<mlir::linalg::CopyOp>(loc, placed, empty());
    copy->setAttr(kCollectiveAttr, rw.getStringAttr("all_gather"));
    if (op->hasAttr("step.norm_shares")) copy->setAttr("step.norm_shares", rw.getUnitAttr());
    rw.replaceOp(op, copy->getResults());
    return mlir::success();
  }
};

// The slice of this rank's last micro-batch: row stepc_micro_batch_end(K) - 1 of the first
// axis (K - 1 for one process), that axis dropped.
struct LastMicroBatchLowering : mlir::OpRewritePattern<step::LastMicroBatchOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::LastMicroBatchOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto in = llvm::cast<mlir::RankedTensorType>(op.getInput().getType());
    auto type = llvm::cast<mlir::RankedTensorType>(op.getResult().getType());
    mlir::Location loc = op.getLoc();
    mlir::Value count = rw.create<mlir::arith::ConstantIntOp>(loc, in.getDimSize(0), 64);
    mlir::Value end = callRuntimeI64(rw, op, "stepc_micro_batch_end", mlir::ValueRange{count});
    mlir::Value one = rw.create<mlir::arith::ConstantIntOp>(loc, 1, 64);
    mlir::Value last = rw.create<mlir::arith::SubIOp>(loc, end, one);
    llvm::SmallVector<mlir::OpFoldResult> offsets(in.getRank(), rw.getIndexAttr(0)), sizes,
        strides(in.getRank(), rw.getIndexAttr(1));
    offsets[0] = rw.create<mlir::arith::IndexCastOp>(loc, rw.getIndexType(), last).getResult();
    sizes.push_back(rw.getIndexAttr(1));
    for (int64_t d : type.getShape()) sizes.push_back(rw.getIndexAttr(d));
    rw.replaceOpWithNewOp<mlir::tensor::ExtractSliceOp>(op, type, op.getInput(), offsets, sizes,
                                                        strides);
    return mlir::success();
  }
};

// The first owner of a reduce-scatter's rows and how many floats each owner has, handed to
// the runtime by a call `stepc_reduce_scatter_owner(first, per) -> i64` right before the start's
// marked copy (CollectivesToRuntime folds the two into one call). Owners come in `parts`
// blocks of rows (the op's contract): a table with a row per input row gives the first and the
// blocks' size, and a layer's slice of a stacked table names one owner for all its rows.
struct ReduceScatterStartLowering : mlir::OpRewritePattern<step::ReduceScatterStartOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::ReduceScatterStartOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getResult().getType());
    auto owners = llvm::cast<mlir::RankedTensorType>(op.getOwners().getType());
    mlir::Location loc = op.getLoc();
    llvm::SmallVector<mlir::Value> origin(owners.getRank(),
                                          rw.create<mlir::arith::ConstantIndexOp>(loc, 0));
    mlir::Value first = rw.create<mlir::tensor::ExtractOp>(loc, op.getOwners(), origin);
    int64_t tableRows = owners.getRank() == 0 ? 1 : owners.getDimSize(0);
    int64_t floats = type.getNumElements();
    int64_t perOwner = tableRows == 1 ? floats : floats / op.getParts();
    mlir::Value per = rw.create<mlir::arith::ConstantIntOp>(loc, perOwner, 64);
    callRuntimeI64(rw, op, "stepc_reduce_scatter_owner", mlir::ValueRange{first, per});
    mlir::Value init =
        rw.create<mlir::tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
    auto copy = rw.create<mlir::linalg::CopyOp>(loc, op.getInput(), init);
    copy->setAttr(kCollectiveAttr, rw.getStringAttr("reduce_scatter_start"));
    rw.replaceOp(op, copy->getResults());
    return mlir::success();
  }
};

// The wait: every reduction in the whole stack waited for (a marked "all_reduce_wait" copy, the
// same runtime call as the all-reduce's), then this rank's block of the rows.
struct ReduceScatterWaitLowering : mlir::OpRewritePattern<step::ReduceScatterWaitOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::ReduceScatterWaitOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto whole = llvm::cast<mlir::RankedTensorType>(op.getInput().getType());
    auto block = llvm::cast<mlir::RankedTensorType>(op.getResult().getType());
    mlir::Location loc = op.getLoc();
    mlir::Value init =
        rw.create<mlir::tensor::EmptyOp>(loc, whole.getShape(), whole.getElementType());
    auto copy = rw.create<mlir::linalg::CopyOp>(loc, op.getInput(), init);
    copy->setAttr(kCollectiveAttr, rw.getStringAttr("all_reduce_wait"));
    llvm::SmallVector<mlir::OpFoldResult> offsets, sizes, strides;
    blockSlice(rw, blockStart(rw, op, block.getDimSize(0)), block, offsets, sizes, strides);
    rw.replaceOpWithNewOp<mlir::tensor::ExtractSliceOp>(op, block, copy.getResult(0), offsets,
                                                        sizes, strides);
    return mlir::success();
  }
};

}  // namespace

void populateCollectivePatterns(mlir::RewritePatternSet &patterns) {
  mlir::MLIRContext *ctx = patterns.getContext();
  patterns.add<MarkedCopyLowering<step::AllReduceOp>>(ctx, "all_reduce_sum");
  patterns.add<MarkedCopyLowering<step::AllReduceStartOp>>(ctx, "all_reduce_start");
  patterns.add<MarkedCopyLowering<step::AllReduceWaitOp>>(ctx, "all_reduce_wait");
  patterns.add<RankShardLowering, AllGatherLowering, LastMicroBatchLowering,
               ReduceScatterStartLowering, ReduceScatterWaitLowering>(ctx);
}

}  // namespace stepc::lowering
