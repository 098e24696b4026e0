// Numeric tests of --step-lower-to-linalg for reductions: sum, mean and reduce_max over one,
// several, negative and all axes, with and without keepdim, and an integer mean (truncating).
// Lowered, taken to LLVM by upstream mlir-opt, run by mlir-cpu-runner; printed values checked
// against a float64 reference.
//
// RUN: %stepc-opt %s --step-lower-to-linalg | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-lower-to-linalg | FileCheck %s --check-prefix=LOWERED
// LOWERED-NOT: step.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[[-2.0, 1.5, -0.5, 3.0], [1.0, -1.0, 2.5, 0.5], [-1.5, 2.0, 0.0, -2.0]], [[1.5, -0.5, 3.0, 1.0], [-1.0, 2.5, 0.5, -1.5], [2.0, 0.0, -2.0, 1.5]]]> : tensor<2x3x4xf32>
  %i = arith.constant dense<[[-7, 2, 4], [1, 5, 9]]> : tensor<2x3xi32>
  // step.sum axes = [1]
  %r1 = step.sum %x {axes = [1]} : tensor<2x3x4xf32>
  %u1 = tensor.cast %r1 : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  // step.sum axes = [0, 2] keepdim
  %r2 = step.sum %x {axes = [0, 2], keepdim} : tensor<2x3x4xf32>
  %u2 = tensor.cast %r2 : tensor<1x3x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  // step.sum axes = [0, 1, 2]
  %r3 = step.sum %x {axes = [0, 1, 2]} : tensor<2x3x4xf32>
  %u3 = tensor.cast %r3 : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  // step.sum axes = [-1] keepdim
  %r4 = step.sum %x {axes = [-1], keepdim} : tensor<2x3x4xf32>
  %u4 = tensor.cast %r4 : tensor<2x3x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  // step.reduce_max axes = [1]
  %r5 = step.reduce_max %x {axes = [1]} : tensor<2x3x4xf32>
  %u5 = tensor.cast %r5 : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()
  // step.reduce_max axes = [0, 1, 2] keepdim
  %r6 = step.reduce_max %x {axes = [0, 1, 2], keepdim} : tensor<2x3x4xf32>
  %u6 = tensor.cast %r6 : tensor<1x1x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u6) : (tensor<*xf32>) -> ()
  // step.reduce_max axes = [-1, 0]
  %r7 = step.reduce_max %x {axes = [-1, 0]} : tensor<2x3x4xf32>
  %u7 = tensor.cast %r7 : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%u7) : (tensor<*xf32>) -> ()
  // step.mean axes = [2]
  %r8 = step.mean %x {axes = [2]} : tensor<2x3x4xf32>
  %u8 = tensor.cast %r8 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u8) : (tensor<*xf32>) -> ()
  // step.mean axes = [0, 1] keepdim
  %r9 = step.mean %x {axes = [0, 1], keepdim} : tensor<2x3x4xf32>
  %u9 = tensor.cast %r9 : tensor<1x1x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u9) : (tensor<*xf32>) -> ()
  // step.mean axes = [0, 1, 2]
  %r10 = step.mean %x {axes = [0, 1, 2]} : tensor<2x3x4xf32>
  %u10 = tensor.cast %r10 : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%u10) : (tensor<*xf32>) -> ()
  // step.mean on i32 axes = [1] truncates toward zero; step.reduce_max on i32
  %r11_m = step.mean %i {axes = [1]} : tensor<2x3xi32>
  %r11_x = step.reduce_max %i {axes = [1]} : tensor<2x3xi32>
  %r11_s = step.add %r11_m, %r11_x : tensor<2xi32>, tensor<2xi32>
  %r11 = step.cast %r11_s {to = f32} : tensor<2xi32>
  %u11 = tensor.cast %r11 : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u11) : (tensor<*xf32>) -> ()
  return
}

// step.sum axes = [1]
// CHECK: rank = 2 offset = 0 sizes = [2, 4] strides = [4, 1] data =
// CHECK-NEXT: {{\[\[}}-2.5,   2.5,   2,   1.5],
// CHECK-NEXT: [2.5,   2,   1.5,   1]]
// step.sum axes = [0, 2] keepdim
// CHECK: rank = 3 offset = 0 sizes = [1, 3, 1] strides = [3, 1, 1] data =
// CHECK-NEXT: {{\[\[}}[7],
// CHECK-NEXT: [3.5],
// CHECK-NEXT: [0]]]
// step.sum axes = [0, 1, 2]
// CHECK: rank = 0 offset = 0 sizes = [] strides = [] data =
// CHECK-NEXT: [10.5]
// step.sum axes = [-1] keepdim
// CHECK: rank = 3 offset = 0 sizes = [2, 3, 1] strides = [3, 1, 1] data =
// CHECK-NEXT: {{\[\[}}[2],
// CHECK-NEXT: [3],
// CHECK-NEXT: [-1.5]],
// CHECK-NEXT: {{\[\[}}5],
// CHECK-NEXT: [0.5],
// CHECK-NEXT: [1.5]]]
// step.reduce_max axes = [1]
// CHECK: rank = 2 offset = 0 sizes = [2, 4] strides = [4, 1] data =
// CHECK-NEXT: {{\[\[}}1,   2,   2.5,   3],
// CHECK-NEXT: [2,   2.5,   3,   1.5]]
// step.reduce_max axes = [0, 1, 2] keepdim
// CHECK: rank = 3 offset = 0 sizes = [1, 1, 1] strides = [1, 1, 1] data =
// CHECK-NEXT: {{\[\[}}[3]]]
// step.reduce_max axes = [-1, 0]
// CHECK: rank = 1 offset = 0 sizes = [3] strides = [1] data =
// CHECK-NEXT: [3,  2.5,  2]
// step.mean axes = [2]
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}0.5,   0.75,   -0.375],
// CHECK-NEXT: [1.25,   0.125,   0.375]]
// step.mean axes = [0, 1] keepdim
// CHECK: rank = 3 offset = 0 sizes = [1, 1, 4] strides = [4, 4, 1] data =
// CHECK-NEXT: {{\[\[}}[0,    0.75,    0.583333,    0.416667]]]
// step.mean axes = [0, 1, 2]
// CHECK: rank = 0 offset = 0 sizes = [] strides = [] data =
// CHECK-NEXT: [0.4375]
// step.mean on i32 axes = [1] truncates toward zero; step.reduce_max on i32
// CHECK: rank = 1 offset = 0 sizes = [2] strides = [1] data =
// CHECK-NEXT: [4,  14]
