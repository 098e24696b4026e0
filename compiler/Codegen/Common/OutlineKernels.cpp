//===- OutlineKernels.cpp - --step-outline-kernels ------------------------===//
//
// After bufferization, every linalg op left in a step function is one kernel: a fused group of
// elementwise work and reductions (`kernels` stage), a contraction, a convolution or a copy.
// This moves each into its own private function `@kernel_N_<op>` (attribute `step.kernel`)
// and calls it, so the step functions keep only the host plan: loops, allocations, scalar
// bookkeeping and kernel calls, in order.
//
// Why: it is the shape the runtime and the CUDA backend need (a kernel is a unit that is
// launched, timed and profiled), and LLVM optimises many small functions in a fraction of the
// time one huge function takes (IndVarSimplify and unrolling are superlinear in function
// size). Kernels that are structurally identical (the same op on the same buffer types, e.g.
// a layer's forward recomputed in the backward) share one function. The kernel calls are
// counted into the description's kernelCount. Every kernel call and library GEMM is bracketed
// by stepc_profile_enter/exit(id), the per-kernel profile (runtime/hal/Profile.h, STEPC_PROFILE=1);
// the ids' names go into the description.
//
//===----------------------------------------------------------------------===//
#include <map>

#include "compiler/Codegen/Common/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "runtime/formats/ProgramDescription.h"

namespace stepc::codegen {

#define GEN_PASS_DEF_OUTLINEKERNELS
#include "compiler/Codegen/Common/Passes.h.inc"

namespace {

// The bytes of the memrefs among `values` (static shapes), each once: what a call reads and
// writes at least, for the profile's bytes/s.
double bytesOf(llvm::ArrayRef<mlir::Value> values) {
  double bytes = 0;
  for (mlir::Value v : values)
    if (auto type = llvm::dyn_cast<mlir::MemRefType>(v.getType()); type && type.hasStaticShape())
      bytes += static_cast<double>(type.getNumElements()) *
               static_cast<double>(type.getElementTypeBitWidth()) / 8;
  return bytes;
}

// "[16x256x32xf32, 32x96xf32]": the buffers a kernel works on.
std::string shapes(llvm::ArrayRef<mlir::Value> values) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "[";
  bool first = true;
  for (mlir::Value v : values) {
    auto type = llvm::dyn_cast<mlir::MemRefType>(v.getType());
    if (!type) continue;
    os << (first ? "" : ", ");
    first = false;
    for (int64_t d : type.getShape()) os << (d < 0 ? std::string("?") : std::to_string(d)) << "x";
    os << type.getElementType();
  }
  os << "]";
  return out;
}

// Brackets `call` with stepc_profile_enter/exit(id) (runtime/hal/Profile.h).
void profile(mlir::ModuleOp module, mlir::func::CallOp call, int64_t id) {
  mlir::OpBuilder b(module.getContext());
  auto declare = [&](llvm::StringRef name) {
    if (auto fn = module.lookupSymbol<mlir::func::FuncOp>(name)) return fn;
    b.setInsertionPointToStart(module.getBody());
    auto fn = b.create<mlir::func::FuncOp>(module.getLoc(), name,
                                           b.getFunctionType({b.getI64Type()}, {}));
    fn.setPrivate();
    return fn;
  };
  mlir::func::FuncOp enter = declare("stepc_profile_enter"), exit = declare("stepc_profile_exit");
  b.setInsertionPoint(call);
  mlir::Value idValue = b.create<mlir::arith::ConstantIntOp>(call.getLoc(), id, 64);
  b.create<mlir::func::CallOp>(call.getLoc(), enter, mlir::ValueRange{idValue});
  b.setInsertionPointAfter(call);
  b.create<mlir::func::CallOp>(call.getLoc(), exit, mlir::ValueRange{idValue});
}

// A cumsum's or an embedding gradient's bufferized loop (`step.scan`, ScanPatterns.cpp) is
// outlined whole: its steps of small kernels (add the slice to the running sum and copy it
// into the result; add a gradient row into the row of its id) become one kernel, with the
// loop inside; so are the routing loops (RoutingPatterns.cpp), nests of scalar loads, selects
// and stores. A loop qualifies if it has no results and holds only views, loads and stores,
// scalar arithmetic, inner scf.for loops, scf.if branches and linalg ops (nothing that
// allocates or calls out).
bool scanBodyQualifies(mlir::Block &body) {
  for (mlir::Operation &inner : body.without_terminator()) {
    if (llvm::isa<mlir::linalg::LinalgOp>(inner)) {
      if (!llvm::cast<mlir::linalg::LinalgOp>(inner).hasPureBufferSemantics()) return false;
      continue;
    }
    if (auto nested = llvm::dyn_cast<mlir::scf::ForOp>(inner)) {
      if (!scanBodyQualifies(*nested.getBody())) return false;
      continue;
    }
    // A step done once, at the loop's start (route_tokens' fills): a branch with no results.
    if (auto branch = llvm::dyn_cast<mlir::scf::IfOp>(inner)) {
      if (branch.getNumResults() != 0 || !scanBodyQualifies(*branch.thenBlock()) ||
          (branch.elseBlock() && !scanBodyQualifies(*branch.elseBlock())))
        return false;
      continue;
    }
    if (!llvm::isa<mlir::memref::SubViewOp, mlir::memref::CollapseShapeOp,
                   mlir::memref::ExpandShapeOp, mlir::memref::CastOp, mlir::memref::LoadOp,
                   mlir::memref::StoreOp>(inner) &&
        !llvm::isa<mlir::arith::ArithDialect>(inner.getDialect()))
      return false;
  }
  return true;
}

bool isScanKernel(mlir::Operation *op) {
  auto loop = llvm::dyn_cast<mlir::scf::ForOp>(op);
  if (!loop || !loop->hasAttr("step.scan") || loop.getNumResults() != 0) return false;
  return scanBodyQualifies(*loop.getBody());
}

struct OutlineKernelsPass : impl::OutlineKernelsBase<OutlineKernelsPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::MLIRContext *ctx = &getContext();
    std::map<std::string, mlir::func::FuncOp> byBody;  // structural key -> kernel
    std::vector<std::string> profileNames;              // by profile id
    std::vector<double> profileBytes, profileFlops;     // per call, by profile id
    llvm::DenseMap<mlir::Operation *, int64_t> profileId;  // kernel function -> id
    int64_t calls = 0;
    int next = 0;
    for (auto host : llvm::to_vector(module.getOps<mlir::func::FuncOp>())) {
      if (host->hasAttr("step.kernel") || host.isExternal()) continue;
      // The units to outline: scan loops whole, and every other linalg op.
      llvm::SmallVector<mlir::Operation *> ops;
      host.walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation *op) {
        if (isScanKernel(op)) {
          ops.push_back(op);
          return mlir::WalkResult::skip();
        }
        if (llvm::isa<mlir::linalg::LinalgOp>(op)) {
          ops.push_back(op);
          return mlir::WalkResult::skip();
        }
        return mlir::WalkResult::advance();
      });
      for (mlir::Operation *op : ops) {
        auto linalgOp = llvm::dyn_cast<mlir::linalg::LinalgOp>(op);
        if (linalgOp && (linalgOp.hasPureTensorSemantics() || !op->getResults().empty())) {
          op->emitError("expected a bufferized linalg op (run after one-shot-bufferize)");
          return signalPassFailure();
        }
        // Arguments: a linalg op's operands, then values its body uses from above (constants
        // are cloned into the kernel instead; a scan loop's bounds are constants).
        llvm::SetVector<mlir::Value> captured;
        mlir::getUsedValuesDefinedAbove(op->getRegions(), captured);
        llvm::SmallVector<mlir::Value> args;
        if (linalgOp) args.append(op->getOperands().begin(), op->getOperands().end());
        else captured.insert(op->getOperands().begin(), op->getOperands().end());
        llvm::SmallVector<mlir::Operation *> constants;
        for (mlir::Value v : captured) {
          mlir::Operation *def = v.getDefiningOp();
          if (def && def->hasTrait<mlir::OpTrait::ConstantLike>()) {
            if (!llvm::is_contained(constants, def)) constants.push_back(def);
          } else if (!llvm::is_contained(args, v)) {
            args.push_back(v);
          }
        }
        mlir::OpBuilder b(ctx);
        b.setInsertionPoint(host);
        auto type = b.getFunctionType(mlir::ValueRange(args).getTypes(), {});
        auto kernel = b.create<mlir::func::FuncOp>(op->getLoc(), "kernel", type);
        mlir::Block *entry = kernel.addEntryBlock();
        b.setInsertionPointToStart(entry);
        mlir::IRMapping map;
        for (auto [from, to] : llvm::zip(args, entry->getArguments())) map.map(from, to);
        for (mlir::Operation *c : constants) b.clone(*c, map);
        b.clone(*op, map);
        b.create<mlir::func::ReturnOp>(op->getLoc());
        // The key: the kernel's text without its name or locations.
        std::string key;
        {
          llvm::raw_string_ostream os(key);
          // Local scope: the text must not depend on the rest of the module (alias numbering).
          kernel.print(os, mlir::OpPrintingFlags().printGenericOpForm().useLocalScope());
        }
        mlir::func::FuncOp target;
        auto it = byBody.find(key);
        if (it != byBody.end()) {
          target = it->second;
          kernel.erase();
        } else {
          std::string name = "kernel_" + std::to_string(next++) + "_" +
                             (linalgOp ? op->getName().stripDialect().str() : "scan");
          kernel.setSymName(name);
          kernel.setPrivate();
          kernel->setAttr("step.kernel", mlir::UnitAttr::get(ctx));
          // Kernels stay separate functions in LLVM too: inlined, they would rebuild the one
          // huge function this pass exists to avoid.
          kernel->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
          kernel->setAttr("llvm.linkage",
                          mlir::LLVM::LinkageAttr::get(ctx, mlir::LLVM::Linkage::Internal));
          byBody.emplace(key, kernel);
          target = kernel;
        }
        b.setInsertionPoint(op);
        auto call = b.create<mlir::func::CallOp>(op->getLoc(), target, args);
        op->erase();
        ++calls;
        auto [it2, fresh] = profileId.try_emplace(target, profileNames.size());
        if (fresh) {
          profileNames.push_back(target.getSymName().str() + " " + shapes(args));
          profileBytes.push_back(bytesOf(args));
          profileFlops.push_back(0);
        }
        profile(module, call, it2->second);
      }
      // Library calls (GEMMs) are profiled per call site, named by their shapes.
      host.walk([&](mlir::func::CallOp call) {
        bool gather = call.getCallee().starts_with("stepc_all_gather");
        bool scatter = call.getCallee().starts_with("stepc_reduce_scatter_start");
        if (call.getCallee().starts_with("stepc_all_reduce") || gather || scatter) {
          // CollectivesToRuntime's calls
          mlir::Value in = call.getOperand(gather ? 1 : 0);
          if (auto cast = in.getDefiningOp<mlir::memref::CastOp>()) in = cast.getSource();
          profile(module, call, profileNames.size());
          llvm::StringRef callee = call.getCallee();
          std::string name = gather    ? "all_gather "
                             : scatter ? "reduce_scatter_start "
                             : callee.starts_with("stepc_all_reduce_start") ? "all_reduce_start "
                             : callee.starts_with("stepc_all_reduce_wait")  ? "all_reduce_wait "
                                                                            : "all_reduce ";
          profileNames.push_back(name + shapes({in}) + " @" +
                                 std::to_string(profileNames.size()));
          profileBytes.push_back(bytesOf({in}));
          profileFlops.push_back(0);
          return;
        }
        if (!call.getCallee().starts_with("stepc_matmul") &&
            !call.getCallee().starts_with("stepc_batch_matmul"))
          return;
        llvm::SmallVector<mlir::Value> views;
        for (mlir::Value v : call.getOperands().take_front(3)) {
          if (auto cast = v.getDefiningOp<mlir::memref::CastOp>()) v = cast.getSource();
          views.push_back(v);
        }
        // Transposes (N/T for A and B), then = (overwrite) or += (accumulate); with an
        // epilogue (--step-gemm-epilogues), "= ... +R +bias".
        bool epilogue = call.getCallee() == "stepc_matmul_epilogue_f32";
        // A gathered by rows (--step-gathered-gemms): its first operand is the rows' source,
        // the ids and the group come before the flags.
        bool gathered = call.getCallee() == "stepc_batch_matmul_gathered_f32";
        // A's rows where the ids are -1 known zero: the ids come before the flags.
        bool masked = call.getCallee() == "stepc_batch_matmul_masked_f32";
        std::string flags;
        auto bits = epilogue || gathered ? call.getOperands().drop_front(5)
                    : masked             ? call.getOperands().drop_front(4)
                                         : call.getOperands().drop_front(3);
        for (auto [i, v] : llvm::enumerate(bits)) {
          llvm::APInt bit;
          bool set = mlir::matchPattern(v, mlir::m_ConstantInt(&bit)) && bit != 0;
          if (i < 2) flags += set ? "T" : "N";
          else if (epilogue)
            flags += bit == 16  ? " =, bias grad of B"
                     : bit == 17 ? " +=, bias grad of B"
                     : bit == 12 ? " = *gelu'(R), bias grad"
                     : bit == 4 ? " = *gelu'(R)"
                     : bit == 2 ? " = gelu(+bias)"
                     : set      ? " = +R +bias"
                                : " = +bias";
          else flags += set ? " +=" : " =";
        }
        profile(module, call, profileNames.size());
        mlir::Value ids;
        if (gathered || masked) {
          ids = call.getOperand(3);
          if (auto cast = ids.getDefiningOp<mlir::memref::CastOp>()) ids = cast.getSource();
        }
        profileNames.push_back("gemm " + flags + " " + (gathered ? "rows of " : "") +
                               shapes(views) + (gathered ? " by " + shapes({ids})
                                                : masked ? " where " + shapes({ids})
                                                         : "") +
                               " @" + std::to_string(profileNames.size()));
        // 2·M·N·K: the result's elements (batch included) times the reduction A holds (A
        // gathered: its row width, or transposed the slots the ids give each batch).
        auto a = llvm::dyn_cast<mlir::MemRefType>(views[0].getType());
        auto c = llvm::dyn_cast<mlir::MemRefType>(views[2].getType());
        if (gathered && flags[0] == 'T') a = llvm::dyn_cast<mlir::MemRefType>(ids.getType());
        double flops = 0;
        if (a && c && a.hasStaticShape() && c.hasStaticShape() && a.getRank() >= 2)
          flops = 2 * static_cast<double>(c.getNumElements()) *
                  static_cast<double>(a.getDimSize(
                      a.getRank() - (flags[0] == 'T' && !gathered ? 2 : 1)));
        profileBytes.push_back(bytesOf(views));
        profileFlops.push_back(flops);
      });
    }
    // Kernel calls written in the program text (a call inside a loop counts once).
    if (auto attr = module->getAttrOfType<mlir::StringAttr>("step.program")) {
      rt::ProgramDescription d;
      if (rt::parseProgramDescription(attr.getValue().str(), d).ok()) {
        d.info.kernelCount = calls;
        d.info.kernelNames = profileNames;
        d.info.kernelBytes = profileBytes;
        d.info.kernelFlops = profileFlops;
        module->setAttr("step.program", mlir::StringAttr::get(ctx, rt::writeProgramDescription(d)));
      }
    }
    module->setAttr("step.kernels",
                    mlir::DictionaryAttr::get(
                        ctx, {mlir::NamedAttribute(mlir::StringAttr::get(ctx, "calls"),
                                                   mlir::IntegerAttr::get(mlir::IntegerType::get(ctx, 64), calls)),
                              mlir::NamedAttribute(mlir::StringAttr::get(ctx, "distinct"),
                                                   mlir::IntegerAttr::get(mlir::IntegerType::get(ctx, 64),
                                                                          static_cast<int64_t>(byBody.size())))}));
  }
};

}  // namespace

}  // namespace stepc::codegen
