// Numeric tests of --step-lower-to-linalg for elementwise ops: every unary op (gelu in both
// forms), broadcasting binary ops, compare, select, cast (float/int/i1/f16/bf16) and constant
// are lowered, then taken to LLVM by upstream mlir-opt and run by mlir-cpu-runner; the printed
// values were checked against a float64 reference (6 significant digits as printed).
//
// RUN: %stepc-opt %s --step-lower-to-linalg | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-lower-to-linalg | FileCheck %s --check-prefix=LOWERED
// LOWERED-NOT: step.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[-2.0, -0.5, 0.0], [0.5, 1.0, 2.0]]> : tensor<2x3xf32>
  %p = arith.constant dense<[[0.25, 0.5, 1.0], [2.0, 4.0, 9.0]]> : tensor<2x3xf32>
  %b = arith.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %c = arith.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %s = arith.constant dense<3.0> : tensor<f32>
  %y = arith.constant dense<[[-2.7, -0.5, 0.0], [0.5, 1.9, 2.2]]> : tensor<2x3xf32>
  %h = arith.constant dense<[0.3333333333333333, 1000.1, -0.002]> : tensor<3xf32>
  %g = arith.constant dense<[0.3, 1.7, -2.0]> : tensor<3xf32>
  %i = arith.constant dense<[[-7, -2, 0], [1, 5, 9]]> : tensor<2x3xi32>
  %j = arith.constant dense<[2, -2, 4]> : tensor<3xi32>
  // step.neg
  %r1 = step.neg %x : tensor<2x3xf32>
  %u1 = tensor.cast %r1 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  // step.abs
  %r2 = step.abs %x : tensor<2x3xf32>
  %u2 = tensor.cast %r2 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  // step.exp
  %r3 = step.exp %x : tensor<2x3xf32>
  %u3 = tensor.cast %r3 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  // step.log
  %r4 = step.log %p : tensor<2x3xf32>
  %u4 = tensor.cast %r4 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  // step.sqrt
  %r5 = step.sqrt %p : tensor<2x3xf32>
  %u5 = tensor.cast %r5 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()
  // step.rsqrt
  %r6 = step.rsqrt %p : tensor<2x3xf32>
  %u6 = tensor.cast %r6 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u6) : (tensor<*xf32>) -> ()
  // step.tanh
  %r7 = step.tanh %x : tensor<2x3xf32>
  %u7 = tensor.cast %r7 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u7) : (tensor<*xf32>) -> ()
  // step.sigmoid
  %r8 = step.sigmoid %x : tensor<2x3xf32>
  %u8 = tensor.cast %r8 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u8) : (tensor<*xf32>) -> ()
  // step.relu
  %r9 = step.relu %x : tensor<2x3xf32>
  %u9 = tensor.cast %r9 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u9) : (tensor<*xf32>) -> ()
  // step.silu
  %r10 = step.silu %x : tensor<2x3xf32>
  %u10 = tensor.cast %r10 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u10) : (tensor<*xf32>) -> ()
  // step.erf
  %r11 = step.erf %x : tensor<2x3xf32>
  %u11 = tensor.cast %r11 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u11) : (tensor<*xf32>) -> ()
  // step.sin
  %r12 = step.sin %x : tensor<2x3xf32>
  %u12 = tensor.cast %r12 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u12) : (tensor<*xf32>) -> ()
  // step.cos
  %r13 = step.cos %x : tensor<2x3xf32>
  %u13 = tensor.cast %r13 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u13) : (tensor<*xf32>) -> ()
  // step.gelu
  %r14 = step.gelu %x : tensor<2x3xf32>
  %u14 = tensor.cast %r14 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u14) : (tensor<*xf32>) -> ()
  // step.gelu {approximate = "erf"}
  %r15 = step.gelu %x {approximate = "erf"} : tensor<2x3xf32>
  %u15 = tensor.cast %r15 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u15) : (tensor<*xf32>) -> ()
  // step.leaky_relu {alpha = 0.2}
  %r16 = step.leaky_relu %x {alpha = 0.2} : tensor<2x3xf32>
  %u16 = tensor.cast %r16 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u16) : (tensor<*xf32>) -> ()
  // step.pow {exponent = 3.0}
  %r17 = step.pow %x {exponent = 3.0} : tensor<2x3xf32>
  %u17 = tensor.cast %r17 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u17) : (tensor<*xf32>) -> ()
  // step.pow {exponent = 2.0}
  %r18 = step.pow %x {exponent = 2.0} : tensor<2x3xf32>
  %u18 = tensor.cast %r18 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u18) : (tensor<*xf32>) -> ()
  // step.pow {exponent = 1.5}
  %r19 = step.pow %p {exponent = 1.5} : tensor<2x3xf32>
  %u19 = tensor.cast %r19 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u19) : (tensor<*xf32>) -> ()
  // step.add tensor<2x3xf32> with tensor<3xf32>
  %r20 = step.add %x, %b : tensor<2x3xf32>, tensor<3xf32>
  %u20 = tensor.cast %r20 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u20) : (tensor<*xf32>) -> ()
  // step.sub tensor<2x1xf32> with tensor<3xf32>
  %r21 = step.sub %c, %b : tensor<2x1xf32>, tensor<3xf32>
  %u21 = tensor.cast %r21 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u21) : (tensor<*xf32>) -> ()
  // step.mul tensor<2x3xf32> with tensor<f32>
  %r22 = step.mul %x, %s : tensor<2x3xf32>, tensor<f32>
  %u22 = tensor.cast %r22 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u22) : (tensor<*xf32>) -> ()
  // step.div tensor<2x3xf32> with tensor<2x1xf32>
  %r23 = step.div %x, %c : tensor<2x3xf32>, tensor<2x1xf32>
  %u23 = tensor.cast %r23 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u23) : (tensor<*xf32>) -> ()
  // step.max tensor<2x3xf32> with tensor<2x1xf32>
  %r24 = step.max %x, %c : tensor<2x3xf32>, tensor<2x1xf32>
  %u24 = tensor.cast %r24 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u24) : (tensor<*xf32>) -> ()
  // step.min tensor<2x1xf32> with tensor<2x3xf32>
  %r25 = step.min %c, %x : tensor<2x1xf32>, tensor<2x3xf32>
  %u25 = tensor.cast %r25 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u25) : (tensor<*xf32>) -> ()
  // step.compare lt (as f32)
  %r26_m = step.compare %x, %c {predicate = "lt"} : tensor<2x3xf32>, tensor<2x1xf32>
  %r26 = step.cast %r26_m {to = f32} : tensor<2x3xi1>
  %u26 = tensor.cast %r26 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u26) : (tensor<*xf32>) -> ()
  // step.compare le (as f32)
  %r27_m = step.compare %x, %c {predicate = "le"} : tensor<2x3xf32>, tensor<2x1xf32>
  %r27 = step.cast %r27_m {to = f32} : tensor<2x3xi1>
  %u27 = tensor.cast %r27 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u27) : (tensor<*xf32>) -> ()
  // step.compare gt (as f32)
  %r28_m = step.compare %x, %c {predicate = "gt"} : tensor<2x3xf32>, tensor<2x1xf32>
  %r28 = step.cast %r28_m {to = f32} : tensor<2x3xi1>
  %u28 = tensor.cast %r28 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u28) : (tensor<*xf32>) -> ()
  // step.compare ge (as f32)
  %r29_m = step.compare %x, %c {predicate = "ge"} : tensor<2x3xf32>, tensor<2x1xf32>
  %r29 = step.cast %r29_m {to = f32} : tensor<2x3xi1>
  %u29 = tensor.cast %r29 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u29) : (tensor<*xf32>) -> ()
  // step.compare eq (as f32)
  %r30_m = step.compare %x, %c {predicate = "eq"} : tensor<2x3xf32>, tensor<2x1xf32>
  %r30 = step.cast %r30_m {to = f32} : tensor<2x3xi1>
  %u30 = tensor.cast %r30 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u30) : (tensor<*xf32>) -> ()
  // step.compare ne (as f32)
  %r31_m = step.compare %x, %c {predicate = "ne"} : tensor<2x3xf32>, tensor<2x1xf32>
  %r31 = step.cast %r31_m {to = f32} : tensor<2x3xi1>
  %u31 = tensor.cast %r31 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u31) : (tensor<*xf32>) -> ()
  // step.select of a broadcast mask
  %r32_m = step.compare %x, %c {predicate = "ge"} : tensor<2x3xf32>, tensor<2x1xf32>
  %r32 = step.select %r32_m, %x, %b : tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>
  %u32 = tensor.cast %r32 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u32) : (tensor<*xf32>) -> ()
  // step.cast f32 -> i32 truncates toward zero, -> f32
  %r33_i = step.cast %y {to = i32} : tensor<2x3xf32>
  %r33 = step.cast %r33_i {to = f32} : tensor<2x3xi32>
  %u33 = tensor.cast %r33 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u33) : (tensor<*xf32>) -> ()
  // step.cast f32 -> i1 (nonzero) -> f32
  %r34_i = step.cast %y {to = i1} : tensor<2x3xf32>
  %r34 = step.cast %r34_i {to = f32} : tensor<2x3xi1>
  %u34 = tensor.cast %r34 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u34) : (tensor<*xf32>) -> ()
  // step.cast f32 -> f64 -> i64 -> f32
  %r35_d = step.cast %y {to = f64} : tensor<2x3xf32>
  %r35_i = step.cast %r35_d {to = i64} : tensor<2x3xf64>
  %r35 = step.cast %r35_i {to = f32} : tensor<2x3xi64>
  %u35 = tensor.cast %r35 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u35) : (tensor<*xf32>) -> ()
  // step.cast f32 -> f16 rounds, -> f32
  %r36_h = step.cast %h {to = f16} : tensor<3xf32>
  %r36 = step.cast %r36_h {to = f32} : tensor<3xf16>
  %u36 = tensor.cast %r36 : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%u36) : (tensor<*xf32>) -> ()
  // step.exp in bf16 (computed in f32, rounded)
  %r37_h = step.cast %g {to = bf16} : tensor<3xf32>
  %r37_e = step.exp %r37_h : tensor<3xbf16>
  %r37 = step.cast %r37_e {to = f32} : tensor<3xbf16>
  %u37 = tensor.cast %r37 : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%u37) : (tensor<*xf32>) -> ()
  // step.div on i32 (as f32)
  %r38_i = step.div %i, %j : tensor<2x3xi32>, tensor<3xi32>
  %r38 = step.cast %r38_i {to = f32} : tensor<2x3xi32>
  %u38 = tensor.cast %r38 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u38) : (tensor<*xf32>) -> ()
  // step.max on i32 (as f32)
  %r39_i = step.max %i, %j : tensor<2x3xi32>, tensor<3xi32>
  %r39 = step.cast %r39_i {to = f32} : tensor<2x3xi32>
  %u39 = tensor.cast %r39 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u39) : (tensor<*xf32>) -> ()
  // step.min on i32 (as f32)
  %r40_i = step.min %i, %j : tensor<2x3xi32>, tensor<3xi32>
  %r40 = step.cast %r40_i {to = f32} : tensor<2x3xi32>
  %u40 = tensor.cast %r40 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u40) : (tensor<*xf32>) -> ()
  // step.sub on i32 (as f32)
  %r41_i = step.sub %i, %j : tensor<2x3xi32>, tensor<3xi32>
  %r41 = step.cast %r41_i {to = f32} : tensor<2x3xi32>
  %u41 = tensor.cast %r41 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u41) : (tensor<*xf32>) -> ()
  // step.mul on i32 (as f32)
  %r42_i = step.mul %i, %j : tensor<2x3xi32>, tensor<3xi32>
  %r42 = step.cast %r42_i {to = f32} : tensor<2x3xi32>
  %u42 = tensor.cast %r42 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u42) : (tensor<*xf32>) -> ()
  // step.neg, step.abs on i32 (as f32)
  %r43_n = step.neg %i : tensor<2x3xi32>
  %r43_a = step.abs %r43_n : tensor<2x3xi32>
  %r43_s = step.sub %r43_n, %r43_a : tensor<2x3xi32>, tensor<2x3xi32>
  %r43 = step.cast %r43_s {to = f32} : tensor<2x3xi32>
  %u43 = tensor.cast %r43 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u43) : (tensor<*xf32>) -> ()
  // step.compare gt on i32, select
  %r44_m = step.compare %i, %j {predicate = "gt"} : tensor<2x3xi32>, tensor<3xi32>
  %r44 = step.select %r44_m, %x, %p : tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>
  %u44 = tensor.cast %r44 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u44) : (tensor<*xf32>) -> ()
  // step.constant
  %r45 = step.constant {value = dense<[[1.5, -2.0], [0.25, 8.0]]> : tensor<2x2xf32>}
  %u45 = tensor.cast %r45 : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u45) : (tensor<*xf32>) -> ()
  // step.constant splat plus a scalar
  %r46_c = step.constant {value = dense<0.5> : tensor<f32>}
  %r46 = step.add %x, %r46_c : tensor<2x3xf32>, tensor<f32>
  %u46 = tensor.cast %r46 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u46) : (tensor<*xf32>) -> ()
  return
}

// step.neg
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}2,   0.5,   -0],
// CHECK-NEXT: [-0.5,   -1,   -2]]
// step.abs
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}2,   0.5,   0],
// CHECK-NEXT: [0.5,   1,   2]]
// step.exp
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}0.135335,   0.606531,   1],
// CHECK-NEXT: [1.64872,   2.71828,   7.38906]]
// step.log
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-1.38629,   -0.693147,   0],
// CHECK-NEXT: [0.693147,   1.38629,   2.19722]]
// step.sqrt
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}0.5,   0.707107,   1],
// CHECK-NEXT: [1.41421,   2,   3]]
// step.rsqrt
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}2,   1.41421,   1],
// CHECK-NEXT: [0.707107,   0.5,   0.333333]]
// step.tanh
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-0.964028,   -0.462117,   0],
// CHECK-NEXT: [0.462117,   0.761594,   0.964028]]
// step.sigmoid
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}0.119203,   0.377541,   0.5],
// CHECK-NEXT: [0.622459,   0.731059,   0.880797]]
// step.relu
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}0,   0,   0],
// CHECK-NEXT: [0.5,   1,   2]]
// step.silu
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-0.238406,   -0.18877,   0],
// CHECK-NEXT: [0.31123,   0.731059,   1.76159]]
// step.erf
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-0.995322,   -0.5205,   0],
// CHECK-NEXT: [0.5205,   0.842701,   0.995322]]
// step.sin
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-0.909297,   -0.479426,   0],
// CHECK-NEXT: [0.479426,   0.841471,   0.909297]]
// step.cos
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-0.416147,   0.877583,   1],
// CHECK-NEXT: [0.877583,   0.540302,   -0.416147]]
// step.gelu
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-0.0454023,   -0.154286,   0],
// CHECK-NEXT: [0.345714,   0.841192,   1.9546]]
// step.gelu {approximate = "erf"}
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-0.0455003,   -0.154269,   0],
// CHECK-NEXT: [0.345731,   0.841345,   1.9545]]
// step.leaky_relu {alpha = 0.2}
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-0.4,   -0.1,   0],
// CHECK-NEXT: [0.5,   1,   2]]
// step.pow {exponent = 3.0}
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-8,   -0.125,   0],
// CHECK-NEXT: [0.125,   1,   8]]
// step.pow {exponent = 2.0}
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}4,   0.25,   0],
// CHECK-NEXT: [0.25,   1,   4]]
// step.pow {exponent = 1.5}
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}0.125,   0.353553,   1],
// CHECK-NEXT: [2.82843,   8,   27]]
// step.add tensor<2x3xf32> with tensor<3xf32>
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}8,   19.5,   30],
// CHECK-NEXT: [10.5,   21,   32]]
// step.sub tensor<2x1xf32> with tensor<3xf32>
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-9,   -19,   -29],
// CHECK-NEXT: [-8,   -18,   -28]]
// step.mul tensor<2x3xf32> with tensor<f32>
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-6,   -1.5,   0],
// CHECK-NEXT: [1.5,   3,   6]]
// step.div tensor<2x3xf32> with tensor<2x1xf32>
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-2,   -0.5,   0],
// CHECK-NEXT: [0.25,   0.5,   1]]
// step.max tensor<2x3xf32> with tensor<2x1xf32>
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}1,   1,   1],
// CHECK-NEXT: [2,   2,   2]]
// step.min tensor<2x1xf32> with tensor<2x3xf32>
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-2,   -0.5,   0],
// CHECK-NEXT: [0.5,   1,   2]]
// step.compare lt (as f32)
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}1,   1,   1],
// CHECK-NEXT: [1,   1,   0]]
// step.compare le (as f32)
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}1,   1,   1],
// CHECK-NEXT: [1,   1,   1]]
// step.compare gt (as f32)
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}0,   0,   0],
// CHECK-NEXT: [0,   0,   0]]
// step.compare ge (as f32)
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}0,   0,   0],
// CHECK-NEXT: [0,   0,   1]]
// step.compare eq (as f32)
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}0,   0,   0],
// CHECK-NEXT: [0,   0,   1]]
// step.compare ne (as f32)
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}1,   1,   1],
// CHECK-NEXT: [1,   1,   0]]
// step.select of a broadcast mask
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}10,   20,   30],
// CHECK-NEXT: [10,   20,   2]]
// step.cast f32 -> i32 truncates toward zero, -> f32
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-2,   0,   0],
// CHECK-NEXT: [0,   1,   2]]
// step.cast f32 -> i1 (nonzero) -> f32
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}1,   1,   0],
// CHECK-NEXT: [1,   1,   1]]
// step.cast f32 -> f64 -> i64 -> f32
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-2,   0,   0],
// CHECK-NEXT: [0,   1,   2]]
// step.cast f32 -> f16 rounds, -> f32
// CHECK: rank = 1 offset = 0 sizes = [3] strides = [1] data =
// CHECK-NEXT: [0.333252,  1000,  -0.00200081]
// step.exp in bf16 (computed in f32, rounded)
// CHECK: rank = 1 offset = 0 sizes = [3] strides = [1] data =
// CHECK-NEXT: [1.35156,  5.5,  0.135742]
// step.div on i32 (as f32)
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-3,   1,   0],
// CHECK-NEXT: [0,   -2,   2]]
// step.max on i32 (as f32)
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}2,   -2,   4],
// CHECK-NEXT: [2,   5,   9]]
// step.min on i32 (as f32)
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-7,   -2,   0],
// CHECK-NEXT: [1,   -2,   4]]
// step.sub on i32 (as f32)
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-9,   0,   -4],
// CHECK-NEXT: [-1,   7,   5]]
// step.mul on i32 (as f32)
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-14,   4,   0],
// CHECK-NEXT: [2,   -10,   36]]
// step.neg, step.abs on i32 (as f32)
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}0,   0,   0],
// CHECK-NEXT: [-2,   -10,   -18]]
// step.compare gt on i32, select
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}0.25,   0.5,   1],
// CHECK-NEXT: [2,   1,   2]]
// step.constant
// CHECK: rank = 2 offset = 0 sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[\[}}1.5,   -2],
// CHECK-NEXT: [0.25,   8]]
// step.constant splat plus a scalar
// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT: {{\[\[}}-1.5,   0,   0.5],
// CHECK-NEXT: [1,   1.5,   2.5]]
