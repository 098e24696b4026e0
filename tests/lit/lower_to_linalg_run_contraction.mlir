// Numeric tests of --step-lower-to-linalg for contractions: matmul (2-D, transposed operands,
// 3-D lhs plain and transposed), batch_matmul (rank 3 plain and transposed, rank 4). Lowered,
// taken to LLVM by upstream mlir-opt, run by mlir-cpu-runner; printed values checked against a
// float64 reference.
//
// RUN: %stepc-opt %s --step-lower-to-linalg | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-lower-to-linalg | FileCheck %s --check-prefix=LOWERED
// LOWERED-NOT: step.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %a = arith.constant dense<[[1.25, 0.75, 0.25], [-0.25, -0.75, -1.25]]> : tensor<2x3xf32>
  %w = arith.constant dense<[[0.75, 0.25, -0.25, -0.75], [-1.25, 1.5, 1.0, 0.5], [0.0, -0.5, -1.0, -1.5]]> : tensor<3x4xf32>
  %at = arith.constant dense<[[1.25, -0.25], [0.75, -0.75], [0.25, -1.25]]> : tensor<3x2xf32>
  %wt = arith.constant dense<[[0.75, -1.25, 0.0], [0.25, 1.5, -0.5], [-0.25, 1.0, -1.0], [-0.75, 0.5, -1.5]]> : tensor<4x3xf32>
  %a3 = arith.constant dense<[[[0.25, -0.25, -0.75], [-1.25, 1.5, 1.0]], [[0.5, 0.0, -0.5], [-1.0, -1.5, 1.25]]]> : tensor<2x2x3xf32>
  %bl = arith.constant dense<[[[-0.25, -0.75, -1.25], [1.5, 1.0, 0.5]], [[0.0, -0.5, -1.0], [-1.5, 1.25, 0.75]]]> : tensor<2x2x3xf32>
  %br = arith.constant dense<[[[-0.75, -1.25], [1.5, 1.0], [0.5, 0.0]], [[-0.5, -1.0], [-1.5, 1.25], [0.75, 0.25]]]> : tensor<2x3x2xf32>
  %brt = arith.constant dense<[[[-0.75, 1.5, 0.5], [-1.25, 1.0, 0.0]], [[-0.5, -1.5, 0.75], [-1.0, 1.25, 0.25]]]> : tensor<2x2x3xf32>
  %blt = arith.constant dense<[[[-0.25, 1.5], [-0.75, 1.0], [-1.25, 0.5]], [[0.0, -1.5], [-0.5, 1.25], [-1.0, 0.75]]]> : tensor<2x3x2xf32>
  %q = arith.constant dense<[[[[-1.25, 1.5, 1.0], [0.5, 0.0, -0.5]], [[-1.0, -1.5, 1.25], [0.75, 0.25, -0.25]]], [[[-0.75, -1.25, 1.5], [1.0, 0.5, 0.0]], [[-0.5, -1.0, -1.5], [1.25, 0.75, 0.25]]]]> : tensor<2x2x2x3xf32>
  %k = arith.constant dense<[[[[1.5, 1.0, 0.5], [0.0, -0.5, -1.0]], [[-1.5, 1.25, 0.75], [0.25, -0.25, -0.75]]], [[[-1.25, 1.5, 1.0], [0.5, 0.0, -0.5]], [[-1.0, -1.5, 1.25], [0.75, 0.25, -0.25]]]]> : tensor<2x2x2x3xf32>
  // step.matmul [2, 3] x [3, 4]
  %r1 = step.matmul %a, %w : tensor<2x3xf32>, tensor<3x4xf32>
  %u1 = tensor.cast %r1 : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  // step.matmul transpose_lhs [3, 2]^T x [3, 4]
  %r2 = step.matmul %at, %w {transpose_lhs} : tensor<3x2xf32>, tensor<3x4xf32>
  %u2 = tensor.cast %r2 : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  // step.matmul transpose_rhs [2, 3] x [4, 3]^T
  %r3 = step.matmul %a, %wt {transpose_rhs} : tensor<2x3xf32>, tensor<4x3xf32>
  %u3 = tensor.cast %r3 : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  // step.matmul transpose_lhs transpose_rhs
  %r4 = step.matmul %at, %wt {transpose_lhs, transpose_rhs} : tensor<3x2xf32>, tensor<4x3xf32>
  %u4 = tensor.cast %r4 : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  // step.matmul 3-D lhs [2, 2, 3] x [3, 4]
  %r5 = step.matmul %a3, %w : tensor<2x2x3xf32>, tensor<3x4xf32>
  %u5 = tensor.cast %r5 : tensor<2x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()
  // step.batch_matmul [2, 2, 3] x [2, 3, 2]
  %r6 = step.batch_matmul %bl, %br : tensor<2x2x3xf32>, tensor<2x3x2xf32>
  %u6 = tensor.cast %r6 : tensor<2x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u6) : (tensor<*xf32>) -> ()
  // step.batch_matmul transpose_rhs
  %r7 = step.batch_matmul %bl, %brt {transpose_rhs} : tensor<2x2x3xf32>, tensor<2x2x3xf32>
  %u7 = tensor.cast %r7 : tensor<2x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u7) : (tensor<*xf32>) -> ()
  // step.batch_matmul transpose_lhs
  %r8 = step.batch_matmul %blt, %br {transpose_lhs} : tensor<2x3x2xf32>, tensor<2x3x2xf32>
  %u8 = tensor.cast %r8 : tensor<2x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u8) : (tensor<*xf32>) -> ()
  // step.batch_matmul rank 4 transpose_rhs (attention scores)
  %r9 = step.batch_matmul %q, %k {transpose_rhs} : tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>
  %u9 = tensor.cast %r9 : tensor<2x2x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u9) : (tensor<*xf32>) -> ()
  return
}

// step.matmul [2, 3] x [3, 4]
// CHECK: rank = 2 offset = 0 sizes = [2, 4] strides = [4, 1] data =
// CHECK-NEXT: {{\[\[}}0,   1.3125,   0.1875,   -0.9375],
// CHECK-NEXT: [0.75,   -0.5625,   0.5625,   1.6875]]
// step.matmul transpose_lhs [3, 2]^T x [3, 4]
// CHECK: rank = 2 offset = 0 sizes = [2, 4] strides = [4, 1] data =
// CHECK-NEXT: {{\[\[}}0,   1.3125,   0.1875,   -0.9375],
// CHECK-NEXT: [0.75,   -0.5625,   0.5625,   1.6875]]
// step.matmul transpose_rhs [2, 3] x [4, 3]^T
// CHECK: rank = 2 offset = 0 sizes = [2, 4] strides = [4, 1] data =
// CHECK-NEXT: {{\[\[}}0,   1.3125,   0.1875,   -0.9375],
// CHECK-NEXT: [0.75,   -0.5625,   0.5625,   1.6875]]
// step.matmul transpose_lhs transpose_rhs
// CHECK: rank = 2 offset = 0 sizes = [2, 4] strides = [4, 1] data =
// CHECK-NEXT: {{\[\[}}0,   1.3125,   0.1875,   -0.9375],
// CHECK-NEXT: [0.75,   -0.5625,   0.5625,   1.6875]]
// step.matmul 3-D lhs [2, 2, 3] x [3, 4]
// CHECK: rank = 3 offset = 0 sizes = [2, 2, 4] strides = [8, 4, 1] data =
// CHECK-NEXT: {{\[\[}}[0.5,    0.0625,    0.4375,    0.8125],
// CHECK-NEXT: [-2.8125,    1.4375,    0.8125,    0.1875]],
// CHECK-NEXT: {{\[\[}}0.375,    0.375,    0.375,    0.375],
// CHECK-NEXT: [1.125,    -3.125,    -2.5,    -1.875]]]
// step.batch_matmul [2, 2, 3] x [2, 3, 2]
// CHECK: rank = 3 offset = 0 sizes = [2, 2, 2] strides = [4, 2, 1] data =
// CHECK-NEXT: {{\[\[}}[-1.5625,    -0.4375],
// CHECK-NEXT: [0.625,    -0.875]],
// CHECK-NEXT: {{\[\[}}0,    -0.875],
// CHECK-NEXT: [-0.5625,    3.25]]]
// step.batch_matmul transpose_rhs
// CHECK: rank = 3 offset = 0 sizes = [2, 2, 2] strides = [4, 2, 1] data =
// CHECK-NEXT: {{\[\[}}[-1.5625,    -0.4375],
// CHECK-NEXT: [0.625,    -0.875]],
// CHECK-NEXT: {{\[\[}}0,    -0.875],
// CHECK-NEXT: [-0.5625,    3.25]]]
// step.batch_matmul transpose_lhs
// CHECK: rank = 3 offset = 0 sizes = [2, 2, 2] strides = [4, 2, 1] data =
// CHECK-NEXT: {{\[\[}}[-1.5625,    -0.4375],
// CHECK-NEXT: [0.625,    -0.875]],
// CHECK-NEXT: {{\[\[}}0,    -0.875],
// CHECK-NEXT: [-0.5625,    3.25]]]
// step.batch_matmul rank 4 transpose_rhs (attention scores)
// CHECK: rank = 4 offset = 0 sizes = [2, 2, 2, 2] strides = [8, 4, 2, 1] data =
// CHECK-NEXT: {{\[\[}}{{\[\[}}0.125,     -1.75],
// CHECK-NEXT: [0.5,     0.5]],
// CHECK-NEXT: {{\[\[}}0.5625,     -0.8125],
// CHECK-NEXT: [-1,     0.3125]]],
// CHECK-NEXT: {{\[\[}}[0.5625,     -1.125],
// CHECK-NEXT: [-0.5,     0.5]],
// CHECK-NEXT: {{\[\[}}0.125,     -0.25],
// CHECK-NEXT: [-2.0625,     1.0625]]]]
