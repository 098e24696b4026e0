// Tests --step-offload-buffers' errors: a step.offload that is not {buffers, mode} with a mode
// it knows fails with the reason, and a buffer no step function takes is not streamed (nothing
// is rewritten, no transfer is planned).
//
// RUN: split-file %s %t
// RUN: not %stepc-opt --step-offload-buffers %t/mode.mlir 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not %stepc-opt --step-offload-buffers %t/names.mlir 2>&1 | FileCheck %s --check-prefix=NAMES
// RUN: %stepc-opt --step-offload-buffers %t/absent.mlir | FileCheck %s --check-prefix=ABSENT

// MODE: error: step.offload expects {buffers = [names], mode = "planned" or "sync"}
// NAMES: error: step.offload's buffers must be strings
// ABSENT: step.offloaded = {buffers = 0 : i64, fetch_bytes = 0 : i64, host_bytes = 0 : i64, store_bytes = 0 : i64}
// ABSENT-NOT: stepc_offload

//--- mode.mlir
module attributes {step.offload = {buffers = ["param:w"], mode = "eager"}} {
  func.func @train_step(%w: memref<4x8xf32> {step.name = "w", step.role = "param"}) {
    return
  }
}

//--- names.mlir
module attributes {step.offload = {buffers = [3], mode = "planned"}} {
  func.func @train_step(%w: memref<4x8xf32> {step.name = "w", step.role = "param"}) {
    return
  }
}

//--- absent.mlir
module attributes {step.offload = {buffers = ["param:nothing"], mode = "planned"}} {
  func.func @train_step(%w: memref<4x8xf32> {step.name = "w", step.role = "param"}) {
    return
  }
}
