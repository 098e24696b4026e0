// Tests --step-write-into-slots: a GEMM output saved into a loop's stack through a reshape
// ([8, 4] seen as [2, 4, 4]) is computed in its slot: its empty tensor becomes the slot, an
// extract_slice of the stack collapsed back to [8, 4]. Once bufferized, the loop writes the
// GEMM straight into the stack (no copy); without the pass the output is copied there.
// An empty tensor shared with other kernels is replaced for this chain alone; a slot whose
// destination or offset is defined after the empty tensor is left alone, except for a
// collective's start, whose slot is then taken right before it.
//
// RUN: %stepc-opt %s --step-write-into-slots | FileCheck %s
// RUN: %stepc-opt %s --step-write-into-slots --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --canonicalize --cse --canonicalize | FileCheck %s --check-prefix=BUF
// RUN: %stepc-opt %s --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --canonicalize --cse --canonicalize | FileCheck %s --check-prefix=NOPASS

module {
  // CHECK-LABEL: func.func @stack
  // CHECK: scf.for %[[I:.+]] = {{.+}} iter_args(%[[S:.+]] = %{{.+}})
  // CHECK: %[[SLOT:.+]] = tensor.extract_slice %[[S]][%[[I]], 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<3x2x4x4xf32> to tensor<2x4x4xf32>
  // CHECK-NEXT: %[[C:.+]] = tensor.collapse_shape %[[SLOT]] {{\[\[}}0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32>
  // CHECK-NEXT: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[C]] : tensor<8x4xf32>)
  // CHECK-NEXT: linalg.matmul {{.+}} outs(%[[F]] : tensor<8x4xf32>)
  // BUF-LABEL: func.func @stack
  // BUF: scf.for
  // BUF-NEXT: %[[V:.+]] = memref.subview %arg2
  // BUF-NEXT: %[[C:.+]] = memref.collapse_shape %[[V]]
  // BUF-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[C]] :
  // BUF-NEXT: linalg.matmul {{.+}} outs(%[[C]] :
  // BUF-NEXT: }
  // BUF-NEXT: return %arg2
  // NOPASS-LABEL: func.func @stack
  // NOPASS: scf.for
  // NOPASS: linalg.matmul
  // NOPASS: memref.copy
  func.func @stack(%a: tensor<8x4xf32>, %w: tensor<4x4xf32>, %init: tensor<3x2x4x4xf32>) -> tensor<3x2x4x4xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %zero = arith.constant 0.0 : f32
    %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%s = %init) -> (tensor<3x2x4x4xf32>) {
      %e = tensor.empty() : tensor<8x4xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
      %p = linalg.matmul ins(%a, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
      %x = tensor.expand_shape %p [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
      %n = tensor.insert_slice %x into %s[%i, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<2x4x4xf32> into tensor<3x2x4x4xf32>
      scf.yield %n : tensor<3x2x4x4xf32>
    }
    return %r : tensor<3x2x4x4xf32>
  }

  // The empty tensor is shared with another kernel (CSE merges equal ones): only this
  // chain's use becomes the slot.
  // CHECK-LABEL: func.func @shared_empty
  // CHECK: %[[SLOT:.+]] = tensor.extract_slice %arg2[%{{.+}}, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1]
  // CHECK-NEXT: %[[C:.+]] = tensor.collapse_shape %[[SLOT]]
  // CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<8x4xf32>
  // CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[C]] : tensor<8x4xf32>)
  // CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<8x4xf32>)
  func.func @shared_empty(%a: tensor<8x4xf32>, %w: tensor<4x4xf32>, %s: tensor<3x2x4x4xf32>) -> (tensor<3x2x4x4xf32>, tensor<8x4xf32>) {
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %p = linalg.matmul ins(%a, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    %q = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %x = tensor.expand_shape %p [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
    %n = tensor.insert_slice %x into %s[%c1, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<2x4x4xf32> into tensor<3x2x4x4xf32>
    return %n, %q : tensor<3x2x4x4xf32>, tensor<8x4xf32>
  }

  // The slot's offset is computed after the empty tensor: unchanged.
  // CHECK-LABEL: func.func @late_offset
  // CHECK: tensor.empty() : tensor<8x4xf32>
  // CHECK-NOT: tensor.collapse_shape
  func.func @late_offset(%a: tensor<8x4xf32>, %w: tensor<4x4xf32>, %s: tensor<3x2x4x4xf32>, %k: index) -> tensor<3x2x4x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %p = linalg.matmul ins(%a, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    %x = tensor.expand_shape %p [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
    %i = arith.addi %k, %k : index
    %n = tensor.insert_slice %x into %s[%i, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<2x4x4xf32> into tensor<3x2x4x4xf32>
    return %n : tensor<3x2x4x4xf32>
  }

  // A concatenation of two kernels' outputs sharing one empty tensor: the first part is
  // computed in place; the second inserts into the first insert's result, defined after its
  // kernel, and stays a copy.
  // CHECK-LABEL: func.func @concat
  // CHECK: %[[D:.+]] = tensor.empty() : tensor<4x8xf32>
  // CHECK-NEXT: %[[S0:.+]] = tensor.extract_slice %[[D]][0, 0] [4, 4] [1, 1]
  // CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<4x4xf32>
  // CHECK-NEXT: linalg.generic {{.+}} outs(%[[S0]] : tensor<4x4xf32>)
  // CHECK: linalg.generic {{.+}} outs(%[[E]] : tensor<4x4xf32>)
  // BUF-LABEL: func.func @concat
  // BUF-COUNT-1: memref.copy
  // BUF-NOT: memref.copy
  // BUF: return
  // NOPASS-LABEL: func.func @concat
  // NOPASS-COUNT-2: memref.copy
  func.func @concat(%a: tensor<4x4xf32>) -> tensor<4x8xf32> {
    %d = tensor.empty() : tensor<4x8xf32>
    %e = tensor.empty() : tensor<4x4xf32>
    %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%in: f32, %o: f32):
      %m = arith.mulf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<4x4xf32>
    %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%in: f32, %o: f32):
      %m = arith.addf %in, %in : f32
      linalg.yield %m : f32
    } -> tensor<4x4xf32>
    %c0 = tensor.insert_slice %x into %d[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x8xf32>
    %c1 = tensor.insert_slice %y into %c0[0, 4] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x8xf32>
    return %c1 : tensor<4x8xf32>
  }

  // A started reduction whose empty tensor CSE hoisted out of the loop (SAM's second
  // backward at depth 8): its slot is taken right before the start, so the start writes the
  // stack (the runtime's wait finds a reduction by its buffer there); the kernel before it
  // keeps the shared empty tensor. A plain kernel in the same position stays as it was.
  // CHECK-LABEL: func.func @hoisted_start
  // CHECK: %[[E:.+]] = tensor.empty() : tensor<8x4xf32>
  // CHECK: scf.for %[[I:.+]] = {{.+}} iter_args(%[[S:.+]] = %{{.+}}, %[[T:.+]] = %{{.+}})
  // CHECK: %[[G:.+]] = linalg.generic {{.+}} outs(%[[E]] : tensor<8x4xf32>)
  // CHECK: %[[SLOT:.+]] = tensor.extract_slice %[[S]][%[[I]], 0, 0] [1, 8, 4] [1, 1, 1] : tensor<3x8x4xf32> to tensor<8x4xf32>
  // CHECK-NEXT: linalg.copy {step.collective = "all_reduce_start"} ins(%[[G]] : tensor<8x4xf32>) outs(%[[SLOT]] : tensor<8x4xf32>)
  // CHECK: linalg.copy ins(%[[G]] : tensor<8x4xf32>) outs(%[[E]] : tensor<8x4xf32>)
  func.func @hoisted_start(%a: tensor<8x4xf32>, %init: tensor<3x8x4xf32>) -> (tensor<3x8x4xf32>, tensor<3x8x4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %e = tensor.empty() : tensor<8x4xf32>
    %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%s = %init, %t = %init) -> (tensor<3x8x4xf32>, tensor<3x8x4xf32>) {
      %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
          ins(%a : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
      ^bb0(%in: f32, %o: f32):
        %m = arith.addf %in, %in : f32
        linalg.yield %m : f32
      } -> tensor<8x4xf32>
      %started = linalg.copy {step.collective = "all_reduce_start"} ins(%g : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
      %plain = linalg.copy ins(%g : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
      %n = tensor.insert_slice %started into %s[%i, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<8x4xf32> into tensor<3x8x4xf32>
      %m = tensor.insert_slice %plain into %t[%i, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<8x4xf32> into tensor<3x8x4xf32>
      scf.yield %n, %m : tensor<3x8x4xf32>, tensor<3x8x4xf32>
    }
    return %r#0, %r#1 : tensor<3x8x4xf32>, tensor<3x8x4xf32>
  }
}
