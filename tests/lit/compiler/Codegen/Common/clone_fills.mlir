// Tests --step-clone-fills: a zero fill made once before a loop and written by a contraction
// in the loop (the reverse loop's input-gradient accumulator) gets a fill and an empty tensor
// of its own just before the contraction; fills whose accumulators are in their own block
// stay as they are. After
// bufferization the loop has no copy of the zeros: the fill sits next to the GEMM it feeds,
// which --step-contractions-to-library then makes an overwrite (beta = 0, last flag 0).
//
// RUN: %stepc-opt %s --step-clone-fills | FileCheck %s
// RUN: %stepc-opt %s --step-clone-fills --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --canonicalize --step-contractions-to-library | FileCheck %s --check-prefix=GEMM
// Without it, bufferization copies the hoisted zeros into the GEMM's output every iteration,
// and the GEMM accumulates onto them (last flag 1).
// RUN: %stepc-opt %s --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --canonicalize --step-contractions-to-library | FileCheck %s --check-prefix=NOCLONE

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
module {
  // CHECK-LABEL: func.func @hoisted
  // CHECK-NOT: linalg.fill
  // CHECK: scf.for
  // CHECK: %[[E:.+]] = tensor.empty() : tensor<8x8xf32>
  // CHECK-NEXT: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<8x8xf32>)
  // CHECK-NEXT: linalg.generic
  // CHECK-SAME: outs(%[[F]] : tensor<8x8xf32>)
  // GEMM-LABEL: func.func @hoisted
  // GEMM: scf.for
  // GEMM-NOT: memref.copy
  // GEMM-NOT: linalg.copy
  // GEMM-NOT: linalg.fill
  // GEMM: call @stepc_matmul_f32(%{{.+}}, %{{.+}}, %{{.+}}, %c0_i64{{.*}}, %c0_i64{{.*}}, %c0_i64{{.*}}) :
  // NOCLONE-LABEL: func.func @hoisted
  // NOCLONE: scf.for
  // NOCLONE: memref.copy
  // NOCLONE: call @stepc_matmul_f32(%{{.+}}, %{{.+}}, %{{.+}}, %c0_i64{{.*}}, %c0_i64{{.*}}, %c1_i64) :
  func.func @hoisted(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %acc: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%d = %acc) -> (tensor<8x8xf32>) {
      %p = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %m = arith.mulf %x, %y : f32
        %s = arith.addf %o, %m : f32
        linalg.yield %s : f32
      } -> tensor<8x8xf32>
      %n = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%d, %p : tensor<8x8xf32>, tensor<8x8xf32>) outs(%d : tensor<8x8xf32>) {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %s = arith.addf %x, %y : f32
        linalg.yield %s : f32
      } -> tensor<8x8xf32>
      scf.yield %n : tensor<8x8xf32>
    }
    return %r : tensor<8x8xf32>
  }

  // Two accumulators of one fill in its own block keep sharing it (bufferization copies for
  // the second; cloning these made the plans larger).
  // CHECK-LABEL: func.func @shared
  // CHECK: %[[Z:.+]] = linalg.fill
  // CHECK-NOT: linalg.fill
  // CHECK: linalg.matmul ins(%arg0, %arg1 : {{.+}}) outs(%[[Z]] : tensor<8x8xf32>)
  // CHECK-NEXT: linalg.matmul ins(%arg1, %arg0 : {{.+}}) outs(%[[Z]] : tensor<8x8xf32>)
  func.func @shared(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
    %p = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
    %q = linalg.matmul ins(%b, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
    %n = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p, %q, %z : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
    ^bb0(%x: f32, %y: f32, %w: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      %t = arith.addf %s, %w : f32
      linalg.yield %t : f32
    } -> tensor<8x8xf32>
    return %n : tensor<8x8xf32>
  }

  // One writer in the fill's own block: unchanged.
  // CHECK-LABEL: func.func @single
  // CHECK: tensor.empty
  // CHECK-NEXT: linalg.fill
  // CHECK-NEXT: linalg.matmul
  // CHECK-NOT: linalg.fill
  func.func @single(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
    %p = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %p : tensor<8x8xf32>
  }
}
