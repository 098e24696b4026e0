//===- CollectivePatterns.cpp - all_reduce, rank_shard, all_gather --------===//
//
// step.all_reduce becomes a linalg.copy into a fresh tensor, marked `step.collective`: on
// tensors a copy is what one rank computes (the input), and a copy bufferizes to exactly the
// two buffers the runtime's reduction reads and writes. After bufferization,
// --step-collectives-to-runtime replaces the marked copy by the runtime call; the fusion pass
// leaves marked ops alone.
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

struct AllReduceLowering : mlir::OpRewritePattern<step::AllReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  mlir::LogicalResult matchAndRewrite(step::AllReduceOp op,
                                      mlir::PatternRewriter &rw) const override {
    auto type = llvm::cast<mlir::RankedTensorType>(op.getResult().getType());
    mlir::Value init =
        rw.create<mlir::tensor::EmptyOp>(op.getLoc(), type.getShape(), type.getElementType());
    auto copy = rw.create<mlir::linalg::CopyOp>(op.getLoc(), op.getInput(), init);
    copy->setAttr(kCollectiveAttr, rw.getStringAttr("all_reduce_sum"));
    rw.replaceOp(op, copy->getResults());
    return mlir::success();
  }
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
    rw.replaceOp(op, copy->getResults());
    return mlir::success();
  }
};

}  // namespace

void populateCollectivePatterns(mlir::RewritePatternSet &patterns) {
  patterns.add<AllReduceLowering, RankShardLowering, AllGatherLowering>(patterns.getContext());
}

}  // namespace stepc::lowering
