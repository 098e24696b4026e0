//===- StridedCopiesToLinalg.cpp - --step-strided-copies-to-linalg --------===//
//
// Bufferization copies slices (scan inputs, stacked results, padding) with memref.copy. A copy
// between two contiguous buffers lowers to a memcpy, but a strided one lowers to a call into
// MLIR's C runner library (memrefCopy), which a standalone executable does not link. This
// rewrites strided copies as linalg.copy, which becomes plain loops that LLVM optimises.
// With `parallel-bytes` (the CPU pipeline's), a contiguous copy at least that large becomes a
// linalg.copy too: a kernel, tiled over the runtime's threads, where the host's memcpy runs on
// one (a repeat's saved layer input, 4 MiB per layer of byte_lm_residual_small, is copied at
// the one-thread bandwidth otherwise: ~11 GB/s here against ~22 on two).
//
//===----------------------------------------------------------------------===//
#include <algorithm>

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

int64_t bytesOf(mlir::Value v) {
  auto type = llvm::dyn_cast<mlir::MemRefType>(v.getType());
  if (!type || !type.hasStaticShape()) return 0;
  return type.getNumElements() * std::max<int64_t>(type.getElementTypeBitWidth() / 8, 1);
}

struct StridedCopiesPass : impl::StridedCopiesToLinalgBase<StridedCopiesPass> {
  using StridedCopiesToLinalgBase::StridedCopiesToLinalgBase;
  void runOnOperation() override {
    getOperation().walk([&](mlir::memref::CopyOp copy) {
      bool large = parallelBytes > 0 && bytesOf(copy.getTarget()) >= parallelBytes;
      if (contiguous(copy.getSource()) && contiguous(copy.getTarget()) && !large) return;
      mlir::OpBuilder b(copy);
      b.create<mlir::linalg::CopyOp>(copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    });
  }
};

}  // namespace

}  // namespace stepc::codegen
