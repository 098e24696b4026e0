// Tests --step-unroll-reductions: a reduction over 2 to 4 points into a fill becomes an
// all-parallel generic applying the payload once per point, in loop order, from the fill's
// value (the same ((fill + x0) + x1) per element), and the producers it reads through fixed
// slices are split into one producer per slice, through chains of them.
//
// RUN: %stepc-opt %s -split-input-file --step-unroll-reductions | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-unroll-reductions | %stepc-opt -split-input-file -o /dev/null
// RUN: %stepc-opt %s -split-input-file --step-unroll-reductions --step-fuse-elementwise | FileCheck %s --check-prefix=FUSED

// (a) An MoE's combine with k = 2: rows gathered by index [8, 2, 4], times the gates [8, 2, 1],
// summed over k. The sum reads x at k = 0 and k = 1 (the gate likewise); the weighting is split
// into two [8, 4] producers, and the gather under it too (its linalg.index 1 now the constant
// 0 or 1). After fusion it is one kernel.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[G0:.+]] = affine_map<(d0, d1) -> (d0, 0, 0)>
// CHECK-DAG: #[[G1:.+]] = affine_map<(d0, d1) -> (d0, 1, 0)>
// CHECK-LABEL: func.func @combine_k2
// CHECK-NOT: linalg.fill
// CHECK: %[[ROW0:.+]] = linalg.generic {indexing_maps = [#[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.constant 0 : index
// CHECK: tensor.extract
// CHECK: %[[ROW1:.+]] = linalg.generic {indexing_maps = [#[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.constant 1 : index
// CHECK: tensor.extract
// CHECK: %[[W0:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[G0]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[ROW0]], %{{.+}} : tensor<8x4xf32>, tensor<8x2x1xf32>)
// CHECK: %[[W1:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[G1]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[ROW1]], %{{.+}} : tensor<8x4xf32>, tensor<8x2x1xf32>)
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[W0]], %[[W1]] : tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[S0:.+]] = arith.addf %[[A]], %{{.+}} : f32
// CHECK-NEXT: %[[S1:.+]] = arith.addf %[[B]], %[[S0]] : f32
// CHECK-NEXT: linalg.yield %[[S1]] : f32
// CHECK: return %[[SUM]]
// FUSED-LABEL: func.func @combine_k2
// FUSED-COUNT-1: linalg.generic
// FUSED-NOT: linalg.generic
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#gate = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#sum_in = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#sum_out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @combine_k2(%rows: tensor<16x4xf32>, %index: tensor<8x2xindex>, %g: tensor<8x2x1xf32>) -> tensor<8x4xf32> {
  %e3 = tensor.empty() : tensor<8x2x4xf32>
  %gathered = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%e3 : tensor<8x2x4xf32>) {
  ^bb0(%o: f32):
    %n = linalg.index 0 : index
    %k = linalg.index 1 : index
    %c = linalg.index 2 : index
    %r = tensor.extract %index[%n, %k] : tensor<8x2xindex>
    %v = tensor.extract %rows[%r, %c] : tensor<16x4xf32>
    linalg.yield %v : f32
  } -> tensor<8x2x4xf32>
  %e3b = tensor.empty() : tensor<8x2x4xf32>
  %weighted = linalg.generic {indexing_maps = [#id3, #gate, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%gathered, %g : tensor<8x2x4xf32>, tensor<8x2x1xf32>) outs(%e3b : tensor<8x2x4xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %m = arith.mulf %x, %w : f32
    linalg.yield %m : f32
  } -> tensor<8x2x4xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = linalg.generic {indexing_maps = [#sum_in, #sum_out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%weighted : tensor<8x2x4xf32>) outs(%f : tensor<8x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %a = arith.addf %x, %acc : f32
    linalg.yield %a : f32
  } -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

// (b) Five points is more than the unrolling takes: left a reduction.
// CHECK-LABEL: func.func @five
// FUSED-LABEL: func.func @five
// CHECK: linalg.fill
// CHECK: iterator_types = ["parallel", "reduction"]
#b_in = affine_map<(d0, d1) -> (d0, d1)>
#b_out = affine_map<(d0, d1) -> (d0)>
func.func @five(%x: tensor<8x5xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#b_in, #b_out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x5xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %v, %acc : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// (c) A max over 3 points whose producer is also read whole elsewhere: unrolled (the order
// kept: maximumf(maximumf(maximumf(fill, x0), x1), x2)), but the producer stays whole (it has
// a use that is not a fixed slice).
// CHECK-LABEL: func.func @max3_shared
// CHECK-NOT: linalg.fill
// CHECK: %[[P:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%{{.+}} : tensor<8x3xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%[[P]], %[[P]], %[[P]] : tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %[[C:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[M0:.+]] = arith.maximumf %[[A]], %{{.+}} : f32
// CHECK-NEXT: %[[M1:.+]] = arith.maximumf %[[B]], %[[M0]] : f32
// CHECK-NEXT: %[[M2:.+]] = arith.maximumf %[[C]], %[[M1]] : f32
// CHECK-NEXT: linalg.yield %[[M2]] : f32
#c_id = affine_map<(d0, d1) -> (d0, d1)>
#c_out = affine_map<(d0, d1) -> (d0)>
func.func @max3_shared(%x: tensor<8x3xf32>) -> (tensor<8xf32>, tensor<8x3xf32>) {
  %e2 = tensor.empty() : tensor<8x3xf32>
  %p = linalg.generic {indexing_maps = [#c_id, #c_id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x3xf32>) outs(%e2 : tensor<8x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %ex = math.exp %v : f32
    linalg.yield %ex : f32
  } -> tensor<8x3xf32>
  %low = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%low : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#c_id, #c_out], iterator_types = ["parallel", "reduction"]}
      ins(%p : tensor<8x3xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.maximumf %v, %acc : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %m, %p : tensor<8xf32>, tensor<8x3xf32>
}
