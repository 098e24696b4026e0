// Tests --step-fold-unit-collapse: a gather whose result is read only through a collapse_shape
// of unit dims computes the collapsed tensor itself (so that it fuses with the consumer after
// the reshape). (b) an elementwise op that reads nothing by index and (c) a gather with a use
// other than the collapse stay as they are.
//
// RUN: %stepc-opt %s -split-input-file --step-fold-unit-collapse | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-fold-unit-collapse | %stepc-opt -split-input-file -o /dev/null

// (a) An MoE's input gradient brought back to token order ([8, 1, 4] rows gathered from
// [8, 4] by index), then collapsed to [8, 4]: the gather writes [8, 4], its loop over the unit
// dim gone (the index map read at 0), linalg.index 2 renumbered to 1; no collapse_shape left.
// CHECK-DAG: #[[IDX:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @gather_collapsed
// CHECK-SAME: (%[[SRC:.+]]: tensor<8x4xf32>, %[[I:.+]]: tensor<8x1xi32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[IDX]], #[[OUT]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[I]] : tensor<8x1xi32>) outs(%{{.+}} : tensor<8x4xf32>)
// CHECK: %[[COL:.+]] = linalg.index 1 : index
// CHECK: tensor.extract %[[SRC]][%{{.+}}, %[[COL]]] : tensor<8x4xf32>
// CHECK-NOT: tensor.collapse_shape
// CHECK: return %[[R]] : tensor<8x4xf32>
#idx = affine_map<(d0, d1, d2) -> (d0, d1)>
#out3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @gather_collapsed(%src: tensor<8x4xf32>, %i: tensor<8x1xi32>) -> tensor<8x4xf32> {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %e = tensor.empty() : tensor<8x1x4xf32>
  %g = linalg.generic {indexing_maps = [#idx, #out3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%i : tensor<8x1xi32>) outs(%e : tensor<8x1x4xf32>) {
  ^bb0(%r: i32, %o: f32):
    %row = arith.index_cast %r : i32 to index
    %lo = arith.maxsi %row, %c0 : index
    %at = arith.minsi %lo, %c7 : index
    %col = linalg.index 2 : index
    %v = tensor.extract %src[%at, %col] : tensor<8x4xf32>
    linalg.yield %v : f32
  } -> tensor<8x1x4xf32>
  %c = tensor.collapse_shape %g [[0], [1, 2]] : tensor<8x1x4xf32> into tensor<8x4xf32>
  return %c : tensor<8x4xf32>
}

// -----

// (b) Elementwise, no gather: left alone (canonicalization reshapes such ops already).
// CHECK-LABEL: func.func @not_a_gather
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: tensor.collapse_shape
#b3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @not_a_gather(%x: tensor<8x1x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x1x4xf32>
  %n = linalg.generic {indexing_maps = [#b3, #b3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<8x1x4xf32>) outs(%e : tensor<8x1x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.negf %v : f32
    linalg.yield %m : f32
  } -> tensor<8x1x4xf32>
  %c = tensor.collapse_shape %n [[0], [1, 2]] : tensor<8x1x4xf32> into tensor<8x4xf32>
  return %c : tensor<8x4xf32>
}

// -----

// (c) A gather also returned uncollapsed: left alone.
// CHECK-LABEL: func.func @other_use
// CHECK: %[[G:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: tensor.collapse_shape %[[G]]
#c_idx = affine_map<(d0, d1, d2) -> (d0, d1)>
#c_out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @other_use(%src: tensor<8x4xf32>, %i: tensor<8x1xi32>) -> (tensor<8x4xf32>, tensor<8x1x4xf32>) {
  %e = tensor.empty() : tensor<8x1x4xf32>
  %g = linalg.generic {indexing_maps = [#c_idx, #c_out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%i : tensor<8x1xi32>) outs(%e : tensor<8x1x4xf32>) {
  ^bb0(%r: i32, %o: f32):
    %row = arith.index_cast %r : i32 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %src[%row, %col] : tensor<8x4xf32>
    linalg.yield %v : f32
  } -> tensor<8x1x4xf32>
  %c = tensor.collapse_shape %g [[0], [1, 2]] : tensor<8x1x4xf32> into tensor<8x4xf32>
  return %c, %g : tensor<8x4xf32>, tensor<8x1x4xf32>
}
