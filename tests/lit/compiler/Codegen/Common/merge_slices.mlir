// Tests --step-merge-slices: a layer's update in a loop over a stacked parameter reads the
// layer's slice and writes a second, identical extract_slice of the stack (what
// --eliminate-empty-tensors makes of the update's empty output). The pass makes both the
// first slice, and one-shot bufferization then updates the layer in place; without it, the
// layer is copied out of the stack first (BUF's memref.copy). Slices at other rows, of other
// sources, or not dominated by their twin (the second function: one in each branch) stay.
//
// RUN: %stepc-opt %s --step-merge-slices | FileCheck %s
// RUN: %stepc-opt %s --step-merge-slices \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --canonicalize --cse --canonicalize | FileCheck %s --check-prefix=BUF
// RUN: %stepc-opt %s \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --canonicalize --cse --canonicalize | FileCheck %s --check-prefix=NOPASS

#id = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @update
// CHECK: scf.for %[[I:.+]] = {{.+}} iter_args(%[[S:.+]] = %{{.+}}, %{{.+}} = %{{.+}})
// CHECK: %[[P:.+]] = tensor.extract_slice %[[S]][%[[I]], 0] [1, 8] [1, 1]
// CHECK: %[[Q:.+]] = tensor.extract_slice %[[S]][%[[I]], 0] [1, 4] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<8xf32>) outs(
// CHECK-NOT: tensor.extract_slice %[[S]][%[[I]], 0] [1, 8]
// CHECK: %[[U:.+]] = linalg.generic {{.*}} ins(%[[P]], %{{.+}} : tensor<8xf32>, tensor<8xf32>) outs(%[[P]] : tensor<8xf32>)
// CHECK: tensor.insert_slice %[[U]] into %[[S]][%[[I]], 0] [1, 8] [1, 1]
// BUF-LABEL: func.func @update
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
// NOPASS-LABEL: func.func @update
// NOPASS: scf.for
// NOPASS: memref.copy
// NOPASS: return
func.func @update(%stack: tensor<3x8xf32>, %g: tensor<8xf32>, %norm: tensor<f32>)
    -> (tensor<3x8xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%s = %stack, %n = %norm)
      -> (tensor<3x8xf32>, tensor<f32>) {
    %p = tensor.extract_slice %s[%i, 0] [1, 8] [1, 1] : tensor<3x8xf32> to tensor<8xf32>
    %q = tensor.extract_slice %s[%i, 0] [1, 4] [1, 1] : tensor<3x8xf32> to tensor<4xf32>
    // The layer's norm reads it before the update (AGC's, say).
    %n2 = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["reduction"]}
        ins(%p : tensor<8xf32>) outs(%n : tensor<f32>) {
    ^bb0(%x: f32, %acc: f32):
      %sq = arith.mulf %x, %x : f32
      %a = arith.addf %acc, %sq : f32
      linalg.yield %a : f32
    } -> tensor<f32>
    %slot = tensor.extract_slice %s[%i, 0] [1, 8] [1, 1] : tensor<3x8xf32> to tensor<8xf32>
    %u = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%p, %g : tensor<8xf32>, tensor<8xf32>) outs(%slot : tensor<8xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %d = arith.subf %x, %y : f32
      linalg.yield %d : f32
    } -> tensor<8xf32>
    %s2 = tensor.insert_slice %u into %s[%i, 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<3x8xf32>
    scf.yield %s2, %n2 : tensor<3x8xf32>, tensor<f32>
  }
  return %r#0, %r#1 : tensor<3x8xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @branches
// CHECK: scf.if
// CHECK: tensor.extract_slice %arg0[1, 0] [1, 8] [1, 1]
// CHECK: else
// CHECK: tensor.extract_slice %arg0[1, 0] [1, 8] [1, 1]
func.func @branches(%stack: tensor<3x8xf32>, %c: i1) -> tensor<8xf32> {
  %r = scf.if %c -> tensor<8xf32> {
    %a = tensor.extract_slice %stack[1, 0] [1, 8] [1, 1] : tensor<3x8xf32> to tensor<8xf32>
    scf.yield %a : tensor<8xf32>
  } else {
    %b = tensor.extract_slice %stack[1, 0] [1, 8] [1, 1] : tensor<3x8xf32> to tensor<8xf32>
    scf.yield %b : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
