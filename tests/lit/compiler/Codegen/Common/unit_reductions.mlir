// Tests --step-unit-reductions: a reduction whose reduction loops all have extent 1 and whose
// accumulator is a fill becomes an all-parallel generic over the other loops (the dropped loop
// read at index 0, the accumulator replaced by the fill's value: the same `fill + x` per
// element). (b) and (c) must stay reductions: a loop of extent 2, an accumulator that is not a
// fill.
//
// RUN: %stepc-opt %s -split-input-file --step-unit-reductions | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-unit-reductions | %stepc-opt -split-input-file -o /dev/null

// (a) An MoE's combine with k = 1: the weighted rows [8, 1, 4] summed over k into a zero fill
// (plus each element's column index, to show the loops' new numbering). The loop over k is
// gone, the fill too; linalg.index of the kept loop d2 is now d1, of the dropped d1 the
// constant 0.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1) -> (d0, 0, d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @unit_k
// CHECK-SAME: (%[[X:.+]]: tensor<8x1x4xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]] : tensor<8x1x4xf32>) outs(%{{.+}} : tensor<8x4xf32>)
// CHECK-NEXT: ^bb0(%[[V:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[J:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[K:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[JK:.+]] = arith.addi %[[J]], %[[K]] : index
// CHECK-NEXT: %[[I:.+]] = arith.index_cast %[[JK]] : index to i32
// CHECK-NEXT: %[[F:.+]] = arith.sitofp %[[I]] : i32 to f32
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[ZERO]], %[[V]] : f32
// CHECK-NEXT: %[[T:.+]] = arith.addf %[[S]], %[[F]] : f32
// CHECK-NEXT: linalg.yield %[[T]] : f32
// CHECK: return %[[R]]
#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out2 = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @unit_k(%x: tensor<8x1x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#in3, #out2], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<8x1x4xf32>) outs(%f : tensor<8x4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %j = linalg.index 2 : index
    %k = linalg.index 1 : index
    %jk = arith.addi %j, %k : index
    %i = arith.index_cast %jk : index to i32
    %fj = arith.sitofp %i : i32 to f32
    %s = arith.addf %acc, %v : f32
    %t = arith.addf %s, %fj : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// (b) k = 2: a real reduction, left alone.
// CHECK-LABEL: func.func @two_k
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "parallel"]
#b_in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#b_out = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @two_k(%x: tensor<8x2x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#b_in, #b_out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<8x2x4xf32>) outs(%f : tensor<8x4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// (c) A unit reduction accumulating into a value that is not a fill (an argument: each element
// adds to what it held), left alone.
// CHECK-LABEL: func.func @into_argument
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME: outs(%arg1 : tensor<8x4xf32>)
#c_in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#c_out = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @into_argument(%x: tensor<8x1x4xf32>, %acc0: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %r = linalg.generic {indexing_maps = [#c_in, #c_out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<8x1x4xf32>) outs(%acc0 : tensor<8x4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
