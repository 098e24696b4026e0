//===- KernelNoAlias.cpp - --step-kernel-noalias ---------------------------===//
//
// Which memref arguments of each outlined kernel never share memory with another argument,
// at any of its call sites: those the kernel may treat as `noalias` (C's restrict). Without
// it LLVM must assume that a kernel's stores may change what its other arguments hold, so it
// reloads them: a gather (out[t, :] = x[idx[t], :]) reloaded its row index for every element
// and ran scalar at 6-9 GB/s, where with the index known unchanged each row is one 1 KiB copy;
// elementwise kernels get their vector loops without runtime overlap checks.
//
// Runs after --step-plan-memory, when every temporary is a view of @stepc_arena at a fixed
// offset. A call's memref operand is traced through view-like ops (view, subview, casts,
// reshapes, reinterpret_cast) to its root: a global (the arena), an argument of the host
// function (parameters, state, batch, results: separate buffers the runtime owns), or an
// allocation. With every offset, size and stride static the operand covers known bytes of its
// root; otherwise (a loop's slice at a dynamic offset) the whole root. Two operands of one call
// overlap when they share a root and their bytes intersect; a root that is none of the above
// overlaps everything. An argument is noalias when it overlaps no other argument at any call
// site (the in-place kernels, which read and write one buffer, stay without it).
//
// The result is the kernel's `step.noalias_args`: the positions, in the lowered LLVM signature,
// of those arguments' aligned pointers (a memref of rank r lowers to 3 + 2r arguments:
// allocated and aligned pointer, offset, sizes, strides; anything else to one). The CPU's
// object emitter sets LLVM's `noalias` on them; the translation to LLVM drops it from memref
// arguments, so it cannot be a plain argument attribute here.
//
// Threads: a parallel kernel's calls run side by side on disjoint tiles of their outputs, and
// `noalias` only constrains memory the call modifies, which no other call touches.
//
//===----------------------------------------------------------------------===//
#include <optional>

#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_KERNELNOALIAS
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// The bytes of its root a call operand may touch.
struct Extent {
  const void *root = nullptr;  // nullptr: unknown, overlaps everything
  bool whole = true;           // the whole root (the offset or a size is dynamic)
  int64_t begin = 0, end = 0;  // [begin, end) bytes from the root's start, unless `whole`
};

bool overlap(const Extent &a, const Extent &b) {
  if (!a.root || !b.root) return true;
  if (a.root != b.root) return false;
  if (a.whole || b.whole) return true;
  return a.begin < b.end && b.begin < a.end;
}

// [first, last + 1) elements of a strided memref, relative to its aligned pointer.
std::optional<std::pair<int64_t, int64_t>> elementSpan(mlir::MemRefType type) {
  if (!type.hasStaticShape()) return std::nullopt;
  llvm::SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(mlir::getStridesAndOffset(type, strides, offset)) ||
      mlir::ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, [](int64_t s) { return mlir::ShapedType::isDynamic(s) || s < 0; }))
    return std::nullopt;
  int64_t last = offset;
  for (auto [size, stride] : llvm::zip(type.getShape(), strides)) {
    if (size == 0) return std::make_pair(offset, offset);
    last += (size - 1) * stride;
  }
  return std::make_pair(offset, last + 1);
}

Extent extentOf(mlir::Value value) {
  Extent extent;
  auto type = llvm::dyn_cast<mlir::MemRefType>(value.getType());
  std::optional<std::pair<int64_t, int64_t>> span;
  if (type) span = elementSpan(type);
  // Byte shifts of the memref.view ops on the way (each restarts the layout's offset at its
  // own aligned pointer); the final type's offset counts every subview after the last view.
  int64_t shift = 0;
  bool known = span.has_value();
  mlir::Value current = value;
  while (mlir::Operation *def = current.getDefiningOp()) {
    if (auto view = llvm::dyn_cast<mlir::memref::ViewOp>(def)) {
      llvm::APInt bytes;
      if (!mlir::matchPattern(view.getByteShift(), mlir::m_ConstantInt(&bytes))) known = false;
      else shift += bytes.getSExtValue();
      current = view.getSource();
    } else if (auto like = llvm::dyn_cast<mlir::ViewLikeOpInterface>(def)) {
      // subview, cast, reshapes, reinterpret_cast: the final type's layout holds their offset.
      current = like.getViewSource();
    } else if (auto global = llvm::dyn_cast<mlir::memref::GetGlobalOp>(def)) {
      extent.root = global.getNameAttr().getAsOpaquePointer();
      break;
    } else if (llvm::isa<mlir::memref::AllocOp, mlir::memref::AllocaOp>(def)) {
      extent.root = current.getAsOpaquePointer();
      break;
    } else {
      return {};  // something else made it: unknown
    }
  }
  if (!current.getDefiningOp()) {
    // An argument of the host function is its own buffer; one of a nested block (a loop's
    // iteration argument) could be anything.
    auto arg = llvm::cast<mlir::BlockArgument>(current);
    if (!llvm::isa<mlir::func::FuncOp>(arg.getOwner()->getParentOp())) return {};
    extent.root = current.getAsOpaquePointer();
  }
  if (known && span) {
    int64_t bytes = std::max<int64_t>(type.getElementTypeBitWidth() / 8, 1);
    extent.whole = false;
    extent.begin = shift + span->first * bytes;
    extent.end = shift + span->second * bytes;
  }
  return extent;
}

// Where each argument of `type` starts in the lowered LLVM signature.
llvm::SmallVector<int64_t> loweredPositions(mlir::FunctionType type) {
  llvm::SmallVector<int64_t> positions;
  int64_t at = 0;
  for (mlir::Type input : type.getInputs()) {
    positions.push_back(at);
    auto memref = llvm::dyn_cast<mlir::MemRefType>(input);
    at += memref ? 3 + 2 * memref.getRank() : 1;
  }
  return positions;
}

struct KernelNoAlias : impl::KernelNoAliasBase<KernelNoAlias> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    // Every symbol use of the module in one walk, by the symbol used: asking each kernel for
    // its own uses walked the whole host plan once per kernel (0.9 s of byte_lm's compile at
    // depth 64, half of the `buffers` stage).
    std::optional<mlir::SymbolTable::UseRange> all =
        mlir::SymbolTable::getSymbolUses(&module.getBodyRegion());
    if (!all) return;  // an unknown symbol user: no kernel can be proven alone
    llvm::DenseMap<mlir::StringAttr, llvm::SmallVector<mlir::Operation *>> users;
    for (const mlir::SymbolTable::SymbolUse &use : *all)
      users[use.getSymbolRef().getRootReference()].push_back(use.getUser());
    for (auto kernel : module.getOps<mlir::func::FuncOp>()) {
      if (!kernel->hasAttr("step.kernel")) continue;
      mlir::FunctionType type = kernel.getFunctionType();
      unsigned n = type.getNumInputs();
      llvm::SmallVector<bool> noalias(n, false);
      for (unsigned i = 0; i < n; ++i) noalias[i] = llvm::isa<mlir::MemRefType>(type.getInput(i));
      bool onlyCalls = true;
      for (mlir::Operation *user : users.lookup(kernel.getSymNameAttr())) {
        auto call = llvm::dyn_cast<mlir::func::CallOp>(user);
        if (!call || call.getNumOperands() != n) {
          onlyCalls = false;
          break;
        }
        llvm::SmallVector<Extent> extents;
        for (mlir::Value operand : call.getOperands()) extents.push_back(extentOf(operand));
        for (unsigned i = 0; i < n; ++i)
          for (unsigned j = i + 1; j < n; ++j)
            if (llvm::isa<mlir::MemRefType>(type.getInput(i)) &&
                llvm::isa<mlir::MemRefType>(type.getInput(j)) &&
                overlap(extents[i], extents[j])) {
              noalias[i] = false;
              noalias[j] = false;
            }
      }
      if (!onlyCalls) continue;
      llvm::SmallVector<int64_t> positions = loweredPositions(type), marked;
      for (unsigned i = 0; i < n; ++i)
        if (noalias[i]) marked.push_back(positions[i] + 1);  // the aligned pointer
      if (!marked.empty())
        kernel->setAttr("step.noalias_args",
                        mlir::DenseI64ArrayAttr::get(kernel.getContext(), marked));
    }
  }
};

}  // namespace
}  // namespace stepc::codegen
