// Tests --step-collectives-to-runtime{defer-gathers}: in a step whose all-reduces are started
// (the reductions overlap the backward), a gather into a parameter argument itself becomes
// stepc_all_gather_start_f32(placed, whole, rounds, last, id); the last such gather of the
// function says so (last = 1). A gather into anything else (the norms' shares, a buffer that
// is not a parameter) stays the synchronous call, and without defer-gathers, or in a step
// whose reductions run after the backward, nothing is deferred. A bare module has no program
// description, so rounds is 1 (the executable tests check a stacked parameter's rounds).
//
// RUN: %stepc-opt %s -split-input-file --step-collectives-to-runtime=defer-gathers | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-collectives-to-runtime | FileCheck %s --check-prefix=OFF
// RUN: %stepc-opt %s -split-input-file --step-collectives-to-runtime=defer-gathers | %stepc-opt -split-input-file -o /dev/null

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[P:[^:]+]]: memref<8x3xf32> {step.role = "param"}, %[[Q:[^:]+]]: memref<4xf32> {step.role = "param"}, %[[S:[^:]+]]: memref<f32>, %[[T:[^:]+]]: memref<f32>, %[[U:[^:]+]]: memref<4xf32>, %[[W:[^:]+]]: memref<8x3xf32> {step.role = "param"}, %[[N:[^:]+]]: memref<2xf32>, %[[O:[^:]+]]: memref<4xf32>)
// CHECK: call @stepc_all_reduce_start_f32
// CHECK: call @stepc_all_reduce_wait_f32
// CHECK: call @stepc_all_gather_f32({{.*}}, %{{.+}}, %{{.+}})
// CHECK: %[[VW:.+]] = memref.cast %[[W]] : memref<8x3xf32> to memref<*xf32>
// CHECK: %[[ID3:.+]] = arith.constant 3 : i64
// CHECK: %[[R3:.+]] = arith.constant 1 : i64
// CHECK: %[[L3:.+]] = arith.constant 0 : i64
// CHECK: call @stepc_all_gather_start_f32(%{{.+}}, %[[VW]], %[[R3]], %[[L3]], %[[ID3]])
// CHECK: call @stepc_all_gather_f32(
// CHECK: %[[VQ:.+]] = memref.cast %[[Q]] : memref<4xf32> to memref<*xf32>
// CHECK: %[[ID5:.+]] = arith.constant 5 : i64
// CHECK: %[[R5:.+]] = arith.constant 1 : i64
// CHECK: %[[L5:.+]] = arith.constant 1 : i64
// CHECK: call @stepc_all_gather_start_f32(%{{.+}}, %[[VQ]], %[[R5]], %[[L5]], %[[ID5]])
// CHECK: func.func private @stepc_all_gather_start_f32(memref<*xf32>, memref<*xf32>, i64, i64, i64) attributes {llvm.emit_c_interface}
// OFF-NOT: stepc_all_gather_start_f32
func.func @train_step(%p: memref<8x3xf32> {step.role = "param"}, %q: memref<4xf32> {step.role = "param"},
                      %s: memref<f32>, %t: memref<f32>, %u: memref<4xf32>,
                      %w: memref<8x3xf32> {step.role = "param"}, %n: memref<2xf32>, %o: memref<4xf32>) {
  linalg.copy {step.collective = "all_reduce_start"} ins(%s : memref<f32>) outs(%t : memref<f32>)
  linalg.copy {step.collective = "all_reduce_wait"} ins(%t : memref<f32>) outs(%s : memref<f32>)
  // the norms' shares: needed in this step
  linalg.copy {step.collective = "all_gather", step.norm_shares} ins(%n : memref<2xf32>) outs(%n : memref<2xf32>)
  linalg.copy {step.collective = "all_gather"} ins(%p : memref<8x3xf32>) outs(%w : memref<8x3xf32>)
  // not a parameter
  linalg.copy {step.collective = "all_gather"} ins(%u : memref<4xf32>) outs(%o : memref<4xf32>)
  linalg.copy {step.collective = "all_gather"} ins(%u : memref<4xf32>) outs(%q : memref<4xf32>)
  return
}

// -----

// The reductions after the backward (no started all-reduce): every gather stays synchronous.
// CHECK-LABEL: func.func @late
// CHECK-NOT: stepc_all_gather_start_f32
// CHECK: call @stepc_all_gather_f32
func.func @late(%s: memref<f32>, %t: memref<f32>, %u: memref<4xf32>, %q: memref<4xf32> {step.role = "param"}) {
  linalg.copy {step.collective = "all_reduce_sum"} ins(%s : memref<f32>) outs(%t : memref<f32>)
  linalg.copy {step.collective = "all_gather"} ins(%u : memref<4xf32>) outs(%q : memref<4xf32>)
  return
}
