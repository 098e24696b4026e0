// Numeric tests of --step-lower-to-linalg for shape ops: reshape (with 0 and -1 entries, to
// and from rank 0), transpose, broadcast, strided slice, pad and concat. Lowered, taken to LLVM
// by upstream mlir-opt, run by mlir-cpu-runner; printed values checked against a reference.
//
// RUN: %stepc-opt %s --step-lower-to-linalg | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-lower-to-linalg | FileCheck %s --check-prefix=LOWERED
// LOWERED-NOT: step.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]], [[12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0]]]> : tensor<2x3x4xf32>
  %one = arith.constant dense<[[7.5]]> : tensor<1x1xf32>
  %b = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %c = arith.constant dense<[[5.0], [6.0]]> : tensor<2x1xf32>
  %m = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %n = arith.constant dense<[[10.0, 20.0], [30.0, 40.0]]> : tensor<2x2xf32>
  // step.reshape {shape = [4, -1]}
  %r1 = step.reshape %x {shape = [4, -1]} : tensor<2x3x4xf32>
  %u1 = tensor.cast %r1 : tensor<4x6xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  // step.reshape {shape = [0, 12]}
  %r2 = step.reshape %x {shape = [0, 12]} : tensor<2x3x4xf32>
  %u2 = tensor.cast %r2 : tensor<2x12xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  // step.reshape {shape = [0, 3, 2, 2]}
  %r3 = step.reshape %x {shape = [0, 3, 2, 2]} : tensor<2x3x4xf32>
  %u3 = tensor.cast %r3 : tensor<2x3x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  // step.reshape [1, 1] -> [] -> [1, 1, 1]
  %r4_s = step.reshape %one {shape = []} : tensor<1x1xf32>
  %r4 = step.reshape %r4_s {shape = [1, 1, 1]} : tensor<f32>
  %u4 = tensor.cast %r4 : tensor<1x1x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  // step.transpose {perm = [2, 0, 1]}
  %r5 = step.transpose %x {perm = [2, 0, 1]} : tensor<2x3x4xf32>
  %u5 = tensor.cast %r5 : tensor<4x2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()
  // step.transpose {perm = [1, 0, 2]}
  %r6 = step.transpose %x {perm = [1, 0, 2]} : tensor<2x3x4xf32>
  %u6 = tensor.cast %r6 : tensor<3x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u6) : (tensor<*xf32>) -> ()
  // step.transpose {perm = [0, 2, 1]}
  %r7 = step.transpose %x {perm = [0, 2, 1]} : tensor<2x3x4xf32>
  %u7 = tensor.cast %r7 : tensor<2x4x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u7) : (tensor<*xf32>) -> ()
  // step.broadcast [3] -> [2, 2, 3]
  %r8 = step.broadcast %b {shape = [2, 2, 3]} : tensor<3xf32>
  %u8 = tensor.cast %r8 : tensor<2x2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u8) : (tensor<*xf32>) -> ()
  // step.broadcast [2, 1] -> [3, 2, 4]
  %r9 = step.broadcast %c {shape = [3, 2, 4]} : tensor<2x1xf32>
  %u9 = tensor.cast %r9 : tensor<3x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u9) : (tensor<*xf32>) -> ()
  // step.slice start = [0, 1, 1] limit = [2, 3, 4]
  %r10 = step.slice %x {start = [0, 1, 1], limit = [2, 3, 4]} : tensor<2x3x4xf32>
  %u10 = tensor.cast %r10 : tensor<2x2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u10) : (tensor<*xf32>) -> ()
  // step.slice strided start = [1, 0, 0] limit = [2, 3, 4] strides = [1, 2, 3]
  %r11 = step.slice %x {start = [1, 0, 0], limit = [2, 3, 4], strides = [1, 2, 3]} : tensor<2x3x4xf32>
  %u11 = tensor.cast %r11 : tensor<1x2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u11) : (tensor<*xf32>) -> ()
  // step.pad low = [1, 0] high = [0, 2] value = -1.0
  %r12 = step.pad %m {low = [1, 0], high = [0, 2], value = -1.0} : tensor<2x3xf32>
  %u12 = tensor.cast %r12 : tensor<3x5xf32> to tensor<*xf32>
  call @printMemrefF32(%u12) : (tensor<*xf32>) -> ()
  // step.pad low = [0, 2] high = [1, 1] (value 0)
  %r13 = step.pad %m {low = [0, 2], high = [1, 1]} : tensor<2x3xf32>
  %u13 = tensor.cast %r13 : tensor<3x6xf32> to tensor<*xf32>
  call @printMemrefF32(%u13) : (tensor<*xf32>) -> ()
  // step.concat axis = 1 ([2, 3], [2, 2], [2, 3])
  %r14 = step.concat %m, %n, %m {axis = 1} : tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>
  %u14 = tensor.cast %r14 : tensor<2x8xf32> to tensor<*xf32>
  call @printMemrefF32(%u14) : (tensor<*xf32>) -> ()
  // step.concat axis = -2 ([2, 3], [2, 3])
  %r15 = step.concat %m, %m {axis = -2} : tensor<2x3xf32>, tensor<2x3xf32>
  %u15 = tensor.cast %r15 : tensor<4x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u15) : (tensor<*xf32>) -> ()
  return
}

// step.reshape {shape = [4, -1]}
// CHECK: rank = 2 offset = 0 sizes = [4, 6] strides = [6, 1] data =
// CHECK-NEXT: {{\[\[}}0,   1,   2,   3,   4,   5],
// CHECK-NEXT: [6,   7,   8,   9,   10,   11],
// CHECK-NEXT: [12,   13,   14,   15,   16,   17],
// CHECK-NEXT: [18,   19,   20,   21,   22,   23]]
// step.reshape {shape = [0, 12]}
// CHECK: rank = 2 offset = 0 sizes = [2, 12] strides = [12, 1] data =
// CHECK-NEXT: {{\[\[}}0,   1,   2,   3,   4,   5,   6,   7,   8,   9,   10,   11],
// CHECK-NEXT: [12,   13,   14,   15,   16,   17,   18,   19,   20,   21,   22,   23]]
// step.reshape {shape = [0, 3, 2, 2]}
// CHECK: rank = 4 offset = 0 sizes = [2, 3, 2, 2] strides = [12, 4, 2, 1] data =
// CHECK-NEXT: {{\[\[}}{{\[\[}}0,     1],
// CHECK-NEXT: [2,     3]],
// CHECK-NEXT: {{\[\[}}4,     5],
// CHECK-NEXT: [6,     7]],
// CHECK-NEXT: {{\[\[}}8,     9],
// CHECK-NEXT: [10,     11]]],
// CHECK-NEXT: {{\[\[}}[12,     13],
// CHECK-NEXT: [14,     15]],
// CHECK-NEXT: {{\[\[}}16,     17],
// CHECK-NEXT: [18,     19]],
// CHECK-NEXT: {{\[\[}}20,     21],
// CHECK-NEXT: [22,     23]]]]
// step.reshape [1, 1] -> [] -> [1, 1, 1]
// CHECK: rank = 3 offset = 0 sizes = [1, 1, 1] strides = [1, 1, 1] data =
// CHECK-NEXT: {{\[\[}}[7.5]]]
// step.transpose {perm = [2, 0, 1]}
// CHECK: rank = 3 offset = 0 sizes = [4, 2, 3] strides = [6, 3, 1] data =
// CHECK-NEXT: {{\[\[}}[0,    4,    8],
// CHECK-NEXT: [12,    16,    20]],
// CHECK-NEXT: {{\[\[}}1,    5,    9],
// CHECK-NEXT: [13,    17,    21]],
// CHECK-NEXT: {{\[\[}}2,    6,    10],
// CHECK-NEXT: [14,    18,    22]],
// CHECK-NEXT: {{\[\[}}3,    7,    11],
// CHECK-NEXT: [15,    19,    23]]]
// step.transpose {perm = [1, 0, 2]}
// CHECK: rank = 3 offset = 0 sizes = [3, 2, 4] strides = [8, 4, 1] data =
// CHECK-NEXT: {{\[\[}}[0,    1,    2,    3],
// CHECK-NEXT: [12,    13,    14,    15]],
// CHECK-NEXT: {{\[\[}}4,    5,    6,    7],
// CHECK-NEXT: [16,    17,    18,    19]],
// CHECK-NEXT: {{\[\[}}8,    9,    10,    11],
// CHECK-NEXT: [20,    21,    22,    23]]]
// step.transpose {perm = [0, 2, 1]}
// CHECK: rank = 3 offset = 0 sizes = [2, 4, 3] strides = [12, 3, 1] data =
// CHECK-NEXT: {{\[\[}}[0,    4,    8],
// CHECK-NEXT: [1,    5,    9],
// CHECK-NEXT: [2,    6,    10],
// CHECK-NEXT: [3,    7,    11]],
// CHECK-NEXT: {{\[\[}}12,    16,    20],
// CHECK-NEXT: [13,    17,    21],
// CHECK-NEXT: [14,    18,    22],
// CHECK-NEXT: [15,    19,    23]]]
// step.broadcast [3] -> [2, 2, 3]
// CHECK: rank = 3 offset = 0 sizes = [2, 2, 3] strides = [6, 3, 1] data =
// CHECK-NEXT: {{\[\[}}[1,    2,    3],
// CHECK-NEXT: [1,    2,    3]],
// CHECK-NEXT: {{\[\[}}1,    2,    3],
// CHECK-NEXT: [1,    2,    3]]]
// step.broadcast [2, 1] -> [3, 2, 4]
// CHECK: rank = 3 offset = 0 sizes = [3, 2, 4] strides = [8, 4, 1] data =
// CHECK-NEXT: {{\[\[}}[5,    5,    5,    5],
// CHECK-NEXT: [6,    6,    6,    6]],
// CHECK-NEXT: {{\[\[}}5,    5,    5,    5],
// CHECK-NEXT: [6,    6,    6,    6]],
// CHECK-NEXT: {{\[\[}}5,    5,    5,    5],
// CHECK-NEXT: [6,    6,    6,    6]]]
// step.slice start = [0, 1, 1] limit = [2, 3, 4]
// CHECK: rank = 3 offset = 0 sizes = [2, 2, 3] strides = [6, 3, 1] data =
// CHECK-NEXT: {{\[\[}}[5,    6,    7],
// CHECK-NEXT: [9,    10,    11]],
// CHECK-NEXT: {{\[\[}}17,    18,    19],
// CHECK-NEXT: [21,    22,    23]]]
// step.slice strided start = [1, 0, 0] limit = [2, 3, 4] strides = [1, 2, 3]
// CHECK: rank = 3 offset = 0 sizes = [1, 2, 2] strides = [4, 2, 1] data =
// CHECK-NEXT: {{\[\[}}[12,    15],
// CHECK-NEXT: [20,    23]]]
// step.pad low = [1, 0] high = [0, 2] value = -1.0
// CHECK: rank = 2 offset = 0 sizes = [3, 5] strides = [5, 1] data =
// CHECK-NEXT: {{\[\[}}-1,   -1,   -1,   -1,   -1],
// CHECK-NEXT: [1,   2,   3,   -1,   -1],
// CHECK-NEXT: [4,   5,   6,   -1,   -1]]
// step.pad low = [0, 2] high = [1, 1] (value 0)
// CHECK: rank = 2 offset = 0 sizes = [3, 6] strides = [6, 1] data =
// CHECK-NEXT: {{\[\[}}0,   0,   1,   2,   3,   0],
// CHECK-NEXT: [0,   0,   4,   5,   6,   0],
// CHECK-NEXT: [0,   0,   0,   0,   0,   0]]
// step.concat axis = 1 ([2, 3], [2, 2], [2, 3])
// CHECK: rank = 2 offset = 0 sizes = [2, 8] strides = [8, 1] data =
// CHECK-NEXT: {{\[\[}}1,   2,   3,   10,   20,   1,   2,   3],
// CHECK-NEXT: [4,   5,   6,   30,   40,   4,   5,   6]]
// step.concat axis = -2 ([2, 3], [2, 3])
// CHECK: rank = 2 offset = 0 sizes = [4, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}1,   2,   3],
// CHECK-NEXT: [4,   5,   6],
// CHECK-NEXT: [1,   2,   3],
// CHECK-NEXT: [4,   5,   6]]
