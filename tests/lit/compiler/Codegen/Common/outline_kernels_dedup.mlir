// Structurally identical kernels share one function. (Regression test: the pass once keyed
// kernels by text printed in the module's scope, where two identical kernels never print the
// same; it now prints them in local scope.)
//
// RUN: %stepc-opt %s --step-outline-kernels | FileCheck %s

// Two identical matmuls on the same buffer types: one kernel, called twice.
// CHECK: module attributes {step.kernels = {calls = 2 : i64, distinct = 1 : i64}}
// CHECK: func.func private @kernel_0_matmul(
// CHECK-NOT: func.func private @kernel_1
// CHECK: call @kernel_0_matmul(%arg0, %arg1, %arg2)
// CHECK: call @kernel_0_matmul(%arg1, %arg0, %arg2)
func.func @train_step(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  linalg.matmul ins(%b, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  return
}
