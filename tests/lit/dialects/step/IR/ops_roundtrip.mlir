// Round trips of every `step` op: the printed form is CHECKed, printing is stable (the output
// parses back to the same text), and inferred result types are CHECKed: in typed `func.func`
// cases through the printed `-> tensor<...>`, and inside models (where types are not printed)
// through the generic form (GENERIC prefix).
//
// RUN: %stepc-opt %s -split-input-file | FileCheck %s
// RUN: %stepc-opt %s -split-input-file | %stepc-opt -split-input-file | FileCheck %s
// RUN: %stepc-opt %s -split-input-file > %t.first.mlir
// RUN: %stepc-opt %t.first.mlir -split-input-file > %t.second.mlir
// RUN: diff %t.first.mlir %t.second.mlir
// RUN: %stepc-opt %s -split-input-file -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Tests that every elementwise unary op parses and prints inside a model, that attributes equal
// to their default are elided (gelu "tanh", leaky_relu 0.01) and that the others are kept.
step.model @unary_ops_in_model dims(B = 2, D = 3) {
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 3)
  %neg = step.neg %x
  %abs = step.abs %neg
  %exp = step.exp %abs
  %log = step.log %exp
  %sqrt = step.sqrt %exp
  %rsqrt = step.rsqrt %exp
  %tanh = step.tanh %x
  %sig = step.sigmoid %x
  %relu = step.relu %x
  %silu = step.silu %x
  %g0 = step.gelu %x
  %g1 = step.gelu %x {approximate = "tanh"}
  %g2 = step.gelu %x {approximate = "erf"}
  %l0 = step.leaky_relu %x
  %l1 = step.leaky_relu %x {alpha = 0.01}
  %l2 = step.leaky_relu %x {alpha = 0.2}
  %p = step.pow %x {exponent = 3.0}
  %d = step.dropout %x {rate = 0.1, seed = 7}
  %j = step.jitter %x {eps = 0.01, seed = 5}
  %s = step.sum %p {axes = [0, 1]}
  step.loss %s
}
// CHECK-LABEL: step.model @unary_ops_in_model dims(B = 2, D = 3) {
// CHECK:         %[[X:.+]], %{{.+}} = step.input "data" [2, 3] f32 = classification(classes = 3)
// CHECK-NEXT:    %[[NEG:.+]] = step.neg %[[X]]{{$}}
// CHECK-NEXT:    %[[ABS:.+]] = step.abs %[[NEG]]{{$}}
// CHECK-NEXT:    %[[EXP:.+]] = step.exp %[[ABS]]{{$}}
// CHECK-NEXT:    step.log %[[EXP]]{{$}}
// CHECK-NEXT:    step.sqrt %[[EXP]]{{$}}
// CHECK-NEXT:    step.rsqrt %[[EXP]]{{$}}
// CHECK-NEXT:    step.tanh %[[X]]{{$}}
// CHECK-NEXT:    step.sigmoid %[[X]]{{$}}
// CHECK-NEXT:    step.relu %[[X]]{{$}}
// CHECK-NEXT:    step.silu %[[X]]{{$}}
// CHECK-NEXT:    step.gelu %[[X]]{{$}}
// CHECK-NEXT:    step.gelu %[[X]]{{$}}
// CHECK-NEXT:    step.gelu %[[X]] {approximate = "erf"}{{$}}
// CHECK-NEXT:    step.leaky_relu %[[X]]{{$}}
// CHECK-NEXT:    step.leaky_relu %[[X]]{{$}}
// CHECK-NEXT:    step.leaky_relu %[[X]] {alpha = 2.000000e-01 : f64}{{$}}
// CHECK-NEXT:    %[[POW:.+]] = step.pow %[[X]] {exponent = 3.000000e+00 : f64}{{$}}
// CHECK-NEXT:    step.dropout %[[X]] {rate = 1.000000e-01 : f64, seed = 7 : i64}{{$}}
// CHECK-NEXT:    step.jitter %[[X]] {eps = 1.000000e-02 : f64, seed = 5 : i64}{{$}}
// CHECK-NEXT:    %[[SUM:.+]] = step.sum %[[POW]] {axes = [0, 1]}{{$}}
// CHECK-NEXT:    step.loss %[[SUM]]{{$}}
// CHECK-NEXT:  }
// GENERIC:     "step.neg"(%{{.+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// GENERIC:     "step.gelu"(%{{.+}}) {approximate = "erf"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// GENERIC:     "step.pow"(%{{.+}}) {exponent = 3.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// GENERIC:     "step.sum"(%{{.+}}) {axes = [0, 1]} : (tensor<2x3xf32>) -> tensor<f32>

// -----

// Tests that unary ops keep the operand's type for every float dtype, and that neg and abs also
// take integers.
func.func @unary_ops_typed(%f: tensor<2x3xf32>, %b: tensor<4xbf16>, %h: tensor<1x1x5xf16>,
                           %d: tensor<f64>, %i: tensor<7xi32>, %l: tensor<2x2xi64>,
                           %step: tensor<i64>) {
  %0 = step.neg %i : tensor<7xi32>
  %1 = step.abs %l : tensor<2x2xi64>
  %2 = step.exp %b : tensor<4xbf16>
  %3 = step.log %h : tensor<1x1x5xf16>
  %4 = step.sqrt %d : tensor<f64>
  %5 = step.rsqrt %f : tensor<2x3xf32>
  %6 = step.tanh %b : tensor<4xbf16>
  %7 = step.sigmoid %h : tensor<1x1x5xf16>
  %8 = step.relu %d : tensor<f64>
  %9 = step.silu %f : tensor<2x3xf32>
  %10 = step.gelu %f {approximate = "erf"} : tensor<2x3xf32>
  %11 = step.gelu %b : tensor<4xbf16>
  %12 = step.leaky_relu %h {alpha = 0.5} : tensor<1x1x5xf16>
  %13 = step.pow %d {exponent = -0.5} : tensor<f64>
  %14 = step.dropout %b {rate = 0.0, seed = 0} : tensor<4xbf16>
  %j14 = step.jitter %b, %step {eps = 0.5, seed = 2} : tensor<4xbf16>, tensor<i64>
  return
}
// CHECK-LABEL: func.func @unary_ops_typed
// CHECK: step.neg %{{.+}} : tensor<7xi32> -> tensor<7xi32>
// CHECK: step.abs %{{.+}} : tensor<2x2xi64> -> tensor<2x2xi64>
// CHECK: step.exp %{{.+}} : tensor<4xbf16> -> tensor<4xbf16>
// CHECK: step.log %{{.+}} : tensor<1x1x5xf16> -> tensor<1x1x5xf16>
// CHECK: step.sqrt %{{.+}} : tensor<f64> -> tensor<f64>
// CHECK: step.rsqrt %{{.+}} : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK: step.tanh %{{.+}} : tensor<4xbf16> -> tensor<4xbf16>
// CHECK: step.sigmoid %{{.+}} : tensor<1x1x5xf16> -> tensor<1x1x5xf16>
// CHECK: step.relu %{{.+}} : tensor<f64> -> tensor<f64>
// CHECK: step.silu %{{.+}} : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK: step.gelu %{{.+}} {approximate = "erf"} : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK: step.gelu %{{[^ ]+}} : tensor<4xbf16> -> tensor<4xbf16>
// CHECK: step.leaky_relu %{{.+}} {alpha = 5.000000e-01 : f64} : tensor<1x1x5xf16> -> tensor<1x1x5xf16>
// CHECK: step.pow %{{.+}} {exponent = -5.000000e-01 : f64} : tensor<f64> -> tensor<f64>
// CHECK: step.dropout %{{.+}} {rate = 0.000000e+00 : f64, seed = 0 : i64} : tensor<4xbf16> -> tensor<4xbf16>
// CHECK: step.jitter %{{.+}}, %{{.+}} {eps = 5.000000e-01 : f64, seed = 2 : i64} : tensor<4xbf16>, tensor<i64> -> tensor<4xbf16>

// -----

// Tests that binary ops broadcast NumPy-style inside a model: a bias row, a column against a row,
// a scalar, and rank extension.
step.model @binary_broadcast_in_model dims(B = 4, D = 8) {
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 8)
  %bias = step.param "bias" [D] f32 = zeros
  %col = step.param "col" [B, 1] f32 = ones
  %row = step.param "row" [1, D] f32 = ones
  %s = step.param "scale" [1] f32 = ones
  %cube = step.param "cube" [3, 1, 1] f32 = ones
  %add = step.add %x, %bias
  %sub = step.sub %col, %row
  %mul = step.mul %s, %add
  %div = step.div %mul, %col
  %max = step.max %div, %cube
  %min = step.min %row, %sub
  %total = step.mean %max {axes = [0, 1, 2]}
  step.loss %total
}
// CHECK-LABEL: step.model @binary_broadcast_in_model
// CHECK:         %[[X:.+]], %{{.+}} = step.input "data"
// CHECK:         %[[BIAS:.+]] = step.param "bias" [8] f32 = zeros
// CHECK-NEXT:    %[[COL:.+]] = step.param "col" [4, 1] f32 = ones
// CHECK-NEXT:    %[[ROW:.+]] = step.param "row" [1, 8] f32 = ones
// CHECK-NEXT:    %[[S:.+]] = step.param "scale" [1] f32 = ones
// CHECK-NEXT:    %[[CUBE:.+]] = step.param "cube" [3, 1, 1] f32 = ones
// CHECK-NEXT:    %[[ADD:.+]] = step.add %[[X]], %[[BIAS]]{{$}}
// CHECK-NEXT:    %[[SUB:.+]] = step.sub %[[COL]], %[[ROW]]{{$}}
// CHECK-NEXT:    %[[MUL:.+]] = step.mul %[[S]], %[[ADD]]{{$}}
// CHECK-NEXT:    %[[DIV:.+]] = step.div %[[MUL]], %[[COL]]{{$}}
// CHECK-NEXT:    %[[MAX:.+]] = step.max %[[DIV]], %[[CUBE]]{{$}}
// CHECK-NEXT:    step.min %[[ROW]], %[[SUB]]{{$}}
// CHECK-NEXT:    %[[TOTAL:.+]] = step.mean %[[MAX]] {axes = [0, 1, 2]}
// CHECK-NEXT:    step.loss %[[TOTAL]]
// GENERIC:     "step.add"(%{{.+}}, %{{.+}}) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC:     "step.sub"(%{{.+}}, %{{.+}}) : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// GENERIC:     "step.mul"(%{{.+}}, %{{.+}}) : (tensor<1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC:     "step.div"(%{{.+}}, %{{.+}}) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// GENERIC:     "step.max"(%{{.+}}, %{{.+}}) : (tensor<4x8xf32>, tensor<3x1x1xf32>) -> tensor<3x4x8xf32>
// GENERIC:     "step.min"(%{{.+}}, %{{.+}}) : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC:     "step.mean"(%{{.+}}) {axes = [0, 1, 2]} : (tensor<3x4x8xf32>) -> tensor<f32>

// -----

// Tests that the broadcasting binary ops infer the broadcast shape, for floats and integers.
func.func @binary_broadcast_typed(%a: tensor<4x8xf32>, %bias: tensor<8xf32>, %col: tensor<4x1xf32>,
                                  %row: tensor<1x8xf32>, %s: tensor<f32>, %c: tensor<2x1x3xbf16>,
                                  %d: tensor<5x1xbf16>, %i: tensor<3x1xi32>, %j: tensor<3x7xi32>,
                                  %k: tensor<6xi64>) {
  %0 = step.add %a, %bias : tensor<4x8xf32>, tensor<8xf32>
  %1 = step.sub %col, %row : tensor<4x1xf32>, tensor<1x8xf32>
  %2 = step.mul %c, %d : tensor<2x1x3xbf16>, tensor<5x1xbf16>
  %3 = step.div %s, %a : tensor<f32>, tensor<4x8xf32>
  %4 = step.max %i, %j : tensor<3x1xi32>, tensor<3x7xi32>
  %5 = step.min %k, %k : tensor<6xi64>, tensor<6xi64>
  %6 = step.add %row, %col : tensor<1x8xf32>, tensor<4x1xf32>
  return
}
// CHECK-LABEL: func.func @binary_broadcast_typed
// CHECK: step.add %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK: step.sub %{{.+}}, %{{.+}} : tensor<4x1xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK: step.mul %{{.+}}, %{{.+}} : tensor<2x1x3xbf16>, tensor<5x1xbf16> -> tensor<2x5x3xbf16>
// CHECK: step.div %{{.+}}, %{{.+}} : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: step.max %{{.+}}, %{{.+}} : tensor<3x1xi32>, tensor<3x7xi32> -> tensor<3x7xi32>
// CHECK: step.min %{{.+}}, %{{.+}} : tensor<6xi64>, tensor<6xi64> -> tensor<6xi64>
// CHECK: step.add %{{.+}}, %{{.+}} : tensor<1x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>

// -----

// Tests that compare gives an i1 mask of the broadcast shape for every predicate, and that select
// broadcasts its three operands and takes the choices' element type.
func.func @compare_select_typed(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<3x1xi32>,
                                %j: tensor<1x5xi32>, %m: tensor<4x1xi1>, %t: tensor<1x8xf16>,
                                %f: tensor<f16>) {
  %0 = step.compare %a, %b {predicate = "lt"} : tensor<4x8xf32>, tensor<8xf32>
  %1 = step.compare %a, %b {predicate = "le"} : tensor<4x8xf32>, tensor<8xf32>
  %2 = step.compare %b, %a {predicate = "gt"} : tensor<8xf32>, tensor<4x8xf32>
  %3 = step.compare %a, %a {predicate = "ge"} : tensor<4x8xf32>, tensor<4x8xf32>
  %4 = step.compare %i, %j {predicate = "eq"} : tensor<3x1xi32>, tensor<1x5xi32>
  %5 = step.compare %i, %j {predicate = "ne"} : tensor<3x1xi32>, tensor<1x5xi32>
  %6 = step.select %m, %t, %f : tensor<4x1xi1>, tensor<1x8xf16>, tensor<f16>
  %7 = step.select %0, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>
  %8 = step.select %4, %i, %j : tensor<3x5xi1>, tensor<3x1xi32>, tensor<1x5xi32>
  return
}
// CHECK-LABEL: func.func @compare_select_typed
// CHECK: %[[LT:.+]] = step.compare %{{.+}}, %{{.+}} {predicate = "lt"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
// CHECK: step.compare %{{.+}}, %{{.+}} {predicate = "le"} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xi1>
// CHECK: step.compare %{{.+}}, %{{.+}} {predicate = "gt"} : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK: step.compare %{{.+}}, %{{.+}} {predicate = "ge"} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK: %[[EQ:.+]] = step.compare %{{.+}}, %{{.+}} {predicate = "eq"} : tensor<3x1xi32>, tensor<1x5xi32> -> tensor<3x5xi1>
// CHECK: step.compare %{{.+}}, %{{.+}} {predicate = "ne"} : tensor<3x1xi32>, tensor<1x5xi32> -> tensor<3x5xi1>
// CHECK: step.select %{{.+}}, %{{.+}}, %{{.+}} : tensor<4x1xi1>, tensor<1x8xf16>, tensor<f16> -> tensor<4x8xf16>
// CHECK: step.select %[[LT]], %{{.+}}, %{{.+}} : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK: step.select %[[EQ]], %{{.+}}, %{{.+}} : tensor<3x5xi1>, tensor<3x1xi32>, tensor<1x5xi32> -> tensor<3x5xi32>

// -----

// Tests that compare and select work inside a model (a masked ReLU), inferring the mask type.
step.model @compare_select_in_model dims(B = 4, D = 8) {
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 8)
  %zero = step.param "zero" [1] f32 = zeros
  %mask = step.compare %x, %zero {predicate = "gt"}
  %relu = step.select %mask, %x, %zero
  %m = step.mean %relu {axes = [0, 1]}
  step.loss %m
}
// CHECK-LABEL: step.model @compare_select_in_model
// CHECK:         %[[X:.+]], %{{.+}} = step.input
// CHECK-NEXT:    %[[ZERO:.+]] = step.param "zero" [1] f32 = zeros
// CHECK-NEXT:    %[[MASK:.+]] = step.compare %[[X]], %[[ZERO]] {predicate = "gt"}{{$}}
// CHECK-NEXT:    step.select %[[MASK]], %[[X]], %[[ZERO]]{{$}}
// GENERIC:     "step.compare"(%{{.+}}, %{{.+}}) {predicate = "gt"} : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xi1>
// GENERIC:     "step.select"(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>

// -----

// Tests that reductions infer their result shapes: single and multiple axes, negative axes,
// keepdim, all axes (a scalar), and integer operands.
func.func @reductions_typed(%x: tensor<2x3x4xf32>, %i: tensor<5x6xi32>) {
  %0 = step.sum %x {axes = [1]} : tensor<2x3x4xf32>
  %1 = step.sum %x {axes = [-1], keepdim} : tensor<2x3x4xf32>
  %2 = step.mean %x {axes = [0, 2]} : tensor<2x3x4xf32>
  %3 = step.mean %x {axes = [2, 0, 1]} : tensor<2x3x4xf32>
  %4 = step.mean %x {axes = [0, -1], keepdim} : tensor<2x3x4xf32>
  %5 = step.reduce_max %x {axes = [1], keepdim} : tensor<2x3x4xf32>
  %6 = step.reduce_max %x {axes = [1]} : tensor<2x3x4xf32>
  %7 = step.reduce_max %i {axes = [-2]} : tensor<5x6xi32>
  %8 = step.sum %i {axes = [0, 1], keepdim} : tensor<5x6xi32>
  return
}
// CHECK-LABEL: func.func @reductions_typed
// CHECK: step.sum %{{.+}} {axes = [1]} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK: step.sum %{{.+}} {axes = [-1], keepdim} : tensor<2x3x4xf32> -> tensor<2x3x1xf32>
// CHECK: step.mean %{{.+}} {axes = [0, 2]} : tensor<2x3x4xf32> -> tensor<3xf32>
// CHECK: step.mean %{{.+}} {axes = [2, 0, 1]} : tensor<2x3x4xf32> -> tensor<f32>
// CHECK: step.mean %{{.+}} {axes = [0, -1], keepdim} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
// CHECK: step.reduce_max %{{.+}} {axes = [1], keepdim} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK: step.reduce_max %{{.+}} {axes = [1]} : tensor<2x3x4xf32> -> tensor<2x4xf32>
// CHECK: step.reduce_max %{{.+}} {axes = [-2]} : tensor<5x6xi32> -> tensor<6xi32>
// CHECK: step.sum %{{.+}} {axes = [0, 1], keepdim} : tensor<5x6xi32> -> tensor<1x1xi32>

// -----

// Tests that reductions work inside a model, with a keepdim result fed back into a broadcast.
step.model @reductions_in_model dims(B = 2, S = 3, D = 4) {
  %x = step.param "x" [B, S, D] f32 = normal(std = 1.0)
  %mx = step.reduce_max %x {axes = [-1], keepdim}
  %shifted = step.sub %x, %mx
  %s = step.sum %shifted {axes = [1]}
  %m = step.mean %s {axes = [0, 1]}
  step.loss %m
}
// CHECK-LABEL: step.model @reductions_in_model
// CHECK:         %[[X:.+]] = step.param "x" [2, 3, 4] f32 = normal(std = 1.000000e+00)
// CHECK-NEXT:    %[[MX:.+]] = step.reduce_max %[[X]] {axes = [-1], keepdim}{{$}}
// CHECK-NEXT:    %[[SH:.+]] = step.sub %[[X]], %[[MX]]{{$}}
// CHECK-NEXT:    %[[S:.+]] = step.sum %[[SH]] {axes = [1]}{{$}}
// CHECK-NEXT:    %[[M:.+]] = step.mean %[[S]] {axes = [0, 1]}{{$}}
// CHECK-NEXT:    step.loss %[[M]]
// GENERIC:     "step.reduce_max"(%{{.+}}) {axes = [-1], keepdim} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// GENERIC:     "step.sub"(%{{.+}}, %{{.+}}) : (tensor<2x3x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xf32>
// GENERIC:     "step.sum"(%{{.+}}) {axes = [1]} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// GENERIC:     "step.mean"(%{{.+}}) {axes = [0, 1]} : (tensor<2x4xf32>) -> tensor<f32>

// -----

// Tests that matmul infers its result shape: plain, each transpose, both transposes, a 3-D and a
// 4-D left operand with a shared 2-D right operand, and bf16.
func.func @matmul_typed(%a: tensor<4x8xf32>, %at: tensor<8x4xf32>, %w: tensor<8x16xf32>,
                        %wt: tensor<16x8xf32>, %x3: tensor<2x4x8xf32>,
                        %x4: tensor<2x3x4x8xf32>, %hb: tensor<5x8xbf16>, %wb: tensor<8x2xbf16>) {
  %0 = step.matmul %a, %w : tensor<4x8xf32>, tensor<8x16xf32>
  %1 = step.matmul %at, %w {transpose_lhs} : tensor<8x4xf32>, tensor<8x16xf32>
  %2 = step.matmul %a, %wt {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32>
  %3 = step.matmul %at, %wt {transpose_lhs, transpose_rhs} : tensor<8x4xf32>, tensor<16x8xf32>
  %4 = step.matmul %x3, %w : tensor<2x4x8xf32>, tensor<8x16xf32>
  %5 = step.matmul %x4, %wt {transpose_rhs} : tensor<2x3x4x8xf32>, tensor<16x8xf32>
  %6 = step.matmul %hb, %wb : tensor<5x8xbf16>, tensor<8x2xbf16>
  return
}
// CHECK-LABEL: func.func @matmul_typed
// CHECK: step.matmul %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK: step.matmul %{{.+}}, %{{.+}} {transpose_lhs} : tensor<8x4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK: step.matmul %{{.+}}, %{{.+}} {transpose_rhs} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK: step.matmul %{{.+}}, %{{.+}} {transpose_lhs, transpose_rhs} : tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK: step.matmul %{{.+}}, %{{.+}} : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
// CHECK: step.matmul %{{.+}}, %{{.+}} {transpose_rhs} : tensor<2x3x4x8xf32>, tensor<16x8xf32> -> tensor<2x3x4x16xf32>
// CHECK: step.matmul %{{.+}}, %{{.+}} : tensor<5x8xbf16>, tensor<8x2xbf16> -> tensor<5x2xbf16>

// -----

// Tests that batch_matmul infers its result shape: plain, transposed operands (attention
// scores) and 4-D.
func.func @batch_matmul_typed(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>,
                              %at: tensor<2x8x4xf32>, %q: tensor<2x3x5x8xf32>,
                              %k: tensor<2x3x7x8xf32>) {
  %0 = step.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<2x8x16xf32>
  %1 = step.batch_matmul %at, %b {transpose_lhs} : tensor<2x8x4xf32>, tensor<2x8x16xf32>
  %2 = step.batch_matmul %q, %k {transpose_rhs} : tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>
  %3 = step.batch_matmul %at, %a {transpose_lhs, transpose_rhs} : tensor<2x8x4xf32>, tensor<2x4x8xf32>
  return
}
// CHECK-LABEL: func.func @batch_matmul_typed
// CHECK: step.batch_matmul %{{.+}}, %{{.+}} : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
// CHECK: step.batch_matmul %{{.+}}, %{{.+}} {transpose_lhs} : tensor<2x8x4xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
// CHECK: step.batch_matmul %{{.+}}, %{{.+}} {transpose_rhs} : tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32> -> tensor<2x3x5x7xf32>
// CHECK: step.batch_matmul %{{.+}}, %{{.+}} {transpose_lhs, transpose_rhs} : tensor<2x8x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>

// -----

// Tests that contractions work inside a model: matmuls (3-D activations against 2-D weights, a
// transposed weight) and a batch_matmul attention product.
step.model @contractions_in_model dims(B = 2, S = 4, D = 8, H = 16) {
  %x = step.param "x" [B, S, D] f32 = normal(std = 1.0)
  %w = step.param "w" [D, H] f32 = normal(std = 0.02)
  %wt = step.param "wt" [D, H] f32 = normal(std = 0.02)
  %h = step.matmul %x, %w
  %back = step.matmul %h, %wt {transpose_rhs}
  %scores = step.batch_matmul %back, %x {transpose_rhs}
  %ctx = step.batch_matmul %scores, %x
  %m = step.mean %ctx {axes = [0, 1, 2]}
  step.loss %m
}
// CHECK-LABEL: step.model @contractions_in_model
// CHECK:         %[[X:.+]] = step.param "x" [2, 4, 8] f32
// CHECK-NEXT:    %[[W:.+]] = step.param "w" [8, 16] f32 = normal(std = 2.000000e-02)
// CHECK-NEXT:    %[[WT:.+]] = step.param "wt" [8, 16] f32
// CHECK-NEXT:    %[[H:.+]] = step.matmul %[[X]], %[[W]]{{$}}
// CHECK-NEXT:    %[[BACK:.+]] = step.matmul %[[H]], %[[WT]] {transpose_rhs}{{$}}
// CHECK-NEXT:    %[[SC:.+]] = step.batch_matmul %[[BACK]], %[[X]] {transpose_rhs}{{$}}
// CHECK-NEXT:    step.batch_matmul %[[SC]], %[[X]]{{$}}
// GENERIC:     "step.matmul"(%{{.+}}, %{{.+}}) : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
// GENERIC:     "step.matmul"(%{{.+}}, %{{.+}}) {transpose_rhs} : (tensor<2x4x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>
// GENERIC:     "step.batch_matmul"(%{{.+}}, %{{.+}}) {transpose_rhs} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
// GENERIC:     "step.batch_matmul"(%{{.+}}, %{{.+}}) : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>

// -----

// Tests that embedding appends the table width to the ids' shape, for i32 and i64 ids of
// several ranks and a bf16 table.
func.func @embedding_typed(%table: tensor<256x16xf32>, %ids: tensor<2x8xi32>, %ids64: tensor<5xi64>,
                           %one: tensor<i32>, %tb: tensor<10x3xbf16>) {
  %0 = step.embedding %table, %ids : tensor<256x16xf32>, tensor<2x8xi32>
  %1 = step.embedding %table, %ids64 : tensor<256x16xf32>, tensor<5xi64>
  %2 = step.embedding %table, %one : tensor<256x16xf32>, tensor<i32>
  %3 = step.embedding %tb, %ids : tensor<10x3xbf16>, tensor<2x8xi32>
  return
}
// CHECK-LABEL: func.func @embedding_typed
// CHECK: step.embedding %{{.+}}, %{{.+}} : tensor<256x16xf32>, tensor<2x8xi32> -> tensor<2x8x16xf32>
// CHECK: step.embedding %{{.+}}, %{{.+}} : tensor<256x16xf32>, tensor<5xi64> -> tensor<5x16xf32>
// CHECK: step.embedding %{{.+}}, %{{.+}} : tensor<256x16xf32>, tensor<i32> -> tensor<16xf32>
// CHECK: step.embedding %{{.+}}, %{{.+}} : tensor<10x3xbf16>, tensor<2x8xi32> -> tensor<2x8x3xbf16>

// -----

// Tests that conv1d infers its result shape: causal padding (the default, elided when written)
// keeps the sequence length, valid padding shrinks it by K - 1; grouped and depthwise convolutions.
func.func @conv1d_typed(%x: tensor<2x10x4xf32>, %w: tensor<3x4x6xf32>, %wg: tensor<3x2x6xf32>,
                        %wd: tensor<5x1x4xf32>, %wfull: tensor<10x4x1xf32>) {
  %0 = step.conv1d %x, %w : tensor<2x10x4xf32>, tensor<3x4x6xf32>
  %1 = step.conv1d %x, %w {padding = "causal", groups = 1} : tensor<2x10x4xf32>, tensor<3x4x6xf32>
  %2 = step.conv1d %x, %w {padding = "valid"} : tensor<2x10x4xf32>, tensor<3x4x6xf32>
  %3 = step.conv1d %x, %wg {groups = 2} : tensor<2x10x4xf32>, tensor<3x2x6xf32>
  %4 = step.conv1d %x, %wd {padding = "valid", groups = 4} : tensor<2x10x4xf32>, tensor<5x1x4xf32>
  %5 = step.conv1d %x, %wfull {padding = "valid"} : tensor<2x10x4xf32>, tensor<10x4x1xf32>
  return
}
// CHECK-LABEL: func.func @conv1d_typed
// CHECK: step.conv1d %{{[^ ]+}}, %{{[^ ]+}} : tensor<2x10x4xf32>, tensor<3x4x6xf32> -> tensor<2x10x6xf32>
// CHECK: step.conv1d %{{[^ ]+}}, %{{[^ ]+}} : tensor<2x10x4xf32>, tensor<3x4x6xf32> -> tensor<2x10x6xf32>
// CHECK: step.conv1d %{{.+}}, %{{.+}} {padding = "valid"} : tensor<2x10x4xf32>, tensor<3x4x6xf32> -> tensor<2x8x6xf32>
// CHECK: step.conv1d %{{.+}}, %{{.+}} {groups = 2 : i64} : tensor<2x10x4xf32>, tensor<3x2x6xf32> -> tensor<2x10x6xf32>
// CHECK: step.conv1d %{{.+}}, %{{.+}} {groups = 4 : i64, padding = "valid"} : tensor<2x10x4xf32>, tensor<5x1x4xf32> -> tensor<2x6x4xf32>
// CHECK: step.conv1d %{{.+}}, %{{.+}} {padding = "valid"} : tensor<2x10x4xf32>, tensor<10x4x1xf32> -> tensor<2x1x1xf32>

// -----

// Tests that embedding and conv1d work inside a model (a byte-level convolutional LM).
step.model @embedding_conv1d_in_model dims(B = 2, S = 8, F = 4, K = 3) {
  %tokens, %targets = step.input "bytes" [B, S] i32 = token_stream(vocab = 256)
  %table = step.param "embedding" [256, F] f32 = normal(std = 0.02)
  %w = step.param "conv" [K, F, 256] f32 = normal(std = 0.02)
  %wd = step.param "depthwise" [K, 1, F] f32 = normal(std = 0.02)
  %x = step.embedding %table, %tokens
  %d = step.conv1d %x, %wd {groups = 4}
  %logits = step.conv1d %d, %w {padding = "causal"}
  %loss = step.cross_entropy %logits, %targets
  step.loss %loss
}
// CHECK-LABEL: step.model @embedding_conv1d_in_model
// CHECK:         %[[TOK:.+]], %[[TGT:.+]] = step.input "bytes" [2, 8] i32 = token_stream(vocab = 256)
// CHECK-NEXT:    %[[TABLE:.+]] = step.param "embedding" [256, 4] f32
// CHECK-NEXT:    %[[W:.+]] = step.param "conv" [3, 4, 256] f32
// CHECK-NEXT:    %[[WD:.+]] = step.param "depthwise" [3, 1, 4] f32
// CHECK-NEXT:    %[[X:.+]] = step.embedding %[[TABLE]], %[[TOK]]{{$}}
// CHECK-NEXT:    %[[D:.+]] = step.conv1d %[[X]], %[[WD]] {groups = 4 : i64}{{$}}
// CHECK-NEXT:    %[[LOGITS:.+]] = step.conv1d %[[D]], %[[W]]{{$}}
// CHECK-NEXT:    %[[LOSS:.+]] = step.cross_entropy %[[LOGITS]], %[[TGT]]{{$}}
// CHECK-NEXT:    step.loss %[[LOSS]]
// GENERIC:     "step.input"() {{.+}} : () -> (tensor<2x8xi32>, tensor<2x8xi32>)
// GENERIC:     "step.embedding"(%{{.+}}, %{{.+}}) : (tensor<256x4xf32>, tensor<2x8xi32>) -> tensor<2x8x4xf32>
// GENERIC:     "step.conv1d"(%{{.+}}, %{{.+}}) {groups = 4 : i64, padding = "causal"} : (tensor<2x8x4xf32>, tensor<3x1x4xf32>) -> tensor<2x8x4xf32>
// GENERIC:     "step.conv1d"(%{{.+}}, %{{.+}}) {groups = 1 : i64, padding = "causal"} : (tensor<2x8x4xf32>, tensor<3x4x256xf32>) -> tensor<2x8x256xf32>
// GENERIC:     "step.cross_entropy"(%{{.+}}, %{{.+}}) {reduction = "mean"} : (tensor<2x8x256xf32>, tensor<2x8xi32>) -> tensor<f32>

// -----

// Tests that the axis ops (cumsum, also reversed, softmax, log_softmax) and the normalisations
// keep their input's shape, and that default axes and eps are elided.
func.func @scans_and_norms_typed(%x: tensor<2x8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>,
                                 %i: tensor<3x4xi32>, %h: tensor<4x6xbf16>, %gh: tensor<6xbf16>) {
  %0 = step.cumsum %x {axis = 1} : tensor<2x8x16xf32>
  %1 = step.cumsum %x {axis = -1, reverse} : tensor<2x8x16xf32>
  %2 = step.cumsum %i {axis = 0} : tensor<3x4xi32>
  %3 = step.softmax %x : tensor<2x8x16xf32>
  %4 = step.softmax %x {axis = -1} : tensor<2x8x16xf32>
  %5 = step.softmax %x {axis = 0} : tensor<2x8x16xf32>
  %6 = step.log_softmax %h {axis = -2} : tensor<4x6xbf16>
  %7 = step.log_softmax %h : tensor<4x6xbf16>
  %8 = step.layer_norm %x, %g, %b : tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %9 = step.layer_norm %x, %g, %b {eps = 1.0e-3} : tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  %10 = step.rms_norm %x, %g : tensor<2x8x16xf32>, tensor<16xf32>
  %11 = step.rms_norm %h, %gh {eps = 1.0e-5} : tensor<4x6xbf16>, tensor<6xbf16>
  return
}
// CHECK-LABEL: func.func @scans_and_norms_typed
// CHECK: step.cumsum %{{.+}} {axis = 1 : i64} : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
// CHECK: step.cumsum %{{.+}} {axis = -1 : i64, reverse} : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
// CHECK: step.cumsum %{{.+}} {axis = 0 : i64} : tensor<3x4xi32> -> tensor<3x4xi32>
// CHECK: step.softmax %{{[^ ]+}} : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
// CHECK: step.softmax %{{[^ ]+}} : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
// CHECK: step.softmax %{{.+}} {axis = 0 : i64} : tensor<2x8x16xf32> -> tensor<2x8x16xf32>
// CHECK: step.log_softmax %{{.+}} {axis = -2 : i64} : tensor<4x6xbf16> -> tensor<4x6xbf16>
// CHECK: step.log_softmax %{{[^ ]+}} : tensor<4x6xbf16> -> tensor<4x6xbf16>
// CHECK: step.layer_norm %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} : tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x8x16xf32>
// CHECK: step.layer_norm %{{.+}} {eps = 1.000000e-03 : f64} : tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x8x16xf32>
// CHECK: step.rms_norm %{{[^ ]+}}, %{{[^ ]+}} : tensor<2x8x16xf32>, tensor<16xf32> -> tensor<2x8x16xf32>
// CHECK: step.rms_norm %{{.+}} {eps = 1.000000e-05 : f64} : tensor<4x6xbf16>, tensor<6xbf16> -> tensor<4x6xbf16>

// -----

// Tests that cross_entropy's mean (the default) and sum give a scalar and "none" gives one loss
// per position; with i64 targets and bf16 logits.
func.func @cross_entropy_typed(%logits: tensor<2x8x256xf32>, %t: tensor<2x8xi32>,
                               %l2: tensor<4x10xbf16>, %t64: tensor<4xi64>,
                               %l1: tensor<10xf32>, %t0: tensor<i32>) {
  %0 = step.cross_entropy %logits, %t : tensor<2x8x256xf32>, tensor<2x8xi32>
  %1 = step.cross_entropy %logits, %t {reduction = "mean"} : tensor<2x8x256xf32>, tensor<2x8xi32>
  %2 = step.cross_entropy %logits, %t {reduction = "sum"} : tensor<2x8x256xf32>, tensor<2x8xi32>
  %3 = step.cross_entropy %logits, %t {reduction = "none"} : tensor<2x8x256xf32>, tensor<2x8xi32>
  %4 = step.cross_entropy %l2, %t64 {reduction = "none"} : tensor<4x10xbf16>, tensor<4xi64>
  %5 = step.cross_entropy %l2, %t64 : tensor<4x10xbf16>, tensor<4xi64>
  %6 = step.cross_entropy %l1, %t0 {reduction = "none"} : tensor<10xf32>, tensor<i32>
  return
}
// CHECK-LABEL: func.func @cross_entropy_typed
// CHECK: step.cross_entropy %{{[^ ]+}}, %{{[^ ]+}} : tensor<2x8x256xf32>, tensor<2x8xi32> -> tensor<f32>
// CHECK: step.cross_entropy %{{[^ ]+}}, %{{[^ ]+}} : tensor<2x8x256xf32>, tensor<2x8xi32> -> tensor<f32>
// CHECK: step.cross_entropy %{{.+}} {reduction = "sum"} : tensor<2x8x256xf32>, tensor<2x8xi32> -> tensor<f32>
// CHECK: step.cross_entropy %{{.+}} {reduction = "none"} : tensor<2x8x256xf32>, tensor<2x8xi32> -> tensor<2x8xf32>
// CHECK: step.cross_entropy %{{.+}} {reduction = "none"} : tensor<4x10xbf16>, tensor<4xi64> -> tensor<4xbf16>
// CHECK: step.cross_entropy %{{[^ ]+}}, %{{[^ ]+}} : tensor<4x10xbf16>, tensor<4xi64> -> tensor<bf16>
// CHECK: step.cross_entropy %{{.+}} {reduction = "none"} : tensor<10xf32>, tensor<i32> -> tensor<f32>

// -----

// Tests that normalisations and losses work inside a model: layer_norm, rms_norm, softmax,
// log_softmax, cumsum and a per-position cross_entropy reduced to the loss.
step.model @norms_and_losses_in_model dims(B = 2, S = 4, V = 16) {
  %tokens, %targets = step.input "bytes" [B, S] i64 = token_stream(vocab = 16)
  %table = step.param "embedding" [V, V] f32 = normal(std = 0.02)
  %g = step.param "gamma" [V] f32 = ones
  %b = step.param "beta" [V] f32 = zeros
  %x = step.embedding %table, %tokens
  %ln = step.layer_norm %x, %g, %b {eps = 1.0e-5}
  %rms = step.rms_norm %ln, %g
  %c = step.cumsum %rms {axis = 1, reverse}
  %p = step.softmax %c {axis = 1}
  %lp = step.log_softmax %p
  %per = step.cross_entropy %lp, %targets {reduction = "none"}
  %loss = step.mean %per {axes = [0, 1]}
  step.loss %loss
}
// CHECK-LABEL: step.model @norms_and_losses_in_model
// CHECK:         %[[TOK:.+]], %[[TGT:.+]] = step.input "bytes" [2, 4] i64 = token_stream(vocab = 16)
// CHECK:         %[[X:.+]] = step.embedding
// CHECK-NEXT:    %[[LN:.+]] = step.layer_norm %[[X]], %[[G:.+]], %{{.+}}{{$}}
// CHECK-NEXT:    %[[RMS:.+]] = step.rms_norm %[[LN]], %[[G]]{{$}}
// CHECK-NEXT:    %[[C:.+]] = step.cumsum %[[RMS]] {axis = 1 : i64, reverse}{{$}}
// CHECK-NEXT:    %[[P:.+]] = step.softmax %[[C]] {axis = 1 : i64}{{$}}
// CHECK-NEXT:    %[[LP:.+]] = step.log_softmax %[[P]]{{$}}
// CHECK-NEXT:    %[[PER:.+]] = step.cross_entropy %[[LP]], %[[TGT]] {reduction = "none"}{{$}}
// CHECK-NEXT:    %[[LOSS:.+]] = step.mean %[[PER]] {axes = [0, 1]}
// CHECK-NEXT:    step.loss %[[LOSS]]
// GENERIC:     "step.layer_norm"(%{{.+}}, %{{.+}}, %{{.+}}) {eps = 1.000000e-05 : f64} : (tensor<2x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
// GENERIC:     "step.rms_norm"(%{{.+}}, %{{.+}}) {eps = 9.9999999999999995E-7 : f64} : (tensor<2x4x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
// GENERIC:     "step.cross_entropy"(%{{.+}}, %{{.+}}) {reduction = "none"} : (tensor<2x4x16xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>

// -----

// Tests that the shape ops infer their result types: reshape (with -1 and with 0 copying a size),
// transpose, broadcast, slice (with and without strides), split, concat and pad.
func.func @shape_ops_typed(%x: tensor<2x3x4xf32>, %v: tensor<4xf32>, %c: tensor<3x1xi32>,
                           %m: tensor<8x16xf32>, %a: tensor<2x3xbf16>, %b: tensor<4x3xbf16>,
                           %one: tensor<1x1xf32>, %k: tensor<2x1xbf16>) {
  %0 = step.reshape %x {shape = [6, 4]} : tensor<2x3x4xf32>
  %1 = step.reshape %x {shape = [-1, 4]} : tensor<2x3x4xf32>
  %2 = step.reshape %x {shape = [2, -1]} : tensor<2x3x4xf32>
  %3 = step.reshape %x {shape = [24]} : tensor<2x3x4xf32>
  %4 = step.reshape %one {shape = []} : tensor<1x1xf32>
  %5 = step.reshape %x {shape = [0, 0, 2, -1]} : tensor<2x3x4xf32>
  %6 = step.transpose %x {perm = [2, 0, 1]} : tensor<2x3x4xf32>
  %7 = step.transpose %m {perm = [1, 0]} : tensor<8x16xf32>
  %8 = step.broadcast %v {shape = [2, 3, 4]} : tensor<4xf32>
  %9 = step.broadcast %c {shape = [2, 3, 5]} : tensor<3x1xi32>
  %10 = step.slice %m {start = [0, 4], limit = [8, 12]} : tensor<8x16xf32>
  %11 = step.slice %m {start = [1, 0], limit = [8, 16], strides = [2, 3]} : tensor<8x16xf32>
  %12:3 = step.split %x {axis = 1, parts = 3} : tensor<2x3x4xf32>
  %13:2 = step.split %x {axis = -1, parts = 2} : tensor<2x3x4xf32>
  %14 = step.concat %a, %b {axis = 0} : tensor<2x3xbf16>, tensor<4x3xbf16>
  %15 = step.concat %a, %k, %a {axis = -1} : tensor<2x3xbf16>, tensor<2x1xbf16>, tensor<2x3xbf16>
  %16 = step.concat %v {axis = 0} : tensor<4xf32>
  %17 = step.pad %m {low = [1, 0], high = [0, 2]} : tensor<8x16xf32>
  %18 = step.pad %c {low = [0, 3], high = [1, 1], value = 7.0} : tensor<3x1xi32>
  return
}
// CHECK-LABEL: func.func @shape_ops_typed
// CHECK: step.reshape %{{.+}} {shape = [6, 4]} : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK: step.reshape %{{.+}} {shape = [-1, 4]} : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK: step.reshape %{{.+}} {shape = [2, -1]} : tensor<2x3x4xf32> -> tensor<2x12xf32>
// CHECK: step.reshape %{{.+}} {shape = [24]} : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK: step.reshape %{{.+}} {shape = []} : tensor<1x1xf32> -> tensor<f32>
// CHECK: step.reshape %{{.+}} {shape = [0, 0, 2, -1]} : tensor<2x3x4xf32> -> tensor<2x3x2x2xf32>
// CHECK: step.transpose %{{.+}} {perm = [2, 0, 1]} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK: step.transpose %{{.+}} {perm = [1, 0]} : tensor<8x16xf32> -> tensor<16x8xf32>
// CHECK: step.broadcast %{{.+}} {shape = [2, 3, 4]} : tensor<4xf32> -> tensor<2x3x4xf32>
// CHECK: step.broadcast %{{.+}} {shape = [2, 3, 5]} : tensor<3x1xi32> -> tensor<2x3x5xi32>
// CHECK: step.slice %{{.+}} {limit = [8, 12], start = [0, 4]} : tensor<8x16xf32> -> tensor<8x8xf32>
// CHECK: step.slice %{{.+}} {limit = [8, 16], start = [1, 0], strides = [2, 3]} : tensor<8x16xf32> -> tensor<4x6xf32>
// CHECK: step.split %{{.+}} {axis = 1 : i64, parts = 3 : i64} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>
// CHECK: step.split %{{.+}} {axis = -1 : i64, parts = 2 : i64} : tensor<2x3x4xf32> -> tensor<2x3x2xf32>, tensor<2x3x2xf32>
// CHECK: step.concat %{{.+}}, %{{.+}} {axis = 0 : i64} : tensor<2x3xbf16>, tensor<4x3xbf16> -> tensor<6x3xbf16>
// CHECK: step.concat %{{.+}}, %{{.+}}, %{{.+}} {axis = -1 : i64} : tensor<2x3xbf16>, tensor<2x1xbf16>, tensor<2x3xbf16> -> tensor<2x7xbf16>
// CHECK: step.concat %{{.+}} {axis = 0 : i64} : tensor<4xf32> -> tensor<4xf32>
// CHECK: step.pad %{{.+}} {high = [0, 2], low = [1, 0]} : tensor<8x16xf32> -> tensor<9x18xf32>
// CHECK: step.pad %{{.+}} {high = [1, 1], low = [0, 3], value = 7.000000e+00 : f64} : tensor<3x1xi32> -> tensor<4x5xi32>

// -----

// Tests that the shape ops work inside a model, including multi-result splits whose results are
// used by name and (after printing) by number.
step.model @shape_ops_in_model dims(B = 2, S = 4, D = 6) {
  %x = step.param "x" [B, S, D] f32 = normal(std = 1.0)
  %q, %k, %v = step.split %x {axis = -1, parts = 3}
  %all:2 = step.split %x {axis = 0, parts = 2}
  %qt = step.transpose %q {perm = [0, 2, 1]}
  %flat = step.reshape %qt {shape = [0, -1]}
  %b = step.broadcast %flat {shape = [3, 2, 8]}
  %s = step.slice %b {start = [0, 0, 1], limit = [3, 2, 8], strides = [1, 1, 2]}
  %p = step.pad %s {low = [0, 1, 0], high = [0, 0, 1], value = 0.0}
  %cat = step.concat %k, %v {axis = 2}
  %m1 = step.mean %p {axes = [0, 1, 2]}
  %m2 = step.mean %cat {axes = [0, 1, 2]}
  %tot = step.add %m1, %m2
  step.loss %tot
}
// CHECK-LABEL: step.model @shape_ops_in_model
// CHECK:         %[[X:.+]] = step.param "x" [2, 4, 6] f32
// CHECK-NEXT:    %[[QKV:.+]]:3 = step.split %[[X]] {axis = -1 : i64, parts = 3 : i64}{{$}}
// CHECK-NEXT:    %{{.+}}:2 = step.split %[[X]] {axis = 0 : i64, parts = 2 : i64}{{$}}
// CHECK-NEXT:    %[[QT:.+]] = step.transpose %[[QKV]]#0 {perm = [0, 2, 1]}{{$}}
// CHECK-NEXT:    %[[FLAT:.+]] = step.reshape %[[QT]] {shape = [0, -1]}{{$}}
// CHECK-NEXT:    %[[B:.+]] = step.broadcast %[[FLAT]] {shape = [3, 2, 8]}{{$}}
// CHECK-NEXT:    %[[S:.+]] = step.slice %[[B]] {limit = [3, 2, 8], start = [0, 0, 1], strides = [1, 1, 2]}{{$}}
// CHECK-NEXT:    %[[P:.+]] = step.pad %[[S]] {high = [0, 0, 1], low = [0, 1, 0]}{{$}}
// CHECK-NEXT:    step.concat %[[QKV]]#1, %[[QKV]]#2 {axis = 2 : i64}{{$}}
// GENERIC:     "step.split"(%{{.+}}) {axis = -1 : i64, parts = 3 : i64} : (tensor<2x4x6xf32>) -> (tensor<2x4x2xf32>, tensor<2x4x2xf32>, tensor<2x4x2xf32>)
// GENERIC:     "step.split"(%{{.+}}) {axis = 0 : i64, parts = 2 : i64} : (tensor<2x4x6xf32>) -> (tensor<1x4x6xf32>, tensor<1x4x6xf32>)
// GENERIC:     "step.transpose"(%{{.+}}) {perm = [0, 2, 1]} : (tensor<2x4x2xf32>) -> tensor<2x2x4xf32>
// GENERIC:     "step.reshape"(%{{.+}}) {shape = [0, -1]} : (tensor<2x2x4xf32>) -> tensor<2x8xf32>
// GENERIC:     "step.broadcast"(%{{.+}}) {shape = [3, 2, 8]} : (tensor<2x8xf32>) -> tensor<3x2x8xf32>
// GENERIC:     "step.slice"(%{{.+}}) {limit = [3, 2, 8], start = [0, 0, 1], strides = [1, 1, 2]} : (tensor<3x2x8xf32>) -> tensor<3x2x4xf32>
// GENERIC:     "step.pad"(%{{.+}}) {high = [0, 0, 1], low = [0, 1, 0], value = 0.000000e+00 : f64} : (tensor<3x2x4xf32>) -> tensor<3x3x5xf32>
// GENERIC:     "step.concat"(%{{.+}}, %{{.+}}) {axis = 2 : i64} : (tensor<2x4x2xf32>, tensor<2x4x2xf32>) -> tensor<2x4x4xf32>

// -----

// Tests that cast, constant, iota (from a shape and from an operand's shape) and dropout infer
// their result types.
func.func @cast_constant_iota_typed(%x: tensor<2x3xf32>, %i: tensor<4xi32>, %t: tensor<2x8xi32>)
    -> (tensor<f32>, tensor<3xi32>, tensor<2x2xbf16>, tensor<3x4xi32>, tensor<5xf32>) {
  %0 = step.cast %x {to = bf16} : tensor<2x3xf32>
  %1 = step.cast %i {to = f32} : tensor<4xi32>
  %2 = step.cast %x {to = i1} : tensor<2x3xf32>
  %3 = step.cast %i {to = i64} : tensor<4xi32>
  %c0 = step.constant {value = dense<0.5> : tensor<f32>}
  %c1 = step.constant {value = dense<[1, 2, 3]> : tensor<3xi32>}
  %c2 = step.constant {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xbf16>}
  %i0 = step.iota {shape = [3, 4], axis = 1, dtype = i32, offset = 1}
  %i1 = step.iota {shape = [5], dtype = f32}
  %i2 = step.iota %t {axis = 1, dtype = f32, offset = 1} : tensor<2x8xi32>
  %i3 = step.iota %x {dtype = i64} : tensor<2x3xf32>
  %5 = step.dropout %x {rate = 0.5, seed = 42} : tensor<2x3xf32>
  return %c0, %c1, %c2, %i0, %i1 : tensor<f32>, tensor<3xi32>, tensor<2x2xbf16>, tensor<3x4xi32>, tensor<5xf32>
}
// CHECK-LABEL: func.func @cast_constant_iota_typed
// CHECK: step.cast %{{.+}} {to = bf16} : tensor<2x3xf32> -> tensor<2x3xbf16>
// CHECK: step.cast %{{.+}} {to = f32} : tensor<4xi32> -> tensor<4xf32>
// CHECK: step.cast %{{.+}} {to = i1} : tensor<2x3xf32> -> tensor<2x3xi1>
// CHECK: step.cast %{{.+}} {to = i64} : tensor<4xi32> -> tensor<4xi64>
// CHECK: %[[C0:.+]] = step.constant {value = dense<5.000000e-01> : tensor<f32>}{{$}}
// CHECK: %[[C1:.+]] = step.constant {value = dense<[1, 2, 3]> : tensor<3xi32>}{{$}}
// CHECK: %[[C2:.+]] = step.constant {value = dense<{{.+}}> : tensor<2x2xbf16>}{{$}}
// CHECK: %[[I0:.+]] = step.iota {axis = 1 : i64, dtype = i32, offset = 1 : i64, shape = [3, 4]}{{$}}
// CHECK: %[[I1:.+]] = step.iota {dtype = f32, shape = [5]}{{$}}
// CHECK: step.iota %{{.+}} {axis = 1 : i64, dtype = f32, offset = 1 : i64} : tensor<2x8xi32> -> tensor<2x8xf32>
// CHECK: step.iota %{{.+}} {dtype = i64} : tensor<2x3xf32> -> tensor<2x3xi64>
// CHECK: step.dropout %{{.+}} {rate = 5.000000e-01 : f64, seed = 42 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK: return %[[C0]], %[[C1]], %[[C2]], %[[I0]], %[[I1]] : tensor<f32>, tensor<3xi32>, tensor<2x2xbf16>, tensor<3x4xi32>, tensor<5xf32>
// GENERIC: "step.constant"() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
// GENERIC: "step.constant"() {value = dense<[1, 2, 3]> : tensor<3xi32>} : () -> tensor<3xi32>
// GENERIC: "step.iota"() {axis = 1 : i64, dtype = i32, offset = 1 : i64, shape = [3, 4]} : () -> tensor<3x4xi32>
// GENERIC: "step.iota"() {axis = 0 : i64, dtype = f32, offset = 0 : i64, shape = [5]} : () -> tensor<5xf32>

// -----

// Tests that cast, constant, iota and dropout work inside a model (a position-scaled,
// mixed-precision path).
step.model @cast_constant_iota_in_model dims(B = 2, S = 4) {
  %x = step.param "x" [B, S] f32 = normal(std = 1.0)
  %half = step.constant {value = dense<0.5> : tensor<f32>}
  %pos = step.iota %x {axis = 1, dtype = f32, offset = 1}
  %pos2 = step.iota {shape = [4], dtype = f32}
  %h = step.cast %x {to = bf16}
  %back = step.cast %h {to = f32}
  %d = step.dropout %back {rate = 0.25, seed = 3}
  %scaled = step.mul %d, %half
  %y = step.div %scaled, %pos
  %z = step.add %y, %pos2
  %m = step.mean %z {axes = [0, 1]}
  step.loss %m
}
// CHECK-LABEL: step.model @cast_constant_iota_in_model
// CHECK:         %[[X:.+]] = step.param "x" [2, 4] f32
// CHECK-NEXT:    %[[HALF:.+]] = step.constant {value = dense<5.000000e-01> : tensor<f32>}{{$}}
// CHECK-NEXT:    %[[POS:.+]] = step.iota %[[X]] {axis = 1 : i64, dtype = f32, offset = 1 : i64}{{$}}
// CHECK-NEXT:    %[[POS2:.+]] = step.iota {dtype = f32, shape = [4]}{{$}}
// CHECK-NEXT:    %[[H:.+]] = step.cast %[[X]] {to = bf16}{{$}}
// CHECK-NEXT:    %[[BACK:.+]] = step.cast %[[H]] {to = f32}{{$}}
// CHECK-NEXT:    %[[D:.+]] = step.dropout %[[BACK]] {rate = 2.500000e-01 : f64, seed = 3 : i64}{{$}}
// CHECK-NEXT:    %[[SC:.+]] = step.mul %[[D]], %[[HALF]]{{$}}
// CHECK-NEXT:    step.div %[[SC]], %[[POS]]{{$}}
// GENERIC:     "step.iota"(%{{.+}}) {axis = 1 : i64, dtype = f32, offset = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
// GENERIC:     "step.cast"(%{{.+}}) {to = bf16} : (tensor<2x4xf32>) -> tensor<2x4xbf16>
// GENERIC:     "step.mul"(%{{.+}}, %{{.+}}) : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>

// -----

// Tests that result types written explicitly after `->` are accepted when they match inference.
func.func @explicit_result_types(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %w: tensor<8x2xf32>) {
  %0 = step.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = step.matmul %0, %w : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  %2:2 = step.split %1 {axis = 1, parts = 2} : tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x1xf32>
  return
}
// CHECK-LABEL: func.func @explicit_result_types
// CHECK: %[[ADD:.+]] = step.add %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK: %[[MM:.+]] = step.matmul %[[ADD]], %{{.+}} : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
// CHECK: step.split %[[MM]] {axis = 1 : i64, parts = 2 : i64} : tensor<4x2xf32> -> tensor<4x1xf32>, tensor<4x1xf32>

// -----

// Tests that step.param takes every initialiser kind and its parameters, every float dtype, named
// dims, dim expressions (products, sums, parentheses, dims defined from dims), and that
// float-valued initialiser parameters given as integers print as floats.
step.model @params_every_init dims(F = 4, I = 2, H = 4 * F, G = (F + I) * 2) {
  %z = step.param "z" [F] f32 = zeros
  %zg = step.param "zg" [F] f32 = zeros(gain = 2.0)
  %o = step.param "o" [F] bf16 = ones
  %og = step.param "og" [F] f16 = ones(gain = 0.5)
  %c = step.param "c" [F] f64 = constant(value = 0.25)
  %cg = step.param "cg" [F] f32 = constant(value = 1, gain = 3)
  %n = step.param "n" [F, H] f32 = normal(std = 0.02)
  %nm = step.param "nm" [F, H] f32 = normal(std = 0.02, mean = 1.0, gain = 1.5)
  %u = step.param "u" [F, 3 * I] f32 = uniform(a = -0.1, b = 0.1)
  %ug = step.param "ug" [G] f32 = uniform(a = 0, b = 1, gain = 2.0)
  %q = step.param "q" [F, F + I] f32 = orthogonal
  %qg = step.param "qg" [2, F, F] f32 = orthogonal(gain = 1.6967)
  %e = step.param "empty_parens" [1] f32 = zeros()
  %s = step.param "scalar" [] f32 = constant(value = 1.0)
  %l = step.sum %z {axes = [0]}
  %t = step.add %l, %s
  step.loss %t
}
// CHECK-LABEL: step.model @params_every_init dims(F = 4, G = 12, H = 16, I = 2) {
// CHECK-NEXT:    %[[Z:.+]] = step.param "z" [4] f32 = zeros{{$}}
// CHECK-NEXT:    step.param "zg" [4] f32 = zeros(gain = 2.000000e+00){{$}}
// CHECK-NEXT:    step.param "o" [4] bf16 = ones{{$}}
// CHECK-NEXT:    step.param "og" [4] f16 = ones(gain = 5.000000e-01){{$}}
// CHECK-NEXT:    step.param "c" [4] f64 = constant(value = 2.500000e-01){{$}}
// CHECK-NEXT:    step.param "cg" [4] f32 = constant(gain = 3.000000e+00, value = 1.000000e+00){{$}}
// CHECK-NEXT:    step.param "n" [4, 16] f32 = normal(std = 2.000000e-02){{$}}
// CHECK-NEXT:    step.param "nm" [4, 16] f32 = normal(gain = 1.500000e+00, mean = 1.000000e+00, std = 2.000000e-02){{$}}
// CHECK-NEXT:    step.param "u" [4, 6] f32 = uniform(a = -1.000000e-01, b = 1.000000e-01){{$}}
// CHECK-NEXT:    step.param "ug" [12] f32 = uniform(a = 0.000000e+00, b = 1.000000e+00, gain = 2.000000e+00){{$}}
// CHECK-NEXT:    step.param "q" [4, 6] f32 = orthogonal{{$}}
// CHECK-NEXT:    step.param "qg" [2, 4, 4] f32 = orthogonal(gain = 1.696700e+00){{$}}
// CHECK-NEXT:    step.param "empty_parens" [1] f32 = zeros{{$}}
// CHECK-NEXT:    %[[S:.+]] = step.param "scalar" [] f32 = constant(value = 1.000000e+00){{$}}
// CHECK-NEXT:    %[[L:.+]] = step.sum %[[Z]] {axes = [0]}
// CHECK-NEXT:    %[[T:.+]] = step.add %[[L]], %[[S]]
// CHECK-NEXT:    step.loss %[[T]]
// GENERIC:     "step.param"() {init = {kind = "zeros"}, name = "z", type = tensor<4xf32>} : () -> tensor<4xf32>
// GENERIC:     "step.param"() {init = {gain = 3.000000e+00 : f64, kind = "constant", value = 1.000000e+00 : f64}, name = "cg", type = tensor<4xf32>} : () -> tensor<4xf32>
// GENERIC:     "step.param"() {init = {kind = "orthogonal"}, name = "q", type = tensor<4x6xf32>} : () -> tensor<4x6xf32>

// -----

// Tests that step.input takes both data sources: token_stream gives tokens and targets of the
// declared integer type, classification the features and i32 labels [B] (also for rank-3 features).
// The logits have the vocabulary's 256 classes: targets of a 256-token vocabulary must fit them.
step.model @inputs_both_sources dims(B = 3, S = 5) {
  %tokens, %targets = step.input "bytes" [B, S] i32 = token_stream(vocab = 256)
  %t64, %g64 = step.input "wide" [B, S] i64 = token_stream(vocab = 50257)
  %img, %labels = step.input "images" [B, 4, 4] f16 = classification(classes = 10)
  %feat, %cls = step.input "features" [B, 7] f64 = classification(classes = 2)
  %table = step.param "emb" [256, 256] f32 = zeros
  %e = step.embedding %table, %tokens
  %loss = step.cross_entropy %e, %targets {reduction = "sum"}
  step.loss %loss
}
// CHECK-LABEL: step.model @inputs_both_sources dims(B = 3, S = 5) {
// CHECK-NEXT:    %[[TOK:.+]], %[[TGT:.+]] = step.input "bytes" [3, 5] i32 = token_stream(vocab = 256){{$}}
// CHECK-NEXT:    step.input "wide" [3, 5] i64 = token_stream(vocab = 50257){{$}}
// CHECK-NEXT:    step.input "images" [3, 4, 4] f16 = classification(classes = 10){{$}}
// CHECK-NEXT:    step.input "features" [3, 7] f64 = classification(classes = 2){{$}}
// CHECK-NEXT:    %[[TABLE:.+]] = step.param "emb" [256, 256] f32 = zeros
// CHECK-NEXT:    %[[E:.+]] = step.embedding %[[TABLE]], %[[TOK]]{{$}}
// CHECK-NEXT:    %[[LOSS:.+]] = step.cross_entropy %[[E]], %[[TGT]] {reduction = "sum"}{{$}}
// CHECK-NEXT:    step.loss %[[LOSS]]
// GENERIC:     "step.input"() {name = "bytes", source = {kind = "token_stream", vocab = 256 : i64}, type = tensor<3x5xi32>} : () -> (tensor<3x5xi32>, tensor<3x5xi32>)
// GENERIC:     "step.input"() {name = "wide", source = {kind = "token_stream", vocab = 50257 : i64}, type = tensor<3x5xi64>} : () -> (tensor<3x5xi64>, tensor<3x5xi64>)
// GENERIC:     "step.input"() {name = "images", source = {classes = 10 : i64, kind = "classification"}, type = tensor<3x4x4xf16>} : () -> (tensor<3x4x4xf16>, tensor<3xi32>)
// GENERIC:     "step.input"() {name = "features", source = {classes = 2 : i64, kind = "classification"}, type = tensor<3x7xf64>} : () -> (tensor<3x7xf64>, tensor<3xi32>)
// GENERIC:     "step.cross_entropy"(%{{.+}}, %{{.+}}) {reduction = "sum"} : (tensor<3x5x256xf32>, tensor<3x5xi32>) -> tensor<f32>

// -----

// Tests that a config takes adam, the constant schedule, no clipping, no SAM, micro_batches and
// f32 precision, and that entries print in a fixed order whatever order they are written in.
step.model @config_adam_constant dims(B = 2) {
  %w = step.param "w" [B] f32 = zeros
  %l = step.sum %w {axes = [0]}
  step.loss %l
  step.config {
    precision = f32,
    sam = none,
    clip = none,
    micro_batches = 2,
    schedule = constant,
    optimizer = adam(lr = 3.0e-4)
  }
}
// CHECK-LABEL: step.model @config_adam_constant
// CHECK:         step.config {
// CHECK-NEXT:      optimizer = adam(lr = 3.000000e-04),
// CHECK-NEXT:      schedule = constant,
// CHECK-NEXT:      clip = none,
// CHECK-NEXT:      sam = none,
// CHECK-NEXT:      micro_batches = 2,
// CHECK-NEXT:      precision = f32
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// -----

// Tests that a config takes sgd (all parameters), warmup_cosine with min_lr, global_norm clipping,
// SAM with its defaults and f16 precision; and adam with all its parameters in a second model.
step.model @config_sgd_warmup_cosine {
  %w = step.param "w" [2] f32 = zeros
  %l = step.sum %w {axes = [0]}
  step.loss %l
  step.config {
    optimizer = sgd(lr = 0.1, momentum = 0.9, nesterov = true, weight_decay = 1.0e-4),
    schedule = warmup_cosine(warmup = 10, total = 100, min_lr = 1.0e-5),
    clip = global_norm(max_norm = 1),
    sam = sam,
    precision = f16
  }
}
step.model @config_adam_full {
  %w = step.param "w" [2] f32 = zeros
  %l = step.sum %w {axes = [0]}
  step.loss %l
  step.config {
    optimizer = adam(lr = 1.0e-3, beta1 = 0.8, beta2 = 0.99, eps = 1.0e-6),
    schedule = warmup_cosine(warmup = 0, total = 1)
  }
}
// CHECK-LABEL: step.model @config_sgd_warmup_cosine
// CHECK:         step.config {
// CHECK-NEXT:      optimizer = sgd(lr = 1.000000e-01, momentum = 9.000000e-01, nesterov = true, weight_decay = 1.000000e-04),
// CHECK-NEXT:      schedule = warmup_cosine(min_lr = 1.000000e-05, total = 100, warmup = 10),
// CHECK-NEXT:      clip = global_norm(max_norm = 1.000000e+00),
// CHECK-NEXT:      sam = sam,
// CHECK-NEXT:      precision = f16
// CHECK-NEXT:    }
// CHECK-LABEL: step.model @config_adam_full
// CHECK:         step.config {
// CHECK-NEXT:      optimizer = adam(beta1 = 8.000000e-01, beta2 = 0.98999999999999999, eps = 9.9999999999999995E-7, lr = 1.000000e-03),
// CHECK-NEXT:      schedule = warmup_cosine(total = 1, warmup = 0)
// CHECK-NEXT:    }

// -----

// Tests that a config takes adamw (all parameters, a no_decay list), one_cycle, agc clipping with
// all parameters, SAM with all parameters and bf16 precision.
step.model @config_adamw_one_cycle {
  %w = step.param "w" [2] f32 = zeros
  %l = step.sum %w {axes = [0]}
  step.loss %l
  step.config {
    optimizer = adamw(lr = 1.0e-3, beta1 = 0.9, beta2 = 0.95, eps = 1.0e-8, weight_decay = 0.1,
                      no_decay = ["b*", "*.norm"]),
    schedule = one_cycle(warmup = 100, total = 1000, start_lr = 3.0e-4, final_lr = 3.0e-5),
    clip = agc(lambda = 0.02, eps_param = 1.0e-3, eps_grad = 1.0e-6),
    sam = sam(rho = 0.1, adaptive = true, next_batch = true),
    micro_batches = 8,
    precision = bf16
  }
}
// CHECK-LABEL: step.model @config_adamw_one_cycle
// CHECK:         step.config {
// CHECK-NEXT:      optimizer = adamw(beta1 = 9.000000e-01, beta2 = 0.94999999999999996, eps = 1.000000e-08, lr = 1.000000e-03, no_decay = ["b*", "*.norm"], weight_decay = 1.000000e-01),
// CHECK-NEXT:      schedule = one_cycle(final_lr = 3.000000e-05, start_lr = 3.000000e-04, total = 1000, warmup = 100),
// CHECK-NEXT:      clip = agc(eps_grad = 9.9999999999999995E-7, eps_param = 1.000000e-03, lambda = 2.000000e-02),
// CHECK-NEXT:      sam = sam(adaptive = true, next_batch = true, rho = 1.000000e-01),
// CHECK-NEXT:      micro_batches = 8,
// CHECK-NEXT:      precision = bf16
// CHECK-NEXT:    }

// -----

// Tests that a config may be empty, that agc takes its defaults, and that a model needs neither a
// config nor dims.
step.model @config_empty {
  %w = step.param "w" [2] f32 = zeros
  %l = step.sum %w {axes = [0]}
  step.loss %l
  step.config {}
}
step.model @config_agc_defaults {
  %w = step.param "w" [2] f32 = zeros
  %l = step.sum %w {axes = [0]}
  step.loss %l
  step.config {
    clip = agc,
    optimizer = adamw(lr = 1)
  }
}
step.model @no_config {
  %w = step.param "w" [2] f32 = zeros
  %l = step.sum %w {axes = [0]}
  step.loss %l
}
// CHECK-LABEL: step.model @config_empty {
// CHECK:         step.loss
// CHECK-NEXT:    step.config {}
// CHECK-NEXT:  }
// CHECK-LABEL: step.model @config_agc_defaults {
// CHECK:         step.config {
// CHECK-NEXT:      optimizer = adamw(lr = 1.000000e+00),
// CHECK-NEXT:      clip = agc
// CHECK-NEXT:    }
// CHECK-LABEL: step.model @no_config {
// CHECK:         step.loss
// CHECK-NEXT:  }

// -----

// Tests that step.repeat and step.yield work inside a model: a per-layer parameter, a carried
// value, a count from a named dim, and a result of the carried type.
step.model @repeat_residual dims(B = 2, F = 4, depth = 3) {
  %x = step.param "x" [B, F] f32 = normal(std = 1.0)
  %out = step.repeat "cell" depth (%h = %x) {
    %w = step.param "w" [F, F] f32 = orthogonal
    %y = step.matmul %h, %w
    %r = step.add %h, %y
    step.yield %r
  }
  %m = step.mean %out {axes = [0, 1]}
  step.loss %m
}
// CHECK-LABEL: step.model @repeat_residual dims(B = 2, F = 4, depth = 3) {
// CHECK-NEXT:    %[[X:.+]] = step.param "x" [2, 4] f32
// CHECK-NEXT:    %[[OUT:.+]] = step.repeat "cell" 3 (%[[H:.+]] = %[[X]]) {
// CHECK-NEXT:      %[[W:.+]] = step.param "w" [4, 4] f32 = orthogonal
// CHECK-NEXT:      %[[Y:.+]] = step.matmul %[[H]], %[[W]]{{$}}
// CHECK-NEXT:      %[[R:.+]] = step.add %[[H]], %[[Y]]{{$}}
// CHECK-NEXT:      step.yield %[[R]]{{$}}
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[M:.+]] = step.mean %[[OUT]] {axes = [0, 1]}
// CHECK-NEXT:    step.loss %[[M]]
// GENERIC:     "step.repeat"(%{{.+}}) ({
// GENERIC-NEXT: ^bb0(%{{.+}}: tensor<2x4xf32>):
// GENERIC:     "step.yield"(%{{.+}}) : (tensor<2x4xf32>) -> ()
// GENERIC-NEXT: }) {count = 3 : i64, name = "cell"{{.*}}} : (tensor<2x4xf32>) -> tensor<2x4xf32>

// -----

// Tests that a repeat can carry two values of different types, nest, carry nothing, and hold
// extra attributes (written after the `attributes` keyword).
step.model @repeat_nested dims(B = 2, F = 4) {
  %x = step.param "x" [B, F] f32 = normal(std = 1.0)
  %s = step.param "s" [] f32 = zeros
  %a, %b = step.repeat "outer" 2 (%h = %x, %acc = %s) attributes {note = "two carried"} {
    %inner = step.repeat "inner" F (%g = %h) {
      %w = step.param "w" [F, F] f32 = orthogonal
      %y = step.matmul %g, %w
      step.yield %y
    }
    %m = step.mean %inner {axes = [0, 1]}
    %acc2 = step.add %acc, %m
    step.yield %inner, %acc2
  }
  step.repeat "empty" 1 () {
  }
  step.loss %b
}
// CHECK-LABEL: step.model @repeat_nested
// CHECK:         %[[X:.+]] = step.param "x" [2, 4] f32
// CHECK-NEXT:    %[[S:.+]] = step.param "s" [] f32 = zeros
// CHECK-NEXT:    %[[AB:.+]]:2 = step.repeat "outer" 2 (%[[H:.+]] = %[[X]], %[[ACC:.+]] = %[[S]]) attributes {note = "two carried"} {
// CHECK-NEXT:      %[[IN:.+]] = step.repeat "inner" 4 (%[[G:.+]] = %[[H]]) {
// CHECK-NEXT:        %[[W:.+]] = step.param "w" [4, 4] f32 = orthogonal
// CHECK-NEXT:        %[[Y:.+]] = step.matmul %[[G]], %[[W]]
// CHECK-NEXT:        step.yield %[[Y]]
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[M:.+]] = step.mean %[[IN]] {axes = [0, 1]}
// CHECK-NEXT:      %[[ACC2:.+]] = step.add %[[ACC]], %[[M]]
// CHECK-NEXT:      step.yield %[[IN]], %[[ACC2]]
// CHECK-NEXT:    }
// CHECK-NEXT:    step.repeat "empty" 1 () {
// CHECK-NEXT:      step.yield{{$}}
// CHECK-NEXT:    }
// CHECK-NEXT:    step.loss %[[AB]]#1
// GENERIC:     }) {count = 4 : i64, name = "inner"{{.*}}} : (tensor<2x4xf32>) -> tensor<2x4xf32>
// GENERIC:     }) {count = 2 : i64, name = "outer", note = "two carried"{{.*}}} : (tensor<2x4xf32>, tensor<f32>) -> (tensor<2x4xf32>, tensor<f32>)
// GENERIC:     }) {count = 1 : i64, name = "empty"{{.*}}} : () -> ()

// -----

// Tests that step.repeat works outside a model, where carried values and every op print types.
func.func @repeat_typed(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %0 = step.repeat "cell" 3 (%h = %x : tensor<2x4xf32>) {
    %1 = step.matmul %h, %w : tensor<2x4xf32>, tensor<4x4xf32>
    step.yield %1 : tensor<2x4xf32>
  }
  return %0 : tensor<2x4xf32>
}
// CHECK-LABEL: func.func @repeat_typed
// CHECK-NEXT:    %[[R:.+]] = step.repeat "cell" 3 (%[[H:.+]] = %{{.+}} : tensor<2x4xf32>) {
// CHECK-NEXT:      %[[MM:.+]] = step.matmul %[[H]], %{{.+}} : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:      step.yield %[[MM]] : tensor<2x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]] : tensor<2x4xf32>

// -----

// Tests that a complete model in the style of models/mlp.mlir round-trips: dims, an input,
// parameters, a dense network, the loss and a config; values print with declaration names.
step.model @mlp_like dims(B = 8, D = 4, H = 16, C = 3) attributes {step.note = "kept"} {
  %x, %labels = step.input "data" [B, D] f32 = classification(classes = 3)
  %w1 = step.param "w1" [D, H] f32 = normal(std = 0.1768)
  %b1 = step.param "b1" [H] f32 = zeros
  %w2 = step.param "w2" [H, C] f32 = normal(std = 0.0884)
  %h = step.matmul %x, %w1
  %hb = step.add %h, %b1
  %a = step.gelu %hb
  %logits = step.matmul %a, %w2
  %loss = step.cross_entropy %logits, %labels
  step.loss %loss
  step.config {
    optimizer = adamw(lr = 1.0e-3, weight_decay = 0.01, no_decay = ["b*"]),
    schedule = warmup_cosine(warmup = 20, total = 500),
    clip = global_norm(max_norm = 1.0),
    sam = none
  }
}
// CHECK-LABEL: step.model @mlp_like dims(B = 8, C = 3, D = 4, H = 16) attributes {step.note = "kept"} {
// CHECK-NEXT:    %[[X:.+]], %[[LABELS:.+]] = step.input "data" [8, 4] f32 = classification(classes = 3)
// CHECK-NEXT:    %[[W1:.+]] = step.param "w1" [4, 16] f32 = normal(std = 1.768000e-01)
// CHECK-NEXT:    %[[B1:.+]] = step.param "b1" [16] f32 = zeros
// CHECK-NEXT:    %[[W2:.+]] = step.param "w2" [16, 3] f32 = normal(std = 8.840000e-02)
// CHECK-NEXT:    %[[H:.+]] = step.matmul %[[X]], %[[W1]]{{$}}
// CHECK-NEXT:    %[[HB:.+]] = step.add %[[H]], %[[B1]]{{$}}
// CHECK-NEXT:    %[[A:.+]] = step.gelu %[[HB]]{{$}}
// CHECK-NEXT:    %[[LOGITS:.+]] = step.matmul %[[A]], %[[W2]]{{$}}
// CHECK-NEXT:    %[[LOSS:.+]] = step.cross_entropy %[[LOGITS]], %[[LABELS]]{{$}}
// CHECK-NEXT:    step.loss %[[LOSS]]{{$}}
// CHECK-NEXT:    step.config {
// CHECK-NEXT:      optimizer = adamw(lr = 1.000000e-03, no_decay = ["b*"], weight_decay = 1.000000e-02),
// CHECK-NEXT:      schedule = warmup_cosine(total = 500, warmup = 20),
// CHECK-NEXT:      clip = global_norm(max_norm = 1.000000e+00),
// CHECK-NEXT:      sam = none
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// GENERIC:     "step.input"() {{.+}} : () -> (tensor<8x4xf32>, tensor<8xi32>)
// GENERIC:     "step.matmul"(%{{.+}}, %{{.+}}) : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
// GENERIC:     "step.add"(%{{.+}}, %{{.+}}) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
// GENERIC:     "step.gelu"(%{{.+}}) {approximate = "tanh"} : (tensor<8x16xf32>) -> tensor<8x16xf32>
// GENERIC:     "step.matmul"(%{{.+}}, %{{.+}}) : (tensor<8x16xf32>, tensor<16x3xf32>) -> tensor<8x3xf32>
// GENERIC:     "step.cross_entropy"(%{{.+}}, %{{.+}}) {reduction = "mean"} : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
// GENERIC:     "step.loss"(%{{.+}}) : (tensor<f32>) -> ()

// -----

// Tests that the exact-stream ops (a reversible repeat's `streams = "exact"`) print and parse
// back, with their inferred types.
// CHECK-LABEL: func.func @exact_streams
// CHECK: step.quantize %{{.*}} {bits = 32 : i64} : tensor<4xf64> -> tensor<4xf64>
// CHECK: step.exact_scale %{{.*}}, %{{.*}} {bits = 32 : i64, den = 10 : i64, num = 9 : i64} : tensor<4xf64>, tensor<4xi64> -> tensor<4xf64>, tensor<4xi64>
// CHECK: step.exact_scale %{{.*}}, %{{.*}} {bits = 32 : i64, den = 10 : i64, inverse, num = 9 : i64}
func.func @exact_streams(%x: tensor<4xf64>, %b: tensor<4xi64>) -> (tensor<4xf64>, tensor<4xi64>) {
  %q = step.quantize %x {bits = 32} : tensor<4xf64>
  %y, %b1 = step.exact_scale %q, %b {num = 9, den = 10, bits = 32} : tensor<4xf64>, tensor<4xi64>
  %z, %b0 = step.exact_scale %y, %b1 {num = 9, den = 10, bits = 32, inverse} : tensor<4xf64>, tensor<4xi64>
  return %z, %b0 : tensor<4xf64>, tensor<4xi64>
}

// -----

// --shard-optimizer's collectives: this rank's block of the rows, and the blocks gathered.
// CHECK-LABEL: func.func @shard_ops
// CHECK: %[[B:.+]] = step.rank_shard %{{.+}} {parts = 2 : i64} : tensor<8x3xf32> -> tensor<4x3xf32>
// CHECK: step.all_gather %[[B]] {parts = 2 : i64} : tensor<4x3xf32> -> tensor<8x3xf32>
func.func @shard_ops(%w: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %b = step.rank_shard %w {parts = 2} : tensor<8x3xf32> -> tensor<4x3xf32>
  %g = step.all_gather %b {parts = 2} : tensor<4x3xf32> -> tensor<8x3xf32>
  return %g : tensor<8x3xf32>
}

// -----

// The overlapped reduction's halves, and the rank's last micro-batch.
// CHECK-LABEL: func.func @overlap_ops
// CHECK: %[[L:.+]] = step.last_micro_batch %{{.+}} : tensor<4x2x3xf32> -> tensor<2x3xf32>
// CHECK: %[[T:.+]] = step.all_reduce_start %[[L]] : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK: step.all_reduce_wait %[[T]] : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK: step.last_micro_batch %{{.+}} : tensor<4xi64> -> tensor<i64>
func.func @overlap_ops(%x: tensor<4x2x3xf32>, %i: tensor<4xi64>) -> (tensor<2x3xf32>, tensor<i64>) {
  %l = step.last_micro_batch %x : tensor<4x2x3xf32> -> tensor<2x3xf32>
  %t = step.all_reduce_start %l : tensor<2x3xf32> -> tensor<2x3xf32>
  %s = step.all_reduce_wait %t : tensor<2x3xf32> -> tensor<2x3xf32>
  %j = step.last_micro_batch %i : tensor<4xi64> -> tensor<i64>
  return %s, %j : tensor<2x3xf32>, tensor<i64>
}

// -----

// --shard-optimizer's reduce-scatter: a whole gradient with an owner per row, and one layer's
// gradient with one owner for all of it; the wait gives this rank's block.
// CHECK-LABEL: func.func @reduce_scatter_ops
// CHECK: %[[T:.+]] = step.reduce_scatter_start %{{.+}}, %{{.+}} {parts = 2 : i64} : tensor<4x3xf32>, tensor<4x1xi64> -> tensor<4x3xf32>
// CHECK: step.reduce_scatter_wait %[[T]] {parts = 2 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK: step.reduce_scatter_start %{{.+}}, %{{.+}} {parts = 2 : i64} : tensor<3xf32>, tensor<1xi64> -> tensor<3xf32>
func.func @reduce_scatter_ops(%g: tensor<4x3xf32>, %o: tensor<4x1xi64>, %l: tensor<3xf32>, %one: tensor<1xi64>) -> (tensor<2x3xf32>, tensor<3xf32>) {
  %t = step.reduce_scatter_start %g, %o {parts = 2} : tensor<4x3xf32>, tensor<4x1xi64> -> tensor<4x3xf32>
  %b = step.reduce_scatter_wait %t {parts = 2} : tensor<4x3xf32> -> tensor<2x3xf32>
  %s = step.reduce_scatter_start %l, %one {parts = 2} : tensor<3xf32>, tensor<1xi64> -> tensor<3xf32>
  return %b, %s : tensor<2x3xf32>, tensor<3xf32>
}
