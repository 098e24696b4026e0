//===- ContractionOps.cpp - matmul and embedding kernels -----------------===//
//
// Matrix products by the definition (a triple loop per batch, accumulated in float64) and the
// embedding gather with its scatter-add gradient. Ids are range-checked: an out-of-range id is
// an error, never a read outside the table.
//
//===----------------------------------------------------------------------===//
#include "compiler/Interpreter/Kernels.h"
#include "compiler/Interpreter/TensorUtils.h"
#include "llvm/ADT/TypeSwitch.h"

namespace stepc::interp {
namespace {

// A [rows, cols] matrix at `data`, read as its transpose when `transposed`.
struct MatrixView {
  const double *data;
  int64_t rows, cols;  // as stored
  bool transposed;
  int64_t outerDim() const { return transposed ? cols : rows; }
  double at(int64_t i, int64_t j) const {
    return transposed ? data[j * cols + i] : data[i * cols + j];
  }
};

// out[M, N] = a[M, K] × b[K, N].
void multiply(const MatrixView &a, const MatrixView &b, double *out) {
  int64_t m = a.outerDim(), k = a.transposed ? a.rows : a.cols;
  int64_t n = b.transposed ? b.rows : b.cols;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) sum += a.at(i, p) * b.at(p, j);
      out[i * n + j] = sum;
    }
}

// Batched product: `lhs` [..., R, C] per batch; `rhs` shared (rank 2) or batched alike.
void batchedProduct(const Tensor &lhs, bool transposeLhs, const Tensor &rhs, bool transposeRhs,
                    Tensor &out) {
  llvm::ArrayRef<int64_t> ls = lhs.shape(), rs = rhs.shape();
  int64_t lRows = ls[ls.size() - 2], lCols = ls.back();
  int64_t rRows = rs[rs.size() - 2], rCols = rs.back();
  int64_t batches = elementCount(ls.drop_back(2));
  bool sharedRhs = rs.size() == 2;
  int64_t outMatrix = out.shape()[out.shape().size() - 2] * out.shape().back();
  for (int64_t b = 0; b < batches; ++b) {
    MatrixView a{&lhs.data[b * lRows * lCols], lRows, lCols, transposeLhs};
    MatrixView w{&rhs.data[sharedRhs ? 0 : b * rRows * rCols], rRows, rCols, transposeRhs};
    multiply(a, w, &out.data[b * outMatrix]);
  }
}

mlir::LogicalResult checkId(mlir::Operation *op, double id, int64_t position, int64_t vocab) {
  if (id >= 0 && id < vocab) return mlir::success();
  auto diag = mlir::emitError(op->getLoc()) << "id ";
  // Ids are integers unless the caller passed a fraction or NaN; print what was given.
  if (id == static_cast<double>(static_cast<int64_t>(id))) diag << static_cast<int64_t>(id);
  else diag << id;
  return diag << " at position " << position << " is out of range for a table of " << vocab
              << " rows";
}

// out[p, :] = table[ids[p], :].
mlir::LogicalResult embedding(mlir::Operation *op, const Tensor &table, const Tensor &ids,
                              Tensor &out) {
  int64_t vocab = table.shape()[0], width = table.shape()[1];
  for (int64_t p = 0; p < ids.numElements(); ++p) {
    if (failed(checkId(op, ids.data[p], p, vocab))) return mlir::failure();
    int64_t row = static_cast<int64_t>(ids.data[p]);
    std::copy_n(&table.data[row * width], width, &out.data[p * width]);
  }
  return mlir::success();
}

// out[v, :] = Σ_{p : ids[p] = v} grad[p, :].
mlir::LogicalResult embeddingGrad(mlir::Operation *op, const Tensor &grad, const Tensor &ids,
                                  Tensor &out) {
  int64_t vocab = out.shape()[0], width = out.shape()[1];
  for (int64_t p = 0; p < ids.numElements(); ++p) {
    if (failed(checkId(op, ids.data[p], p, vocab))) return mlir::failure();
    int64_t row = static_cast<int64_t>(ids.data[p]);
    for (int64_t d = 0; d < width; ++d) out.data[row * width + d] += grad.data[p * width + d];
  }
  return mlir::success();
}

}  // namespace

KernelResult runContractionOp(mlir::Operation *op, Operands in, Results out) {
  return llvm::TypeSwitch<mlir::Operation *, KernelResult>(op)
      .Case<step::MatmulOp, step::BatchMatmulOp>([&](auto product) {
        batchedProduct(*in[0], product.getTransposeLhs(), *in[1], product.getTransposeRhs(),
                       out[0]);
        return mlir::success();
      })
      .Case<step::EmbeddingOp>([&](auto) { return embedding(op, *in[0], *in[1], out[0]); })
      .Case<step::EmbeddingGradOp>(
          [&](auto) { return embeddingGrad(op, *in[0], *in[1], out[0]); })
      .Default([](mlir::Operation *) { return std::nullopt; });
}

}  // namespace stepc::interp
