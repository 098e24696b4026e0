//===- ShapeOps.cpp - data movement and tensor creation kernels ----------===//
//
// Ops that move or create elements without arithmetic: reshape, transpose, broadcast, slice,
// split, concat, pad, constant and iota. Result shapes come from the op's (inferred) result
// types, so only the element mapping is written here.
//
//===----------------------------------------------------------------------===//
#include <cmath>

#include "compiler/Interpreter/Kernels.h"
#include "compiler/Interpreter/TensorUtils.h"
#include "dialects/step/IR/ShapeRules.h"
#include "llvm/ADT/TypeSwitch.h"

namespace stepc::interp {
namespace {

// Calls visit(index, linear) for every multi-index of `shape` in row-major order.
void forEachIndex(llvm::ArrayRef<int64_t> shape,
                  llvm::function_ref<void(llvm::ArrayRef<int64_t>, int64_t)> visit) {
  llvm::SmallVector<int64_t> index(shape.size(), 0);
  int64_t count = elementCount(shape);
  for (int64_t linear = 0; linear < count; ++linear) {
    visit(index, linear);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

int64_t linearIndex(llvm::ArrayRef<int64_t> index, llvm::ArrayRef<int64_t> strides) {
  int64_t linear = 0;
  for (size_t d = 0; d < index.size(); ++d) linear += index[d] * strides[d];
  return linear;
}

// out[i] = in[perm-mapped i]: result dim d is input dim perm[d].
void transpose(llvm::ArrayRef<int64_t> perm, const Tensor &in, Tensor &out) {
  llvm::SmallVector<int64_t> inStrides = rowMajorStrides(in.shape()), permuted;
  for (int64_t p : perm) permuted.push_back(inStrides[p]);
  forEachIndex(out.shape(), [&](llvm::ArrayRef<int64_t> index, int64_t linear) {
    out.data[linear] = in.data[linearIndex(index, permuted)];
  });
}

void slice(step::SliceOp op, const Tensor &in, Tensor &out) {
  llvm::SmallVector<int64_t> start = step::toI64Vector(op.getStart());
  llvm::SmallVector<int64_t> strides =
      op.getStrides() ? step::toI64Vector(*op.getStrides())
                      : llvm::SmallVector<int64_t>(start.size(), 1);
  llvm::SmallVector<int64_t> inStrides = rowMajorStrides(in.shape());
  forEachIndex(out.shape(), [&](llvm::ArrayRef<int64_t> index, int64_t linear) {
    int64_t source = 0;
    for (size_t d = 0; d < index.size(); ++d)
      source += (start[d] + index[d] * strides[d]) * inStrides[d];
    out.data[linear] = in.data[source];
  });
}

// Copies `part` into `whole` at `offset` along `axis` (concat), or the reverse (split).
void copyAlongAxis(const Tensor &from, Tensor &to, int64_t axis, int64_t offset,
                   bool intoWhole) {
  const Tensor &part = intoWhole ? from : to;
  const Tensor &whole = intoWhole ? to : from;
  AxisView p = axisView(part.shape(), axis), w = axisView(whole.shape(), axis);
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t k = 0; k < p.size; ++k)
      for (int64_t i = 0; i < p.inner; ++i) {
        int64_t pi = p.at(o, k, i), wi = w.at(o, offset + k, i);
        if (intoWhole) to.data[wi] = from.data[pi];
        else to.data[pi] = from.data[wi];
      }
}

void pad(step::PadOp op, const Tensor &in, Tensor &out) {
  double value = op.getValue().convertToDouble();
  if (!isFloatElement(out.type.getElementType())) value = std::trunc(value);
  std::fill(out.data.begin(), out.data.end(), value);
  llvm::SmallVector<int64_t> low = step::toI64Vector(op.getLow());
  llvm::SmallVector<int64_t> outStrides = rowMajorStrides(out.shape());
  forEachIndex(in.shape(), [&](llvm::ArrayRef<int64_t> index, int64_t linear) {
    int64_t target = 0;
    for (size_t d = 0; d < index.size(); ++d) target += (index[d] + low[d]) * outStrides[d];
    out.data[target] = in.data[linear];
  });
}

mlir::LogicalResult constant(step::ConstantOp op, Tensor &out) {
  auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(op.getValue());
  if (!dense)
    return mlir::emitError(op.getLoc())
           << "the interpreter reads dense constants only, found " << op.getValue();
  mlir::Type element = dense.getElementType();
  int64_t i = 0;
  // A splat yields its one value for every index.
  if (isFloatElement(element)) {
    for (const llvm::APFloat &v : dense.getValues<llvm::APFloat>())
      out.data[i++] = v.convertToDouble();
  } else {
    bool boolean = element.isInteger(1);  // i1 true is 1, not the sign-extended -1
    for (const llvm::APInt &v : dense.getValues<llvm::APInt>())
      out.data[i++] = boolean ? static_cast<double>(v.getZExtValue())
                              : static_cast<double>(v.getSExtValue());
  }
  return mlir::success();
}

void iota(step::IotaOp op, Tensor &out) {
  llvm::ArrayRef<int64_t> shape = out.shape();
  AxisView view = axisView(shape, positiveAxis(static_cast<int64_t>(op.getAxis()), shape.size()));
  double offset = static_cast<double>(static_cast<int64_t>(op.getOffset()));
  for (int64_t o = 0; o < view.outer; ++o)
    for (int64_t k = 0; k < view.size; ++k)
      for (int64_t i = 0; i < view.inner; ++i) out.data[view.at(o, k, i)] = k + offset;
}

mlir::LogicalResult ok() { return mlir::success(); }

}  // namespace

KernelResult runShapeOp(mlir::Operation *op, Operands in, Results out) {
  return llvm::TypeSwitch<mlir::Operation *, KernelResult>(op)
      .Case<step::ReshapeOp>([&](auto) {
        out[0].data = in[0]->data;  // row-major order is unchanged
        return ok();
      })
      // The interpreter is one process: the mean over one rank is the input.
      .Case<step::AllReduceOp, step::AllReduceStartOp, step::AllReduceWaitOp,
            step::ReduceScatterStartOp>([&](auto) {
        out[0].data = in[0]->data;
        return ok();
      })
      // One process runs all K micro-batches: its last is K - 1.
      .Case<step::LastMicroBatchOp>([&](auto) {
        size_t n = out[0].data.size();
        out[0].data.assign(in[0]->data.end() - static_cast<std::ptrdiff_t>(n), in[0]->data.end());
        return ok();
      })
      // --shard-optimizer's blocks need the ranks themselves: one process cannot stand in.
      .Case<step::RankShardOp, step::AllGatherOp, step::ReduceScatterWaitOp>(
          [&](auto o) -> KernelResult {
        return mlir::emitError(o.getLoc())
               << "'" << o->getName() << "' splits over " << o.getParts()
               << " data-parallel ranks; the interpreter runs one process (interpret the "
                  "model without --shard-optimizer: the sharded step computes the same numbers)";
      })
      .Case<step::TransposeOp>([&](step::TransposeOp t) {
        transpose(step::toI64Vector(t.getPerm()), *in[0], out[0]);
        return ok();
      })
      .Case<step::BroadcastOp>([&](auto) {
        std::vector<int64_t> map = broadcastIndices(in[0]->shape(), out[0].shape());
        for (int64_t i = 0; i < out[0].numElements(); ++i) out[0].data[i] = in[0]->data[map[i]];
        return ok();
      })
      .Case<step::SliceOp>([&](step::SliceOp s) {
        slice(s, *in[0], out[0]);
        return ok();
      })
      .Case<step::SplitOp>([&](step::SplitOp s) {
        int64_t axis = positiveAxis(static_cast<int64_t>(s.getAxis()), in[0]->shape().size());
        int64_t offset = 0;
        for (Tensor &part : out) {
          copyAlongAxis(*in[0], part, axis, offset, /*intoWhole=*/false);
          offset += part.shape()[axis];
        }
        return ok();
      })
      .Case<step::ConcatOp>([&](step::ConcatOp c) {
        int64_t axis = positiveAxis(static_cast<int64_t>(c.getAxis()), out[0].shape().size());
        int64_t offset = 0;
        for (const Tensor *part : in) {
          copyAlongAxis(*part, out[0], axis, offset, /*intoWhole=*/true);
          offset += part->shape()[axis];
        }
        return ok();
      })
      .Case<step::PadOp>([&](step::PadOp p) {
        pad(p, *in[0], out[0]);
        return ok();
      })
      .Case<step::ConstantOp>([&](step::ConstantOp c) { return constant(c, out[0]); })
      .Case<step::IotaOp>([&](step::IotaOp i) {
        iota(i, out[0]);
        return ok();
      })
      .Default([](mlir::Operation *) { return std::nullopt; });
}

}  // namespace stepc::interp
