// Tests --step-carry-in-place: a loop's carried value, copied into its iter_arg at the end of
// each iteration (the repeat lowering), is tied to it instead (materialize_in_destination), the
// kernel computing it gets a tensor.empty of its own, and after bufferization the kernel writes
// the carried buffer in place: no copy in the loop. Where the old value is still read after
// the new one is computed (the second function), or read by the kernel at other indices (the
// third: a matmul), or read through a view after it (the fourth), the copy stays.
//
// RUN: %stepc-opt %s --step-carry-in-place | FileCheck %s
// RUN: %stepc-opt %s --step-carry-in-place --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --canonicalize | FileCheck %s --check-prefix=BUF

#id = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @residual
// CHECK: scf.for {{.*}} iter_args(%[[H:.+]] = %{{.+}})
// CHECK: %[[E:.+]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[Y:.+]] = linalg.generic {{.*}} ins(%[[H]], %{{.+}} : {{.*}}) outs(%[[E]] :
// CHECK-NOT: linalg.copy
// CHECK: %[[T:.+]] = bufferization.materialize_in_destination %[[Y]] in %[[H]]
// CHECK: scf.yield %[[T]]
// BUF-LABEL: func.func @residual(%arg0: memref<8xf32>
// BUF: scf.for
// BUF-NOT: memref.copy
// BUF: linalg.generic
// BUF-NOT: memref.copy
// BUF: linalg.generic {{.*}} outs(%arg0 : memref<8xf32>)
// BUF-NOT: memref.copy
// BUF: return %arg0
func.func @residual(%x: tensor<8xf32>, %w: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %shared = tensor.empty() : tensor<8xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (tensor<8xf32>) {
    %f = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%h : tensor<8xf32>) outs(%shared : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.tanh %a : f32
      linalg.yield %t : f32
    } -> tensor<8xf32>
    %y = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
        ins(%h, %f, %w : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%shared : tensor<8xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
      %m = arith.mulf %b, %c : f32
      %s = arith.addf %a, %m : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    %next = linalg.copy ins(%y : tensor<8xf32>) outs(%h : tensor<8xf32>) -> tensor<8xf32>
    scf.yield %next : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// The old value is read after the new one is computed (a stacked copy of it, here an
// insert into another loop-carried tensor): the write cannot go in place, and the copy stays
// (one-shot bufferization refuses a materialization it cannot do in place).
// CHECK-LABEL: func.func @read_after
// CHECK-NOT: bufferization.materialize_in_destination
// CHECK: linalg.copy
// BUF-LABEL: func.func @read_after
// BUF: scf.for
// BUF: memref.copy %arg0, %subview
// BUF-NEXT: linalg.copy ins(%alloc : memref<8xf32>) outs(%arg0 : memref<8xf32>)
func.func @read_after(%x: tensor<8xf32>, %stack: tensor<4x8xf32>) -> (tensor<8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x, %s = %stack) -> (tensor<8xf32>, tensor<4x8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%h : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.tanh %a : f32
      linalg.yield %t : f32
    } -> tensor<8xf32>
    %s2 = tensor.insert_slice %h into %s[%i, 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<4x8xf32>
    %next = linalg.copy ins(%y : tensor<8xf32>) outs(%h : tensor<8xf32>) -> tensor<8xf32>
    scf.yield %next, %s2 : tensor<8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<4x8xf32>
}

// The kernel reads the old value at other indices than it writes (a matmul): it cannot write
// over it, the copy stays.
// CHECK-LABEL: func.func @matmul_reads
// CHECK-NOT: bufferization.materialize_in_destination
// CHECK: linalg.copy
func.func @matmul_reads(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (tensor<4x4xf32>) {
    %e = tensor.empty() : tensor<4x4xf32>
    %y = linalg.matmul ins(%h, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %next = linalg.copy ins(%y : tensor<4x4xf32>) outs(%h : tensor<4x4xf32>) -> tensor<4x4xf32>
    scf.yield %next : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// A view of the old value (a reshape, the same buffer) is read after the new one is computed:
// the copy stays.
// CHECK-LABEL: func.func @view_read_after
// CHECK-NOT: bufferization.materialize_in_destination
// CHECK: linalg.copy
func.func @view_read_after(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %init = tensor.empty() : tensor<8xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x, %acc = %init) -> (tensor<2x4xf32>, tensor<8xf32>) {
    %flat = tensor.collapse_shape %h [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
    %e = tensor.empty() : tensor<2x4xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%h : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = math.tanh %a : f32
      linalg.yield %t : f32
    } -> tensor<2x4xf32>
    %sum = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%flat : tensor<8xf32>) outs(%acc : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    %next = linalg.copy ins(%y : tensor<2x4xf32>) outs(%h : tensor<2x4xf32>) -> tensor<2x4xf32>
    scf.yield %next, %sum : tensor<2x4xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<2x4xf32>, tensor<8xf32>
}
