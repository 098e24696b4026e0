//===- OffloadBuffers.cpp - --step-offload-buffers ------------------------===//
//
// Planned offload: parameters and optimizer state of stacked layers that live in host memory
// (the far tier) and pass through the device one layer at a time. The module attribute
//
//   step.offload = {buffers = ["param:cell.w1", "state:m/cell.w1", ...], mode = "planned"}
//
// (set by `stepc compile --device-memory`, compiler/Codegen/DeviceMemory.h) names them as the
// step functions' arguments are named (role:name, role:slot/name). Runs after kernel outlining,
// on the host plan, in two steps:
//
// 1. Whole-buffer kernels become layer loops. A kernel call that takes an offloaded buffer
//    whole (the optimizer's update, SAM's perturbation, AGC's unit norms) is layer-separable
//    when its one linalg op maps the buffer's leading axis to one loop dimension d, and every
//    other operand either has that axis first (same layer count) or does not involve d. The
//    call then runs once per layer on [1, ...] views, through a clone of the kernel with those
//    types. Each element is computed by the same arithmetic in the same order (d is the
//    outermost loop of the kernel's nest, and a reduction over d accumulates into its output
//    across the calls exactly as it did across d), so the step's numbers do not change.
//    Adjacent such calls share one loop when no buffer one of them writes is read or written
//    another way by the others (the three AdamW kernels of a parameter become one pass).
// 2. Every loop that views layer f(iv) of an offloaded buffer gets slots in the arena and
//    transfer calls into the runtime (runtime/hal/cpu/Offload.h):
//
//      planned  two slots: before the loop the first layer is fetched; iteration iv starts
//               the fetch of the next one into the other slot, computes, waiting for its own
//               layer just before the first command that touches it, and (if it wrote the
//               layer) starts its write-back. Transfers run in the order issued, so a slot is
//               written back before it is refilled, and the loop's buffers are fetched in the
//               order its body first touches them; after a loop that writes, the step waits
//               for its last write-backs before the slots are reused.
//      sync     one slot: fetch and wait at the start of each iteration, write back and wait
//               at its end (HomebrewNLP's scheme: copied in when used, back after).
//
//    The view of the buffer becomes the same view of the slot, so nothing else changes.
//
// A buffer with any other use (a whole-buffer op that is not a layer-separable kernel, a view
// not at the loop's layer) stays on the device; the reason goes into the description's
// offloadSummary. The description records each offloaded buffer (its id in the transfer
// calls is its index there), the mode and the bytes one step moves; --step-plan-memory leaves
// offloaded buffers out of the device peak and counts them as host bytes.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdio>
#include <map>

#include "compiler/Codegen/Common/Passes.h"
#include "compiler/Codegen/Common/RuntimeCallWrites.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "runtime/formats/ProgramDescription.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_OFFLOADBUFFERS
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

using mlir::Value;

constexpr int64_t kSlotAlignment = 4096;  // O_DIRECT transfers need page-aligned memory

std::string argName(mlir::func::FuncOp fn, unsigned i) {
  mlir::DictionaryAttr attrs = fn.getArgAttrDict(i);
  if (!attrs) return "";
  auto role = llvm::dyn_cast_or_null<mlir::StringAttr>(attrs.get("step.role"));
  auto name = llvm::dyn_cast_or_null<mlir::StringAttr>(attrs.get("step.name"));
  auto slot = llvm::dyn_cast_or_null<mlir::StringAttr>(attrs.get("step.slot"));
  if (!role || !name) return "";
  return role.getValue().str() + ":" + (slot ? slot.getValue().str() + "/" : "") +
         name.getValue().str();
}

bool isView(mlir::Operation *op) {
  return llvm::isa<mlir::memref::SubViewOp, mlir::memref::CollapseShapeOp,
                   mlir::memref::ExpandShapeOp, mlir::memref::CastOp,
                   mlir::memref::ReinterpretCastOp, mlir::memref::ViewOp,
                   mlir::memref::TransposeOp>(op);
}

// The buffer a view is of: through view ops to an allocation or an argument.
Value rootOf(Value v) {
  while (mlir::Operation *def = v.getDefiningOp()) {
    if (!isView(def)) break;
    v = def->getOperand(0);
  }
  return v;
}

// The one linalg op of an outlined kernel (constants aside), or null.
mlir::linalg::LinalgOp kernelOp(mlir::func::FuncOp kernel) {
  if (!kernel || kernel.isExternal() || !kernel->hasAttr("step.kernel")) return nullptr;
  mlir::linalg::LinalgOp found;
  for (mlir::Operation &op : kernel.getBody().front()) {
    if (llvm::isa<mlir::arith::ConstantOp, mlir::func::ReturnOp>(op)) continue;
    auto linalg = llvm::dyn_cast<mlir::linalg::LinalgOp>(op);
    if (!linalg || found) return nullptr;
    found = linalg;
  }
  return found;
}

// Whether call operand `index` may be written by the call. Kernels: a linalg init; the
// runtime's calls: RuntimeCallWrites.h; anything else is assumed to write.
bool callWrites(mlir::ModuleOp module, mlir::func::CallOp call, unsigned index) {
  llvm::StringRef callee = call.getCallee();
  if (std::optional<bool> known = runtimeCallWrites(callee, index)) return *known;
  auto kernel = module.lookupSymbol<mlir::func::FuncOp>(callee);
  mlir::linalg::LinalgOp op = kernelOp(kernel);
  if (!op) return true;
  Value arg = kernel.getArgument(index);
  for (mlir::OpOperand &init : op.getDpsInitsMutable())
    if (init.get() == arg) return true;
  return false;
}

// Whether anything reached through views of `v` may be written.
bool writesThrough(mlir::ModuleOp module, Value v) {
  for (mlir::OpOperand &use : v.getUses()) {
    mlir::Operation *user = use.getOwner();
    if (isView(user)) {
      if (writesThrough(module, user->getResult(0))) return true;
    } else if (auto call = llvm::dyn_cast<mlir::func::CallOp>(user)) {
      if (callWrites(module, call, use.getOperandNumber())) return true;
    } else if (auto copy = llvm::dyn_cast<mlir::memref::CopyOp>(user)) {
      if (copy.getTarget() == use.get()) return true;
    } else if (!llvm::isa<mlir::memref::LoadOp>(user)) {
      return true;
    }
  }
  return false;
}

// ---- Step 1: layer-separable kernel calls.

struct Slicing {
  llvm::SmallVector<bool> sliced;  // per call operand: takes the [1, ...] view of its layer
  int64_t layers = 0;
};

// How `call` splits along the leading axis of its operand `index` (an offloaded buffer with
// `layers` layers), or failure with the reason.
mlir::FailureOr<Slicing> sliceCall(mlir::ModuleOp module, mlir::func::CallOp call,
                                   unsigned index, int64_t layers, std::string &why) {
  auto kernel = module.lookupSymbol<mlir::func::FuncOp>(call.getCallee());
  mlir::linalg::LinalgOp op = kernelOp(kernel);
  if (!op) {
    why = "taken whole by " + call.getCallee().str() + ", which is not one linalg kernel";
    return mlir::failure();
  }
  // The loop dimension each argument's leading axis follows (-1: none, -2: used inconsistently).
  auto leadingDim = [&](Value arg) -> int {
    int dim = -1;
    for (mlir::OpOperand &operand : op->getOpOperands()) {
      if (operand.get() != arg) continue;
      mlir::AffineMap map = op.getMatchingIndexingMap(&operand);
      int d = -2;
      if (map.getNumResults() > 0)
        if (auto e = llvm::dyn_cast<mlir::AffineDimExpr>(map.getResult(0))) d = e.getPosition();
      if (dim != -1 && dim != d) return -2;
      dim = d;
    }
    return dim;
  };
  auto involves = [&](Value arg, int d) {
    for (mlir::OpOperand &operand : op->getOpOperands())
      if (operand.get() == arg &&
          op.getMatchingIndexingMap(&operand).isFunctionOfDim(static_cast<unsigned>(d)))
        return true;
    return false;
  };
  // The buffer may be passed more than once (an update's input and output), some unused.
  int d = -1;
  for (unsigned i = 0; i < call.getNumOperands(); ++i) {
    if (call.getOperand(i) != call.getOperand(index)) continue;
    int di = leadingDim(kernel.getArgument(i));
    if (di == -1) continue;
    if (di == -2 || (d >= 0 && d != di)) {
      d = -2;
      break;
    }
    d = di;
  }
  if (d < 0) {
    why = "taken by " + call.getCallee().str() + " with its layer axis not one loop dimension";
    return mlir::failure();
  }
  Slicing s;
  s.layers = layers;
  for (unsigned i = 0; i < call.getNumOperands(); ++i) {
    Value arg = kernel.getArgument(i);
    auto type = llvm::dyn_cast<mlir::MemRefType>(arg.getType());
    int lead = leadingDim(arg);
    // An unused argument with the layer axis takes the layer's view too: it is never read.
    bool slice = type && type.getRank() > 0 && type.getDimSize(0) == layers &&
                 (lead == d || lead == -1);
    if (!slice && involves(arg, d)) {
      why = "taken by " + call.getCallee().str() + ", whose operand " + std::to_string(i) +
            " mixes the layers";
      return mlir::failure();
    }
    s.sliced.push_back(slice);
  }
  return s;
}

// A [1, ...] view of layer `at` of `v`.
Value layerView(mlir::OpBuilder &b, mlir::Location loc, Value v, Value at) {
  auto type = llvm::cast<mlir::MemRefType>(v.getType());
  int64_t rank = type.getRank();
  llvm::SmallVector<mlir::OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  offsets[0] = at;
  sizes.push_back(b.getIndexAttr(1));
  for (int64_t s : type.getShape().drop_front()) sizes.push_back(b.getIndexAttr(s));
  return b.create<mlir::memref::SubViewOp>(loc, v, offsets, sizes, strides);
}

// The kernel `callee` with its sliced arguments retyped to `types` (cached by name).
mlir::func::FuncOp layerKernel(mlir::ModuleOp module, mlir::func::FuncOp callee,
                               mlir::TypeRange types, int &counter,
                               std::map<std::string, mlir::func::FuncOp> &cache) {
  mlir::OpBuilder b(module.getContext());
  std::string key = callee.getSymName().str();
  llvm::raw_string_ostream os(key);
  for (mlir::Type t : types) os << "," << t;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  b.setInsertionPointAfter(callee);
  auto clone = llvm::cast<mlir::func::FuncOp>(b.clone(*callee));
  clone.setSymName((callee.getSymName() + "_layer" + std::to_string(counter++)).str());
  for (auto [arg, type] : llvm::zip(clone.getArguments(), types)) arg.setType(type);
  clone.setFunctionType(b.getFunctionType(types, {}));
  cache[key] = clone;
  return clone;
}

struct Access {
  bool sliced, writes;
  Value value;
};

// One run of adjacent layer-separable calls, to become one loop.
struct Group {
  llvm::SmallVector<mlir::func::CallOp> calls;
  llvm::SmallVector<Slicing> slicings;
  std::map<mlir::Operation *, llvm::SmallVector<mlir::func::CallOp>> profiles;
  llvm::DenseMap<Value, llvm::SmallVector<Access>> touched;  // by root buffer
  llvm::SmallVector<mlir::memref::DeallocOp> deallocs;  // met inside the run: moved after it
  int64_t layers = 0;

  // Whether `call` may join: the loop then runs each call's layer i before the next layer.
  bool admits(mlir::ModuleOp module, mlir::func::CallOp call, const Slicing &s) const {
    if (calls.empty()) return true;
    if (s.layers != layers) return false;
    for (unsigned i = 0; i < call.getNumOperands(); ++i) {
      Value v = call.getOperand(i);
      if (!llvm::isa<mlir::MemRefType>(v.getType())) continue;
      auto it = touched.find(rootOf(v));
      if (it == touched.end()) continue;
      bool writes = callWrites(module, call, i);
      for (const Access &a : it->second) {
        if (!s.sliced[i] || !a.sliced) {
          if (writes || a.writes) return false;  // a whole buffer shared with a writer
        } else if (a.value != v && (writes || a.writes)) {
          return false;  // two different views of one buffer, one written
        }
      }
    }
    return true;
  }
  void add(mlir::ModuleOp module, mlir::func::CallOp call, const Slicing &s) {
    layers = s.layers;
    calls.push_back(call);
    slicings.push_back(s);
    for (unsigned i = 0; i < call.getNumOperands(); ++i) {
      Value v = call.getOperand(i);
      if (llvm::isa<mlir::MemRefType>(v.getType()))
        touched[rootOf(v)].push_back({s.sliced[i], callWrites(module, call, i), v});
    }
  }
};

// The profile brackets of a kernel call (OutlineKernels): enter just before, exit just after.
std::pair<mlir::func::CallOp, mlir::func::CallOp> profileOf(mlir::func::CallOp call) {
  auto enter = llvm::dyn_cast_or_null<mlir::func::CallOp>(call->getPrevNode());
  auto exit = llvm::dyn_cast_or_null<mlir::func::CallOp>(call->getNextNode());
  if (!enter || enter.getCallee() != "stepc_profile_enter") enter = nullptr;
  if (!exit || exit.getCallee() != "stepc_profile_exit") exit = nullptr;
  return {enter, exit};
}

void emitLoop(mlir::ModuleOp module, Group &group, int &counter,
              std::map<std::string, mlir::func::FuncOp> &cache) {
  mlir::func::CallOp last = group.calls.back();
  auto [lastEnter, lastExit] = profileOf(last);
  mlir::Operation *after = lastExit ? lastExit.getOperation() : last.getOperation();
  mlir::OpBuilder b(after);
  b.setInsertionPointAfter(after);
  mlir::Location loc = group.calls.front().getLoc();
  Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
  Value count = b.create<mlir::arith::ConstantIndexOp>(loc, group.layers);
  auto loop = b.create<mlir::scf::ForOp>(loc, zero, count, one);
  loop->setAttr("step.layer_loop", b.getUnitAttr());
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value iv = loop.getInductionVar();
  for (auto [call, s] : llvm::zip(group.calls, group.slicings)) {
    auto [enter, exit] = profileOf(call);
    llvm::SmallVector<Value> operands;
    llvm::SmallVector<mlir::Type> types;
    for (auto [i, v] : llvm::enumerate(call.getOperands())) {
      Value operand = s.sliced[i] ? layerView(b, call.getLoc(), v, iv) : v;
      operands.push_back(operand);
      types.push_back(operand.getType());
    }
    auto callee = module.lookupSymbol<mlir::func::FuncOp>(call.getCallee());
    mlir::func::FuncOp kernel = layerKernel(module, callee, types, counter, cache);
    if (enter) b.clone(*enter);
    b.create<mlir::func::CallOp>(call.getLoc(), kernel, operands);
    if (exit) b.clone(*exit);
    if (enter) enter.erase();
    if (exit) exit.erase();
    call.erase();
  }
  for (mlir::memref::DeallocOp dealloc : group.deallocs) dealloc->moveAfter(loop);
}

// ---- Step 2: slots and transfers for the loops that view layers of offloaded buffers.

// The loop whose layer `subview` views, or null: layer offset first (a function of the loop's
// induction variable through index arithmetic), the rest of the buffer whole.
mlir::scf::ForOp layerLoop(mlir::memref::SubViewOp view) {
  auto loop = view->getParentOfType<mlir::scf::ForOp>();
  if (!loop) return nullptr;
  auto source = view.getSourceType();
  llvm::ArrayRef<int64_t> offsets = view.getStaticOffsets(), sizes = view.getStaticSizes(),
                          strides = view.getStaticStrides();
  if (!mlir::ShapedType::isDynamic(offsets[0]) || sizes[0] != 1) return nullptr;
  for (int64_t d = 1; d < source.getRank(); ++d)
    if (offsets[d] != 0 || sizes[d] != source.getDimSize(d)) return nullptr;
  for (int64_t s : strides)
    if (s != 1) return nullptr;
  // The layer index: the induction variable, or index arithmetic on it and loop invariants.
  std::function<bool(Value)> ok = [&](Value v) {
    if (v == loop.getInductionVar()) return true;
    mlir::Operation *def = v.getDefiningOp();
    if (!def) return !loop->isAncestor(v.getParentBlock()->getParentOp());
    if (!loop->isProperAncestor(def)) return true;
    if (!llvm::isa<mlir::arith::AddIOp, mlir::arith::SubIOp, mlir::arith::MulIOp,
                   mlir::arith::ConstantOp>(def))
      return false;
    return llvm::all_of(def->getOperands(), ok);
  };
  return ok(view.getOffsets()[0]) ? loop : nullptr;
}

// `index` (a function of `loop`'s induction variable) at induction value `at`.
Value indexAt(mlir::OpBuilder &b, mlir::scf::ForOp loop, Value index, Value at) {
  if (index == loop.getInductionVar()) return at;
  mlir::Operation *def = index.getDefiningOp();
  if (!def || !loop->isProperAncestor(def)) return index;
  mlir::IRMapping mapping;
  for (Value operand : def->getOperands()) mapping.map(operand, indexAt(b, loop, operand, at));
  return b.clone(*def, mapping)->getResult(0);
}

mlir::func::FuncOp runtimeFunction(mlir::ModuleOp module, llvm::StringRef name,
                                   mlir::TypeRange inputs) {
  if (auto fn = module.lookupSymbol<mlir::func::FuncOp>(name)) return fn;
  mlir::OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto fn = b.create<mlir::func::FuncOp>(module.getLoc(), name, b.getFunctionType(inputs, {}));
  fn.setPrivate();
  // Views pass through MLIR's C interface (memref<*xf32>); the scalar calls are plain C.
  if (llvm::any_of(inputs, [](mlir::Type t) { return llvm::isa<mlir::UnrankedMemRefType>(t); }))
    fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return fn;
}

// The op of `body` (or the one holding it) that first reads or writes memory through `views`,
// following view ops (subviews, casts, reshapes) to what uses them; null when nothing does.
mlir::Operation *firstAccess(mlir::Block *body, llvm::ArrayRef<Value> views) {
  mlir::Operation *first = nullptr;
  llvm::SmallVector<Value> work(views.begin(), views.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (mlir::Operation *user : v.getUsers()) {
      if (llvm::isa<mlir::ViewLikeOpInterface>(user)) {
        work.append(user->result_begin(), user->result_end());
        continue;
      }
      mlir::Operation *at = body->findAncestorOpInBlock(*user);
      if (at && (!first || at->isBeforeInBlock(first))) first = at;
    }
  }
  return first;
}

struct Streamed {
  int64_t id;
  std::string name;
  llvm::SmallVector<mlir::memref::SubViewOp> views;  // all at the same layer index
  bool writes = false;
};

struct Transfers {
  int64_t fetchBytes = 0, storeBytes = 0;
  // Of them, the train step's loops of whole-buffer kernels (step 1): passes that exist only
  // because a buffer lives off the device (the update after a global-norm clip, SAM's
  // perturbation and AGC's norms need every layer's gradient first).
  int64_t passBytes = 0, passes = 0;
  int64_t waits = 0;     // waits emitted so far
  int64_t dropWait = 0;  // tests only: the wait (1-based) left out, a plan bug to catch
};

// Rewrites `loop`'s views of offloaded buffers into slot views with transfers. `buffers` come
// in the order the body first touches them: transfers run in the order issued, so the loop's
// first layers and each iteration's next layers are fetched in the order they are waited for.
void streamLoop(mlir::ModuleOp module, mlir::scf::ForOp loop, llvm::ArrayRef<Streamed> buffers,
                bool sync, Transfers &moved) {
  mlir::OpBuilder b(module.getContext());
  mlir::Location loc = loop.getLoc();
  auto i64 = b.getI64Type();
  auto unranked = mlir::UnrankedMemRefType::get(b.getF32Type(), 0);
  auto fetch = runtimeFunction(module, "stepc_offload_fetch", {i64, i64, unranked});
  auto store = runtimeFunction(module, "stepc_offload_store", {i64, i64, unranked});
  auto wait = runtimeFunction(module, "stepc_offload_wait", {i64, i64});
  auto flush = runtimeFunction(module, "stepc_offload_flush", {});
  int64_t trips = -1;
  {
    auto lb = loop.getLowerBound().getDefiningOp<mlir::arith::ConstantIndexOp>();
    auto ub = loop.getUpperBound().getDefiningOp<mlir::arith::ConstantIndexOp>();
    auto st = loop.getStep().getDefiningOp<mlir::arith::ConstantIndexOp>();
    if (lb && ub && st && st.value() > 0) trips = (ub.value() - lb.value() + st.value() - 1) / st.value();
  }
  // Loops inside loops (the layers inside the micro-batch loop) move their bytes each time.
  int64_t times = 1;
  for (auto outer = loop->getParentOfType<mlir::scf::ForOp>(); outer;
       outer = outer->getParentOfType<mlir::scf::ForOp>()) {
    auto lb = outer.getLowerBound().getDefiningOp<mlir::arith::ConstantIndexOp>();
    auto ub = outer.getUpperBound().getDefiningOp<mlir::arith::ConstantIndexOp>();
    if (lb && ub) times *= std::max<int64_t>(1, ub.value() - lb.value());
  }
  Value iv = loop.getInductionVar();
  mlir::Block *body = loop.getBody();
  mlir::Operation *topEnd = nullptr;  // the last op of the transfers at the top of the body
  for (const Streamed &s : buffers) {
    mlir::memref::SubViewOp first = s.views.front();
    auto source = first.getSourceType();
    int64_t slots = sync ? 1 : 2;
    llvm::SmallVector<int64_t> shape(source.getShape());
    shape[0] = slots;
    auto slotType = mlir::MemRefType::get(shape, source.getElementType());
    int64_t layerBytes = source.getNumElements() / source.getDimSize(0) * 4;
    // What one training step moves: the other functions' loops (eval, sampling) stream too,
    // but `info`'s per-step figures are the train step's.
    auto fn = loop->getParentOfType<mlir::func::FuncOp>();
    if (trips > 0 && fn && fn.getSymName() == "train_step") {
      moved.fetchBytes += trips * times * layerBytes;
      if (s.writes) moved.storeBytes += trips * times * layerBytes;
      if (loop->hasAttr("step.layer_loop")) {
        moved.passBytes += trips * times * layerBytes * (s.writes ? 2 : 1);
        if (!loop->hasAttr("step.streamed_pass")) ++moved.passes;
        loop->setAttr("step.streamed_pass", b.getUnitAttr());
      }
    }
    b.setInsertionPoint(loop);
    auto alloc = b.create<mlir::memref::AllocOp>(loc, slotType, b.getI64IntegerAttr(kSlotAlignment));
    b.setInsertionPointAfter(loop);
    b.create<mlir::memref::DeallocOp>(loc, alloc);
    auto idValue = [&]() {
      return b.create<mlir::arith::ConstantIntOp>(loc, s.id, 64).getResult();
    };
    // The plan view names the buffer and the layer a transfer moves.
    auto tag = [&](mlir::func::CallOp call, llvm::StringRef which) {
      call->setAttr("step.buffer", b.getStringAttr(s.name));
      call->setAttr("step.layer", b.getStringAttr(which));
      return call.getOperation();
    };
    auto layerOf = [&](Value at) {
      Value index = indexAt(b, loop, first.getOffsets()[0], at);
      return b.create<mlir::arith::IndexCastOp>(loc, i64, index).getResult();
    };
    auto slotView = [&](Value k) {
      Value v = layerView(b, loc, alloc, k);
      return b.create<mlir::memref::CastOp>(loc, unranked, v).getResult();
    };
    if (!sync) {
      // Before the loop: the first iteration's layer into slot 0.
      b.setInsertionPoint(loop);
      Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
      tag(b.create<mlir::func::CallOp>(loc, fetch, mlir::ValueRange{idValue(), layerOf(loop.getLowerBound()), slotView(zero)}), "the loop's first layer");
    }
    // At the top of the body (after the buffers before this one): this iteration's slot k
    // and the next iteration's layer started into the other slot. The wait for this layer
    // comes just before the body first touches it (planned) so that the work before that
    // overlaps the transfer: a layer's optimizer state is waited for at its update, at the
    // end of the backward's iteration, not at its start.
    if (topEnd)
      b.setInsertionPointAfter(topEnd);
    else
      b.setInsertionPointToStart(body);
    Value id = idValue();
    Value layer = layerOf(iv);
    Value k;
    if (sync) {
      k = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
      tag(b.create<mlir::func::CallOp>(loc, fetch, mlir::ValueRange{id, layer, slotView(k)}), "this layer");
      topEnd = tag(b.create<mlir::func::CallOp>(loc, wait, mlir::ValueRange{id, layer}), "this layer");
    } else {
      Value two = b.create<mlir::arith::ConstantIndexOp>(loc, 2);
      Value one = b.create<mlir::arith::ConstantIndexOp>(loc, 1);
      Value trip = b.create<mlir::arith::SubIOp>(loc, iv, loop.getLowerBound());
      trip = b.create<mlir::arith::DivUIOp>(loc, trip, loop.getStep());
      k = b.create<mlir::arith::RemUIOp>(loc, trip, two);
      Value next = b.create<mlir::arith::AddIOp>(loc, iv, loop.getStep());
      Value more = b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::slt, next,
                                                 loop.getUpperBound());
      auto ifOp = b.create<mlir::scf::IfOp>(loc, more, /*withElseRegion=*/false);
      mlir::OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value other = b.create<mlir::arith::SubIOp>(loc, one, k);
      tag(b.create<mlir::func::CallOp>(loc, fetch, mlir::ValueRange{id, layerOf(next), slotView(other)}), "the next layer");
      topEnd = ifOp;
    }
    // The buffer's views become the slot's.
    llvm::SmallVector<Value> slotViews;
    for (mlir::memref::SubViewOp view : s.views) {
      b.setInsertionPoint(view);
      llvm::SmallVector<mlir::OpFoldResult> offsets = view.getMixedOffsets();
      offsets[0] = k;
      auto replacement = b.create<mlir::memref::SubViewOp>(
          view.getLoc(), view.getType(), alloc, offsets, view.getMixedSizes(),
          view.getMixedStrides());
      view.replaceAllUsesWith(replacement.getResult());
      view.erase();
      slotViews.push_back(replacement.getResult());
    }
    if (!sync && ++moved.waits != moved.dropWait) {
      mlir::Operation *use = firstAccess(body, slotViews);
      b.setInsertionPoint(use ? use : body->getTerminator());
      tag(b.create<mlir::func::CallOp>(loc, wait, mlir::ValueRange{id, layer}), "this layer");
    }
    if (s.writes) {
      b.setInsertionPoint(body->getTerminator());
      tag(b.create<mlir::func::CallOp>(loc, store, mlir::ValueRange{id, layer, slotView(k)}), "this layer");
      if (sync) tag(b.create<mlir::func::CallOp>(loc, flush, mlir::ValueRange{}), "this layer");
    }
    if (s.writes && !sync) {
      // The last write-backs read the slots after the loop ends; the slots' arena bytes are
      // free after it (the plan reuses them), so they must be done before anything else runs.
      b.setInsertionPointAfter(loop);
      tag(b.create<mlir::func::CallOp>(loc, flush, mlir::ValueRange{}), "the loop's last layers");
    }
  }
}

struct OffloadBuffersPass : impl::OffloadBuffersBase<OffloadBuffersPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    auto request = module->getAttrOfType<mlir::DictionaryAttr>("step.offload");
    // What --device-memory chose and why (compiler/Codegen/DeviceMemory.h), for `info`.
    auto chosenBy = module->getAttrOfType<mlir::StringAttr>("step.offload_summary");
    auto program = module->getAttrOfType<mlir::StringAttr>("step.program");
    if (!request) {
      rt::ProgramDescription d;
      if (chosenBy && program && rt::parseProgramDescription(program.str(), d).ok()) {
        d.info.offloadSummary = chosenBy.str();
        module->setAttr("step.program",
                        mlir::StringAttr::get(&getContext(), rt::writeProgramDescription(d)));
      }
      return;
    }
    auto list = llvm::dyn_cast_or_null<mlir::ArrayAttr>(request.get("buffers"));
    auto mode = llvm::dyn_cast_or_null<mlir::StringAttr>(request.get("mode"));
    if (!list || !mode || (mode.getValue() != "planned" && mode.getValue() != "sync")) {
      module.emitError("step.offload expects {buffers = [names], mode = \"planned\" or \"sync\"}");
      return signalPassFailure();
    }
    bool sync = mode.getValue() == "sync";
    int64_t dropWait = 0;
    if (auto drop = llvm::dyn_cast_or_null<mlir::IntegerAttr>(request.get("test_drop_wait")))
      dropWait = drop.getInt();
    std::vector<std::string> wanted;
    for (mlir::Attribute a : list) {
      auto s = llvm::dyn_cast<mlir::StringAttr>(a);
      if (!s) {
        module.emitError("step.offload's buffers must be strings");
        return signalPassFailure();
      }
      wanted.push_back(s.str());
    }
    llvm::SmallVector<mlir::func::FuncOp> functions;
    for (auto fn : module.getOps<mlir::func::FuncOp>())
      if (!fn.isExternal() && !fn->hasAttr("step.kernel")) functions.push_back(fn);
    auto argsNamed = [&](const std::string &name) {
      llvm::SmallVector<Value> args;
      for (mlir::func::FuncOp fn : functions)
        for (unsigned i = 0; i < fn.getNumArguments(); ++i)
          if (argName(fn, i) == name) args.push_back(fn.getArgument(i));
      return args;
    };

    // Which of the wanted buffers can be streamed, and why not the others.
    std::string summary;
    std::vector<std::string> chosen;
    for (const std::string &name : wanted) {
      llvm::SmallVector<Value> args = argsNamed(name);
      std::string why;
      if (args.empty()) why = "no step function takes it";
      for (Value arg : args) {
        auto type = llvm::dyn_cast<mlir::MemRefType>(arg.getType());
        if (!type || type.getRank() < 1 || !type.hasStaticShape() ||
            !type.getElementType().isF32()) {
          why = "not a static f32 buffer";
          break;
        }
        int64_t layers = type.getDimSize(0);
        llvm::DenseMap<mlir::Operation *, Value> loopIndex;
        for (mlir::OpOperand &use : arg.getUses()) {
          mlir::Operation *user = use.getOwner();
          if (auto view = llvm::dyn_cast<mlir::memref::SubViewOp>(user)) {
            mlir::scf::ForOp loop = layerLoop(view);
            if (!loop) {
              why = "viewed other than layer by layer of a loop";
              break;
            }
            auto [it, inserted] = loopIndex.try_emplace(loop, view.getOffsets()[0]);
            if (!inserted && it->second != view.getOffsets()[0]) {
              why = "viewed at two layers in one loop";
              break;
            }
          } else if (auto call = llvm::dyn_cast<mlir::func::CallOp>(user)) {
            if (failed(sliceCall(module, call, use.getOperandNumber(), layers, why))) break;
          } else {
            why = "used whole by " + user->getName().getStringRef().str();
            break;
          }
        }
        if (!why.empty()) break;
      }
      if (why.empty()) chosen.push_back(name);
      else summary += (summary.empty() ? "" : "; ") + name + " stays on the device: " + why;
    }

    // Step 1: whole-buffer calls to layer loops.
    llvm::DenseSet<Value> offloaded;
    for (const std::string &name : chosen)
      for (Value arg : argsNamed(name)) offloaded.insert(arg);
    int counter = 0;
    std::map<std::string, mlir::func::FuncOp> cache;
    for (mlir::func::FuncOp fn : functions) {
      llvm::SmallVector<mlir::Block *> blocks;
      fn.walk([&](mlir::Block *block) { blocks.push_back(block); });
      for (mlir::Block *block : blocks) {
        std::vector<Group> groups;
        Group current;
        for (mlir::Operation &op : *block) {
          auto call = llvm::dyn_cast<mlir::func::CallOp>(op);
          if (call && call.getCallee().starts_with("stepc_profile_")) continue;
          // Constants, views and allocations leave the run unbroken (the loop goes after them);
          // a buffer freed inside the run is freed after the loop instead.
          if (!call && (mlir::isPure(&op) || isView(&op) || llvm::isa<mlir::memref::AllocOp>(op)))
            continue;
          if (auto dealloc = llvm::dyn_cast<mlir::memref::DeallocOp>(op);
              dealloc && !current.calls.empty()) {
            current.deallocs.push_back(dealloc);
            continue;
          }
          std::optional<Slicing> slicing;
          if (call)
            for (auto [i, v] : llvm::enumerate(call.getOperands())) {
              if (!offloaded.contains(v)) continue;
              std::string why;
              auto s = sliceCall(module, call, i,
                                 llvm::cast<mlir::MemRefType>(v.getType()).getDimSize(0), why);
              if (succeeded(s)) slicing = *s;
              break;
            }
          if (!slicing || !current.admits(module, call, *slicing)) {
            if (!current.calls.empty()) groups.push_back(std::move(current));
            current = Group();
          }
          if (slicing) current.add(module, call, *slicing);
        }
        if (!current.calls.empty()) groups.push_back(std::move(current));
        for (Group &g : groups) emitLoop(module, g, counter, cache);
      }
    }

    // Step 2: the loops' slots and transfers.
    Transfers moved;
    moved.dropWait = dropWait;
    std::vector<rt::OffloadSpec> specs;
    auto text = module->getAttrOfType<mlir::StringAttr>("step.program");
    rt::ProgramDescription d;
    if (text) {
      if (rt::Status s = rt::parseProgramDescription(text.str(), d); !s.ok()) {
        module.emitError("bad `step.program` description: ") << s.message();
        return signalPassFailure();
      }
    }
    // The loops that view offloaded buffers, each with the buffers it views (in id order).
    llvm::MapVector<mlir::Operation *, llvm::SmallVector<Streamed>> loops;
    for (auto [id, name] : llvm::enumerate(chosen)) {
      llvm::SmallVector<Value> args = argsNamed(name);
      auto type = llvm::cast<mlir::MemRefType>(args.front().getType());
      rt::OffloadSpec spec;
      spec.layers = type.getDimSize(0);
      spec.layerBytes = type.getNumElements() / spec.layers * 4;
      if (text) {
        bool found = false;
        for (size_t i = 0; i < d.info.params.size() && !found; ++i)
          if ("param:" + d.info.params[i].name == name) spec.index = static_cast<int>(i), found = true;
        for (size_t i = 0; i < d.info.state.size() && !found; ++i)
          if ("state:" + d.info.state[i].slot + "/" + d.info.state[i].param == name)
            spec.state = true, spec.index = static_cast<int>(i), found = true;
        if (!found) {
          module.emitError("step.offload names '") << name << "', which is no parameter or state";
          return signalPassFailure();
        }
      }
      specs.push_back(spec);
      // Each function's loops that view this buffer.
      for (Value arg : args) {
        llvm::MapVector<mlir::Operation *, Streamed> viewsIn;
        for (mlir::Operation *user : arg.getUsers()) {
          auto view = llvm::cast<mlir::memref::SubViewOp>(user);
          Streamed &s = viewsIn[layerLoop(view)];
          s.id = static_cast<int64_t>(id);
          s.name = name;
          s.views.push_back(view);
          s.writes = s.writes || writesThrough(module, view.getResult());
        }
        for (auto &[loop, s] : viewsIn) loops[loop].push_back(s);
      }
    }
    for (auto &[op, streamed] : loops) {
      auto loop = llvm::cast<mlir::scf::ForOp>(op);
      mlir::Block *body = loop.getBody();
      auto firstUse = [&](const Streamed &s) {
        llvm::SmallVector<Value> views;
        for (mlir::memref::SubViewOp v : s.views) views.push_back(v.getResult());
        mlir::Operation *use = firstAccess(body, views);
        return use ? use : body->getTerminator();
      };
      std::stable_sort(streamed.begin(), streamed.end(), [&](const Streamed &x, const Streamed &y) {
        mlir::Operation *a = firstUse(x), *c = firstUse(y);
        return a != c && a->isBeforeInBlock(c);
      });
      streamLoop(module, loop, streamed, sync, moved);
    }
    int64_t hostBytes = 0;
    for (const rt::OffloadSpec &s : specs) hostBytes += s.layers * s.layerBytes;
    mlir::Builder b(&getContext());
    module->setAttr("step.offloaded",
                    b.getDictionaryAttr({b.getNamedAttr("buffers", b.getI64IntegerAttr(specs.size())),
                                         b.getNamedAttr("host_bytes", b.getI64IntegerAttr(hostBytes)),
                                         b.getNamedAttr("fetch_bytes", b.getI64IntegerAttr(moved.fetchBytes)),
                                         b.getNamedAttr("store_bytes", b.getI64IntegerAttr(moved.storeBytes))}));
    if (!text) return;
    d.info.offload = specs;
    d.info.offloadMode = specs.empty() ? "" : mode.str();
    d.info.offloadFetchBytes = moved.fetchBytes;
    d.info.offloadStoreBytes = moved.storeBytes;
    d.info.offloadHostBytes = hostBytes;
    d.info.offloadSummary = chosenBy ? chosenBy.str() : "";
    if (!summary.empty())
      d.info.offloadSummary += (d.info.offloadSummary.empty() ? "" : "; ") + summary;
    if (moved.passes > 0) {
      // What the passes of their own cost (the "say in the plan what it costs").
      char line[256];
      std::snprintf(line, sizeof line,
                    "%lld streamed %s (whole-buffer work that needs every layer's "
                    "gradient first: a global-norm clip's update, SAM, AGC) %s %.1f MiB of each "
                    "step's transfers",
                    static_cast<long long>(moved.passes),
                    moved.passes == 1 ? "pass of its own" : "passes of their own",
                    moved.passes == 1 ? "moves" : "move",
                    static_cast<double>(moved.passBytes) / 1048576.0);
      d.info.offloadSummary += (d.info.offloadSummary.empty() ? "" : "; ") + std::string(line);
    }
    module->setAttr("step.program", mlir::StringAttr::get(&getContext(), rt::writeProgramDescription(d)));
  }
};

}  // namespace

}  // namespace stepc::codegen
