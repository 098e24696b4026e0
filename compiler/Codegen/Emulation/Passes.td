//===- Passes.td - the GPU emulator's passes (a testing target) -*- tablegen -*-===//
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

def CheckOffloadAccess : Pass<"step-check-offload-access", "mlir::ModuleOp"> {
  let summary = "Checks every command of an offloading plan against the transfers in flight "
                "(a runtime call before each launch, runtime call and copy, per memref operand)";
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif  // STEPC_CODEGEN_EMULATION_PASSES_TD
