//===- Plan.cpp - the host plan of a bufferized step program --------------===//
#include "compiler/Codegen/Common/Plan.h"

#include <cstring>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Format.h"

namespace stepc::codegen {
namespace {

class PlanPrinter {
 public:
  PlanPrinter(mlir::func::FuncOp fn, llvm::raw_ostream &os, bool nccl)
      : fn_(fn), os_(os), nccl_(nccl) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      mlir::DictionaryAttr attrs = fn.getArgAttrDict(i);
      std::string name = "arg" + std::to_string(i);
      if (attrs) {
        auto role = llvm::dyn_cast_or_null<mlir::StringAttr>(attrs.get("step.role"));
        auto n = llvm::dyn_cast_or_null<mlir::StringAttr>(attrs.get("step.name"));
        auto slot = llvm::dyn_cast_or_null<mlir::StringAttr>(attrs.get("step.slot"));
        if (role && n)
          name = role.getValue().str() + ":" + (slot ? slot.getValue().str() + "/" : "") +
                 n.getValue().str();
      }
      names_[fn.getArgument(i)] = name;
    }
  }

  void print() {
    os_ << "plan @" << fn_.getSymName() << "\n";
    block(fn_.getBody().front(), 1);
  }

 private:
  std::string describe(mlir::Value v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    mlir::Operation *def = v.getDefiningOp();
    if (auto view = llvm::dyn_cast_or_null<mlir::memref::ViewOp>(def)) {
      llvm::APInt offset;
      std::string at = mlir::matchPattern(view.getByteShift(), mlir::m_ConstantInt(&offset))
                           ? std::to_string(offset.getSExtValue())
                           : "?";
      return "arena+" + at;
    }
    if (def && llvm::isa<mlir::memref::SubViewOp, mlir::memref::CollapseShapeOp,
                         mlir::memref::ExpandShapeOp, mlir::memref::CastOp,
                         mlir::memref::ReinterpretCastOp>(def))
      return "view(" + describe(def->getOperand(0)) + ")";
    if (llvm::isa_and_nonnull<mlir::memref::AllocOp>(def)) return "heap";
    if (llvm::isa<mlir::BlockArgument>(v)) return "loop";
    std::string text;
    llvm::raw_string_ostream os(text);
    v.printAsOperand(os, mlir::OpPrintingFlags());
    return text;
  }

  std::string operands(mlir::Operation *op) {
    std::string out;
    for (mlir::Value v : op->getOperands()) {
      if (!llvm::isa<mlir::BaseMemRefType>(v.getType())) continue;
      if (!out.empty()) out += ", ";
      std::string type;
      llvm::raw_string_ostream os(type);
      // The GEMM interface takes dynamically shaped views, the runtime's unranked ones: show
      // the shape cast away.
      mlir::Value shaped = v;
      while (auto cast = shaped.getDefiningOp<mlir::memref::CastOp>()) shaped = cast.getSource();
      auto m = llvm::cast<mlir::MemRefType>(shaped.getType());
      llvm::interleave(m.getShape(), os, "x");
      os << "x" << m.getElementType();
      out += describe(v) + " " + type;
    }
    return out;
  }

  // "  ~ 1.50 MB, 2.10 MFLOP, 2048 blocks, 4.1 us" from a CUDA plan's step.estimate.
  static std::string estimate(mlir::Operation &op) {
    auto e = op.getAttrOfType<mlir::DictionaryAttr>("step.estimate");
    if (!e) return "";
    auto number = [&](llvm::StringRef key) {
      auto f = llvm::dyn_cast_or_null<mlir::FloatAttr>(e.get(key));
      return f ? f.getValueAsDouble() : 0.0;
    };
    auto blocks = llvm::dyn_cast_or_null<mlir::IntegerAttr>(e.get("blocks"));
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::format("  ~ %.3g MB, %.3g MFLOP, ", number("bytes") / 1e6, number("flops") / 1e6);
    if (blocks && blocks.getInt() > 0) os << blocks.getInt() << " blocks, ";
    os << llvm::format("%.3g us", number("seconds") * 1e6);
    return text;
  }

  void block(mlir::Block &b, int depth) {
    std::string indent(2 * depth, ' ');
    for (mlir::Operation &op : b) {
      if (auto call = llvm::dyn_cast<mlir::func::CallOp>(op)) {
        if (call.getCallee().starts_with("stepc_profile_")) continue;
        // --data-parallel's commands (runtime/hal/cpu/Collectives.h).
        if (call.getCallee().starts_with("stepc_micro_batch_")) continue;  // the loop says it
        if (call.getCallee() == "stepc_rank") continue;  // the gather and the slices say it
        if (call.getCallee() == "stepc_all_gather_wait_f32") {
          os_ << indent << "wait for the gathers of " << operands(call) << "\n";
          continue;
        }
        if (call.getCallee().starts_with("stepc_all_gather")) {
          bool later = call.getCallee() == "stepc_all_gather_start_f32";
          llvm::APInt id, rounds;
          bool known = mlir::matchPattern(call.getOperand(later ? 4 : 2), mlir::m_ConstantInt(&id));
          os_ << indent << "all-gather " << (known ? std::to_string(id.getSExtValue()) : "?");
          if (later && mlir::matchPattern(call.getOperand(2), mlir::m_ConstantInt(&rounds)))
            os_ << " starts (every rank's block of the rows, --shard-optimizer, in the "
                   "background"
                << (rounds.getSExtValue() > 1
                        ? ", " + std::to_string(rounds.getSExtValue()) + " layers one by one"
                        : std::string())
                << "; waited for where the next step uses it) ";
          else
            os_ << " (every rank's block of the rows, --shard-optimizer) ";
          os_ << operands(call) << "\n";
          continue;
        }
        if (call.getCallee().starts_with("stepc_reduce_scatter_start")) {
          llvm::APInt id;
          bool known = mlir::matchPattern(call.getOperand(4), mlir::m_ConstantInt(&id));
          os_ << indent << "reduce-scatter " << (known ? std::to_string(id.getSExtValue()) : "?")
              << " starts (each row's sum over the ranks to the rank that owns it, "
              << (nccl_ ? "NCCL's, on the collectives' stream) " : "fixed tree, in the background) ")
              << operands(call) << "\n";
          continue;
        }
        if (call.getCallee().starts_with("stepc_all_reduce")) {
          llvm::APInt id;
          bool known = mlir::matchPattern(call.getOperand(2), mlir::m_ConstantInt(&id));
          llvm::StringRef what =
              call.getCallee().starts_with("stepc_all_reduce_start")
                  ? (nccl_ ? " starts (sum over the ranks, NCCL's, on the collectives' stream) "
                           : " starts (sum over the ranks, fixed tree, in the background) ")
              : call.getCallee().starts_with("stepc_all_reduce_wait")
                  ? (nccl_ ? " waits for the reductions started in its input (the step's "
                             "stream waits for the collectives' stream) "
                           : " waits for the reductions started in its input ")
              : nccl_ ? " (sum over the ranks, NCCL's) "
                      : " (sum over the ranks, fixed tree) ";
          os_ << indent << "all-reduce " << (known ? std::to_string(id.getSExtValue()) : "?")
              << what << operands(call) << "\n";
          continue;
        }
        // --device-memory's transfers (runtime/hal/cpu/Offload.h).
        if (call.getCallee().starts_with("stepc_offload_")) {
          auto buffer = call->getAttrOfType<mlir::StringAttr>("step.buffer");
          auto layer = call->getAttrOfType<mlir::StringAttr>("step.layer");
          llvm::StringRef what = call.getCallee().drop_front(strlen("stepc_offload_"));
          llvm::StringRef verb = what == "fetch"   ? "prefetch"
                                 : what == "store" ? "write-back"
                                 : what == "wait"  ? "wait for"
                                                   : "wait for all transfers after";
          os_ << indent << verb << " " << (buffer ? buffer.getValue() : "?") << ", "
              << (layer ? layer.getValue() : "?");
          if (what == "fetch" || what == "store")
            os_ << (what == "fetch" ? " -> " : " <- ") << operands(call);
          os_ << "\n";
          continue;
        }
        bool gemm = call.getCallee().starts_with("stepc_");
        os_ << indent << (gemm ? "gemm " : "kernel ") << call.getCallee() << "(" << operands(call)
            << ")" << estimate(op) << "\n";
      } else if (auto copy = llvm::dyn_cast<mlir::memref::CopyOp>(op)) {
        os_ << indent << "copy " << operands(copy) << estimate(op) << "\n";
      } else if (auto loop = llvm::dyn_cast<mlir::scf::ForOp>(op)) {
        llvm::APInt lo, hi;
        bool known = mlir::matchPattern(loop.getLowerBound(), mlir::m_ConstantInt(&lo)) &&
                     mlir::matchPattern(loop.getUpperBound(), mlir::m_ConstantInt(&hi));
        auto begin = loop.getLowerBound().getDefiningOp<mlir::arith::IndexCastOp>();
        auto split = begin ? begin.getIn().getDefiningOp<mlir::func::CallOp>() : nullptr;
        // The rank's last micro-batch in a loop of its own: [end - 1, end).
        auto sub = loop.getLowerBound().getDefiningOp<mlir::arith::SubIOp>();
        auto endCast = sub ? sub.getLhs().getDefiningOp<mlir::arith::IndexCastOp>() : nullptr;
        auto end = endCast ? endCast.getIn().getDefiningOp<mlir::func::CallOp>() : nullptr;
        bool lastOne = end && end.getCallee() == "stepc_micro_batch_end" &&
                       sub.getLhs() == loop.getUpperBound();
        if (split && split.getCallee() == "stepc_micro_batch_begin" &&
            mlir::matchPattern(split.getOperand(0), mlir::m_ConstantInt(&hi)))
          os_ << indent << "loop " << hi.getSExtValue() << " micro-batches, this rank's block of them"
              << (loop.getUpperBound().getDefiningOp<mlir::arith::SubIOp>() ? " but its last" : "")
              << " (data-parallel)\n";
        else if (lastOne && mlir::matchPattern(end.getOperand(0), mlir::m_ConstantInt(&hi)))
          os_ << indent << "loop 1: this rank's last micro-batch of " << hi.getSExtValue()
              << " (data-parallel; its backward starts the reductions)\n";
        else
          os_ << indent << "loop "
              << (known ? std::to_string((hi - lo).getSExtValue()) : std::string("?"))
              << " iterations"
              << (loop->hasAttr("step.streamed_pass")
                      ? " (a streamed pass of its own: whole-buffer work that could not join a "
                        "layer loop of the forward or backward)"
                      : "")
              << "\n";
        block(*loop.getBody(), depth + 1);
      } else {
        for (mlir::Region &r : op.getRegions())
          for (mlir::Block &inner : r) block(inner, depth + 1);
      }
    }
  }

  mlir::func::FuncOp fn_;
  llvm::raw_ostream &os_;
  bool nccl_;
  llvm::DenseMap<mlir::Value, std::string> names_;
};

}  // namespace

mlir::LogicalResult printPlan(mlir::ModuleOp module, llvm::raw_ostream &os, bool nccl) {
  bool any = false;
  if (auto memory = module->getAttrOfType<mlir::DictionaryAttr>("step.memory"))
    os << "// memory: " << memory << "\n";
  if (auto budget = module->getAttrOfType<mlir::StringAttr>("step.memory_budget"))
    os << "// memory budget: " << budget.getValue() << "\n";
  if (auto offloaded = module->getAttrOfType<mlir::DictionaryAttr>("step.offloaded"))
    os << "// offload: " << offloaded << "\n";
  if (auto summary = module->getAttrOfType<mlir::StringAttr>("step.offload_summary"))
    os << "// device memory: " << summary.getValue() << "\n";
  if (auto kernels = module->getAttrOfType<mlir::DictionaryAttr>("step.kernels"))
    os << "// kernels: " << kernels << "\n";
  if (auto prediction = module->getAttrOfType<mlir::DictionaryAttr>("step.prediction")) {
    auto number = [&](llvm::StringRef key) {
      auto f = llvm::dyn_cast_or_null<mlir::FloatAttr>(prediction.get(key));
      return f ? f.getValueAsDouble() : 0.0;
    };
    auto device = llvm::dyn_cast_or_null<mlir::StringAttr>(prediction.get("device"));
    auto launches = llvm::dyn_cast_or_null<mlir::IntegerAttr>(prediction.get("launches"));
    os << llvm::format("// predicted @train_step on %s (roofline at data-sheet peaks): %.3f ms = "
                       "%.3f ms compute-bound + %.3f ms memory-bound (of which GEMMs %.3f ms, kernels "
                       "bound by a chain of dependent steps %.3f ms) + "
                       "%.3f ms for %lld launches (nodes of the step's CUDA graph); %.3g GB moved, %.3g GFLOP\n",
                       device ? device.getValue().str().c_str() : "?", number("seconds") * 1e3,
                       number("compute_bound_seconds") * 1e3, number("memory_bound_seconds") * 1e3,
                       number("gemm_seconds") * 1e3, number("serial_seconds") * 1e3,
                       number("launch_seconds") * 1e3,
                       static_cast<long long>(launches ? launches.getInt() : 0),
                       number("bytes") / 1e9, number("flops") / 1e9);
  }
  if (auto offload = module->getAttrOfType<mlir::DictionaryAttr>("step.offload_prediction")) {
    auto number = [&](llvm::StringRef key) {
      auto f = llvm::dyn_cast_or_null<mlir::FloatAttr>(offload.get(key));
      return f ? f.getValueAsDouble() : 0.0;
    };
    os << llvm::format("// predicted offload: transfers %.3f ms over the host link at %.1f GB/s, "
                       "%.3f ms of them exposed (the compute stream waits)\n",
                       number("transfer_seconds") * 1e3, number("link_bytes_per_second") / 1e9,
                       number("exposed_seconds") * 1e3);
  }
  for (auto fn : module.getOps<mlir::func::FuncOp>()) {
    if (fn.isExternal() || fn->hasAttr("step.kernel")) continue;
    PlanPrinter(fn, os, nccl).print();
    any = true;
  }
  if (!any) return module.emitError("no step function to print a plan for (the `buffers` stage)");
  return mlir::success();
}

}  // namespace stepc::codegen
