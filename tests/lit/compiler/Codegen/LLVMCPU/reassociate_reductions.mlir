// Tests --step-reassociate-reductions: the addf that accumulates a reduction's result is marked
// reassoc (a dot per row: (a) the mul is not, nor is an add that does not read the
// accumulator); an elementwise generic (b) and a max reduction (c) are left alone; so are a
// column sum (d: the inner loop reads a strided dim) and a pick by index (f: one element of a
// row), but not a dot over rows gathered by index (e: contiguous along the inner loop).
//
// RUN: %stepc-opt %s -split-input-file --step-reassociate-reductions | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-reassociate-reductions | %stepc-opt -split-input-file -o /dev/null

// CHECK-LABEL: func.func @dot_rows
// CHECK: %[[M:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: %[[B:.+]] = arith.addf %[[M]], %{{.+}} : f32
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[B]], %{{.+}} fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[S]]
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @dot_rows(%a: memref<8x256xf32>, %b: memref<8x256xf32>, %o: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [#in, #in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%a, %b : memref<8x256xf32>, memref<8x256xf32>) outs(%o : memref<8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %bias = arith.addf %m, %one : f32
    %s = arith.addf %bias, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @elementwise
// CHECK-NOT: reassoc
#e = affine_map<(d0) -> (d0)>
func.func @elementwise(%a: memref<8xf32>, %o: memref<8xf32>) {
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%a : memref<8xf32>) outs(%o : memref<8xf32>) {
  ^bb0(%x: f32, %prev: f32):
    %s = arith.addf %x, %prev : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @max_rows
// CHECK-NOT: reassoc
#c_in = affine_map<(d0, d1) -> (d0, d1)>
#c_out = affine_map<(d0, d1) -> (d0)>
func.func @max_rows(%a: memref<8x256xf32>, %o: memref<8xf32>) {
  linalg.generic {indexing_maps = [#c_in, #c_out], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<8x256xf32>) outs(%o : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @column_sums
// CHECK-NOT: reassoc
#d_in = affine_map<(d0, d1) -> (d1, d0)>
#d_out = affine_map<(d0, d1) -> (d0)>
func.func @column_sums(%a: memref<256x8xf32>, %o: memref<8xf32>) {
  linalg.generic {indexing_maps = [#d_in, #d_out], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<256x8xf32>) outs(%o : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @gathered_dots
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
#e_dy = affine_map<(d0, d1, d2) -> (d0, d2)>
#e_idx = affine_map<(d0, d1, d2) -> (d0, d1)>
#e_out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @gathered_dots(%dy: memref<8x256xf32>, %slots: memref<8x2xi32>, %rows: memref<16x256xf32>, %o: memref<8x2xf32>) {
  linalg.generic {indexing_maps = [#e_dy, #e_idx, #e_out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %slots : memref<8x256xf32>, memref<8x2xi32>) outs(%o : memref<8x2xf32>) {
  ^bb0(%g: f32, %slot: i32, %acc: f32):
    %r = arith.index_cast %slot : i32 to index
    %c = linalg.index 2 : index
    %y = memref.load %rows[%r, %c] : memref<16x256xf32>
    %m = arith.mulf %g, %y : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @pick_by_index
// CHECK-NOT: reassoc
#f_in = affine_map<(d0, d1) -> (d0, d1)>
#f_out = affine_map<(d0, d1) -> ()>
func.func @pick_by_index(%targets: memref<16x256xi32>, %logits: memref<16x256x64xf32>, %o: memref<f32>) {
  linalg.generic {indexing_maps = [#f_in, #f_out], iterator_types = ["reduction", "reduction"]}
      ins(%targets : memref<16x256xi32>) outs(%o : memref<f32>) {
  ^bb0(%t: i32, %acc: f32):
    %b = linalg.index 0 : index
    %s = linalg.index 1 : index
    %v = arith.index_cast %t : i32 to index
    %l = memref.load %logits[%b, %s, %v] : memref<16x256x64xf32>
    %n = arith.negf %l : f32
    %sum = arith.addf %acc, %n : f32
    linalg.yield %sum : f32
  }
  return
}
