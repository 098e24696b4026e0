// Tests --step-collectives-to-runtime: a bufferized linalg.copy marked step.collective =
// "all_reduce_sum" (StepToLinalg's lowering of step.all_reduce) becomes one call of the
// runtime's tree all-reduce, numbered in program order; unmarked copies stay copies.
//
// RUN: %stepc-opt %s --step-collectives-to-runtime | FileCheck %s
// RUN: %stepc-opt %s --step-collectives-to-runtime | %stepc-opt -o /dev/null

// CHECK-LABEL: func.func @grads
// CHECK-SAME: (%[[A:.+]]: memref<4x8xf32>, %[[B:.+]]: memref<4x8xf32>, %[[L:.+]]: memref<f32>, %[[M:.+]]: memref<f32>, %[[C:.+]]: memref<4x8xf32>)
// CHECK: %[[VA:.+]] = memref.cast %[[A]] : memref<4x8xf32> to memref<*xf32>
// CHECK: %[[VB:.+]] = memref.cast %[[B]] : memref<4x8xf32> to memref<*xf32>
// CHECK: %[[ID0:.+]] = arith.constant 0 : i64
// CHECK: call @stepc_all_reduce_sum_f32(%[[VA]], %[[VB]], %[[ID0]])
// CHECK: %[[VL:.+]] = memref.cast %[[L]] : memref<f32> to memref<*xf32>
// CHECK: %[[ID1:.+]] = arith.constant 1 : i64
// CHECK: call @stepc_all_reduce_sum_f32(%[[VL]], %{{.+}}, %[[ID1]])
// CHECK: linalg.copy ins(%[[A]] : memref<4x8xf32>) outs(%[[C]] : memref<4x8xf32>)
// CHECK-NOT: step.collective
// CHECK: func.func private @stepc_all_reduce_sum_f32(memref<*xf32>, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
func.func @grads(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %l: memref<f32>, %m: memref<f32>, %c: memref<4x8xf32>) {
  linalg.copy {step.collective = "all_reduce_sum"} ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>)
  linalg.copy {step.collective = "all_reduce_sum"} ins(%l : memref<f32>) outs(%m : memref<f32>)
  linalg.copy ins(%a : memref<4x8xf32>) outs(%c : memref<4x8xf32>)
  return
}

