//===- StridedCopiesToLinalg.cpp - --step-strided-copies-to-linalg --------===//
//
// Bufferization copies slices (scan inputs, stacked results, padding) with memref.copy. A copy
// between two contiguous buffers lowers to a memcpy, but a strided one lowers to a call into
// MLIR's C runner library (memrefCopy), which a standalone executable does not link. This
// rewrites strided copies as linalg.copy, which becomes plain loops that LLVM optimises.
//
//===----------------------------------------------------------------------===//
#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_STRIDEDCOPIESTOLINALG
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// Unranked memrefs count as contiguous: the copy is left alone (bufferization does not
// produce them here).
bool contiguous(mlir::Value v) {
  auto type = llvm::dyn_cast<mlir::MemRefType>(v.getType());
  return !type || type.getLayout().isIdentity() || mlir::memref::isStaticShapeAndContiguousRowMajor(type);
}

struct StridedCopiesPass : impl::StridedCopiesToLinalgBase<StridedCopiesPass> {
  void runOnOperation() override {
    getOperation().walk([](mlir::memref::CopyOp copy) {
      if (contiguous(copy.getSource()) && contiguous(copy.getTarget())) return;
      mlir::OpBuilder b(copy);
      b.create<mlir::linalg::CopyOp>(copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    });
  }
};

}  // namespace

}  // namespace stepc::codegen
