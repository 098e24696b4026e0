//===- Passes.td - the GPU emulator's pass (a testing target) -*- tablegen -*-===//
//
// Declarations only; each pass lives in its own file (named after it) with a header comment
// saying what it does and why, and has its lit test under tests/lit/compiler/Codegen/Emulation/.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_CODEGEN_EMULATION_PASSES_TD
#define STEPC_CODEGEN_EMULATION_PASSES_TD

include "mlir/Pass/PassBase.td"

def EmulateGpu : Pass<"step-emulate-gpu", "mlir::ModuleOp"> {
  let summary = "Runs the CUDA mapping on the CPU: launches become loops over blocks and threads";
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect"];
}

#endif  // STEPC_CODEGEN_EMULATION_PASSES_TD
