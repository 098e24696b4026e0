//===- PlanMemory.cpp - --step-plan-memory --------------------------------===//
//
// The static memory plan: every temporary buffer of a step function becomes a view at a fixed
// byte offset of one arena, @stepc_arena, an uninitialised global (LLVM puts it in the
// executable's .bss; every buffer is written before it is read), so a step never calls malloc
// and never touches fresh pages after the first.
//
// Liveness comes from the deallocation pipeline that runs before: a buffer lives from its
// memref.alloc to its memref.dealloc. Ops are numbered in pre-order over the whole function,
// so a buffer used inside a loop but allocated outside covers the loop's whole range, while a
// buffer allocated and freed inside a loop body only conflicts with what is live in that
// body. Buffers whose lifetimes do not overlap share bytes. Offsets are assigned largest
// buffer first, each at the lowest 64-byte-aligned offset free for its whole lifetime.
//
// Only a statically shaped alloc with identity layout and exactly one unconditional dealloc in
// its own block is planned; anything else (none in today's pipelines) keeps malloc/free. The
// step functions run one at a time, so they share the arena: its size is the largest plan.
// The result is recorded as `step.memory = {arena_bytes, peak_bytes, planned, unplanned}`
// (peak: the arena plus the runtime's params, state, results and the batch, less what
// --step-offload-buffers keeps in host memory: host_bytes) and in the program description
// (plannedBytes = the peak). A slot for offload transfers asks for page alignment.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "runtime/formats/ProgramDescription.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_PLANMEMORY
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

constexpr int64_t kAlignment = 64;

struct Buffer {
  mlir::memref::AllocOp alloc;
  mlir::memref::DeallocOp dealloc;
  int64_t bytes = 0, begin = 0, end = 0, offset = -1, alignment = kAlignment;
};

int64_t bytesOf(mlir::MemRefType type) {
  int64_t bits = type.getElementTypeBitWidth();
  int64_t bytes = type.getNumElements() * std::max<int64_t>(bits / 8, 1);
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

// Offsets for `buffers` (begin/end/bytes set); returns the arena bytes they need.
int64_t assignOffsets(std::vector<Buffer> &buffers) {
  std::vector<Buffer *> order;
  for (Buffer &b : buffers) order.push_back(&b);
  std::stable_sort(order.begin(), order.end(),
                   [](Buffer *a, Buffer *b) { return a->bytes > b->bytes; });
  int64_t arena = 0;
  std::vector<Buffer *> placed;
  for (Buffer *b : order) {
    // Ranges taken by placed buffers whose lifetimes overlap this one's, by offset.
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (Buffer *p : placed)
      if (p->begin <= b->end && b->begin <= p->end) taken.push_back({p->offset, p->offset + p->bytes});
    std::sort(taken.begin(), taken.end());
    auto align = [&](int64_t x) { return (x + b->alignment - 1) / b->alignment * b->alignment; };
    int64_t offset = 0;
    for (auto [lo, hi] : taken) {
      if (offset + b->bytes <= lo) break;
      offset = std::max(offset, align(hi));
    }
    b->offset = offset;
    arena = std::max(arena, offset + b->bytes);
    placed.push_back(b);
  }
  return arena;
}

struct PlanMemoryPass : impl::PlanMemoryBase<PlanMemoryPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *ctx = &getContext();
    if (module.lookupSymbol("stepc_arena")) return;  // planned already
    int64_t arena = 0, planned = 0, unplanned = 0, sampleArena = -1, sampleStepArena = -1;
    int64_t arenaAlignment = kAlignment;
    std::vector<std::pair<mlir::func::FuncOp, std::vector<Buffer>>> plans;
    for (auto fn : module.getOps<mlir::func::FuncOp>()) {
      if (fn.isExternal() || fn->hasAttr("step.kernel")) continue;
      llvm::DenseMap<mlir::Operation *, int64_t> number;
      int64_t next = 0;
      fn.walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation *op) { number[op] = next++; });
      std::vector<Buffer> buffers;
      fn.walk([&](mlir::memref::AllocOp alloc) {
        auto type = alloc.getType();
        mlir::memref::DeallocOp dealloc;
        int deallocs = 0;
        for (mlir::Operation *user : alloc->getUsers())
          if (auto d = llvm::dyn_cast<mlir::memref::DeallocOp>(user)) {
            dealloc = d;
            ++deallocs;
          }
        if (!type.hasStaticShape() || !type.getLayout().isIdentity() || deallocs != 1 ||
            dealloc->getBlock() != alloc->getBlock() || !alloc.getDynamicSizes().empty() ||
            !alloc.getSymbolOperands().empty() ||
            (type.getMemorySpace() && !llvm::isa<mlir::IntegerAttr>(type.getMemorySpace()))) {
          ++unplanned;
          return;
        }
        Buffer b;
        b.alloc = alloc;
        b.dealloc = dealloc;
        b.bytes = bytesOf(type);
        // Offload slots ask for page alignment (direct I/O); the arena is aligned as strictly.
        if (auto a = alloc.getAlignment(); a && static_cast<int64_t>(*a) > kAlignment)
          b.alignment = static_cast<int64_t>(*a);
        arenaAlignment = std::max(arenaAlignment, b.alignment);
        b.begin = number[alloc];
        b.end = number[dealloc];
        buffers.push_back(b);
      });
      int64_t own = assignOffsets(buffers);
      arena = std::max(arena, own);
      if (fn.getSymName() == "sample_logits") sampleArena = own;  // `sample`'s own plans
      if (fn.getSymName() == "sample_step") sampleStepArena = own;
      planned += static_cast<int64_t>(buffers.size());
      plans.push_back({fn, std::move(buffers)});
    }
    if (arena == 0) arena = kAlignment;
    mlir::OpBuilder b(ctx);
    b.setInsertionPointToStart(module.getBody());
    auto arenaType = mlir::MemRefType::get({arena}, b.getI8Type());
    b.create<mlir::memref::GlobalOp>(module.getLoc(), "stepc_arena", b.getStringAttr("private"),
                                     arenaType, /*initial_value=*/mlir::Attribute(),
                                     /*constant=*/false, b.getI64IntegerAttr(arenaAlignment));
    for (auto &[fn, buffers] : plans) {
      if (buffers.empty()) continue;
      b.setInsertionPointToStart(&fn.getBody().front());
      mlir::Value base = b.create<mlir::memref::GetGlobalOp>(fn.getLoc(), arenaType, "stepc_arena");
      for (Buffer &buf : buffers) {
        b.setInsertionPoint(buf.alloc);
        mlir::Value offset = b.create<mlir::arith::ConstantIndexOp>(buf.alloc.getLoc(), buf.offset);
        mlir::Value view = b.create<mlir::memref::ViewOp>(buf.alloc.getLoc(), buf.alloc.getType(),
                                                          base, offset, mlir::ValueRange{});
        buf.alloc.replaceAllUsesWith(view);
        buf.dealloc.erase();
        buf.alloc.erase();
      }
    }
    // The planned peak: the arena plus the buffers the runtime holds for a step: params and
    // state, any updated copies among the step's outputs, and the batch.
    int64_t total = arena, paramBytes = 0, stateBytes = 0, batchBytes = 0, hostBytes = 0;
    auto attr = module->getAttrOfType<mlir::StringAttr>("step.program");
    rt::ProgramDescription d;
    bool described = attr && rt::parseProgramDescription(attr.getValue().str(), d).ok();
    if (described) {
      auto bytes = [](const std::vector<int64_t> &shape) {
        int64_t n = 4;
        for (int64_t x : shape) n *= x;
        return n;
      };
      for (const rt::ParamSpec &p : d.info.params) paramBytes += bytes(p.shape);
      // A rank's block of a sharded state tensor (--shard-optimizer): what each rank holds.
      for (const rt::StateSpec &st : d.info.state) stateBytes += bytes(rt::localShape(st));
      // Offloaded buffers live in host memory (--step-offload-buffers): not on the device.
      for (const rt::OffloadSpec &o : d.info.offload)
        (o.state ? stateBytes : paramBytes) -= o.layers * o.layerBytes;
      hostBytes = d.info.offloadHostBytes;
      // Updates not made in place (--step-update-in-place) come back in scratch buffers.
      for (const rt::Binding &r : d.train.results) {
        if (r.kind == rt::Binding::Kind::kParam) paramBytes += bytes(d.info.params[r.index].shape);
        if (r.kind == rt::Binding::Kind::kState)
          stateBytes += bytes(rt::localShape(d.info.state[r.index]));
      }
      for (const rt::InputSpec &in : d.info.inputs)
        batchBytes += bytes(in.shape) + bytes({in.shape.front()}) *
                                            (in.source == rt::InputSource::kTokenStream ? in.shape[1] : 1);
      total += paramBytes + stateBytes + batchBytes;
      d.info.plannedBytes = total;
      if (sampleArena >= 0) d.info.sampleTemporaryBytes = sampleArena;
      if (sampleStepArena >= 0) d.info.sampleStepTemporaryBytes = sampleStepArena;
      module->setAttr("step.program", mlir::StringAttr::get(ctx, rt::writeProgramDescription(d)));
    }
    llvm::SmallVector<mlir::NamedAttribute> memory = {
        b.getNamedAttr("arena_bytes", b.getI64IntegerAttr(arena)),
        b.getNamedAttr("peak_bytes", b.getI64IntegerAttr(total)),
        b.getNamedAttr("params_bytes", b.getI64IntegerAttr(paramBytes)),
        b.getNamedAttr("state_bytes", b.getI64IntegerAttr(stateBytes)),
        b.getNamedAttr("batch_bytes", b.getI64IntegerAttr(batchBytes)),
        b.getNamedAttr("planned", b.getI64IntegerAttr(planned)),
        b.getNamedAttr("unplanned", b.getI64IntegerAttr(unplanned))};
    if (hostBytes > 0) memory.push_back(b.getNamedAttr("host_bytes", b.getI64IntegerAttr(hostBytes)));
    module->setAttr("step.memory", mlir::DictionaryAttr::get(ctx, memory));
  }
};

}  // namespace

}  // namespace stepc::codegen
