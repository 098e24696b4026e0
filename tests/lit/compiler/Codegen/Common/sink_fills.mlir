// Tests --step-sink-fills: a fill of a local buffer moves down to just before the first op
// that touches the buffer (directly or through a view, in a region too); a memref of unknown
// origin in between stops it; fills of function arguments, and of buffers whose address
// escapes other than as a memref, stay. With
// --step-contractions-to-library after it, the zero fill that now sits before a contraction
// becomes that GEMM's "overwrite" (last flag 0) and is gone.
//
// RUN: %stepc-opt %s --step-sink-fills | FileCheck %s
// RUN: %stepc-opt %s --step-sink-fills --step-contractions-to-library | FileCheck %s --check-prefix=GEMM
// Without it, the far fill stays and the GEMM accumulates onto its zeros (last flag 1).
// RUN: %stepc-opt %s --step-contractions-to-library | FileCheck %s --check-prefix=NOSINK
// NOSINK-LABEL: func.func @far
// NOSINK: linalg.fill
// NOSINK: call @stepc_matmul_f32(%{{.+}}, %{{.+}}, %{{.+}}, %c0_i64{{.*}}, %c0_i64{{.*}}, %c1_i64) :

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
module {
  memref.global "private" @g : memref<8x8xf32>

  // CHECK-LABEL: func.func @far
  // CHECK: %[[ACC:.+]] = memref.alloc() : memref<8x8xf32>
  // CHECK-NEXT: linalg.generic
  // CHECK-SAME: outs(%arg2 : memref<8x8xf32>)
  // CHECK: scf.for
  // CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[ACC]] : memref<8x8xf32>)
  // CHECK-NEXT: linalg.generic
  // CHECK-SAME: outs(%[[ACC]] : memref<8x8xf32>)
  // GEMM-LABEL: func.func @far
  // GEMM-NOT: linalg.fill
  // GEMM: call @stepc_matmul_f32(%{{.+}}, %{{.+}}, %{{.+}}, %c0_i64{{.*}}, %c0_i64{{.*}}, %c0_i64{{.*}}) :
  func.func @far(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>, %out: memref<8x8xf32>) {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %acc = memref.alloc() : memref<8x8xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<8x8xf32>)
    // Other buffers only, a loop too.
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
    scf.for %i = %c0 to %c4 step %c1 {
      memref.copy %a, %c : memref<8x8xf32> to memref<8x8xf32>
    }
    linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%acc : memref<8x8xf32>) {
    ^bb0(%x: f32, %y: f32, %z: f32):
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %z, %p : f32
      linalg.yield %s : f32
    }
    memref.copy %acc, %out : memref<8x8xf32> to memref<8x8xf32>
    memref.dealloc %acc : memref<8x8xf32>
    return
  }

  // The buffer's address escapes as an index before the fill, and a call takes that index (it
  // could write through it): the fill stays before the call.
  // CHECK-LABEL: func.func @escapes
  // CHECK: %[[E:.+]] = memref.alloc() : memref<8x8xf32>
  // CHECK-NEXT: %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[E]]
  // CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : memref<8x8xf32>)
  // CHECK-NEXT: call @rt(%[[P]])
  func.func private @rt(index)
  func.func @escapes(%other: memref<8x8xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = memref.alloc() : memref<8x8xf32>
    %p = memref.extract_aligned_pointer_as_index %e : memref<8x8xf32> -> index
    linalg.fill ins(%zero : f32) outs(%e : memref<8x8xf32>)
    call @rt(%p) : (index) -> ()
    memref.copy %e, %other : memref<8x8xf32> to memref<8x8xf32>
    memref.dealloc %e : memref<8x8xf32>
    return
  }

  // A view of the buffer read in a loop stops the fill before that loop; a memref of unknown
  // origin (a global) stops it too; a fill of an argument stays where it is.
  // CHECK-LABEL: func.func @stops
  // CHECK: %[[T:.+]] = memref.alloc() : memref<8x8xf32>
  // CHECK: %[[U:.+]] = memref.alloc() : memref<8x8xf32>
  // CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%arg0 : memref<8x8xf32>)
  // CHECK-NEXT: memref.copy %arg1, %arg0
  // CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[T]] : memref<8x8xf32>)
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: memref.subview %[[T]]
  // CHECK: memref.get_global @g
  // CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[U]] : memref<8x8xf32>)
  // CHECK-NEXT: memref.copy
  func.func @stops(%arg: memref<8x8xf32>, %other: memref<8x8xf32>) {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %t = memref.alloc() : memref<8x8xf32>
    linalg.fill ins(%zero : f32) outs(%t : memref<8x8xf32>)
    %u = memref.alloc() : memref<8x8xf32>
    linalg.fill ins(%zero : f32) outs(%arg : memref<8x8xf32>)
    memref.copy %other, %arg : memref<8x8xf32> to memref<8x8xf32>
    linalg.fill ins(%zero : f32) outs(%u : memref<8x8xf32>)
    scf.for %i = %c0 to %c4 step %c1 {
      %row = memref.subview %t[%i, 0] [1, 8] [1, 1] : memref<8x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      %col = memref.subview %other[%i, 0] [1, 8] [1, 1] : memref<8x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
      memref.copy %row, %col : memref<1x8xf32, strided<[8, 1], offset: ?>> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    }
    %g = memref.get_global @g : memref<8x8xf32>
    memref.copy %g, %other : memref<8x8xf32> to memref<8x8xf32>
    memref.copy %u, %other : memref<8x8xf32> to memref<8x8xf32>
    memref.dealloc %t : memref<8x8xf32>
    memref.dealloc %u : memref<8x8xf32>
    return
  }
}
