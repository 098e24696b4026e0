// Tests --step-gathered-gemms: an MoE's dispatch gather (slot c of expert e takes row
// ids[e, c] / group of X, zeros for -1) read only by batched GEMMs as A becomes
// stepc_batch_matmul_gathered_f32 calls that pack A from X (the gather and its buffer go);
// and a batched GEMM whose A is known zero in the empty slots (written by a gather, by a GEMM
// whose A is, or by an elementwise kernel that keeps zeros zero) becomes
// stepc_batch_matmul_masked_f32 with the ids. Anything else stays as it is.
//
// RUN: %stepc-opt %s -split-input-file --step-gathered-gemms | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-gathered-gemms | %stepc-opt -split-input-file -o /dev/null

#dyn3 = strided<[?, ?, ?], offset: ?>
#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func private @stepc_batch_matmul_f32(memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) attributes {llvm.emit_c_interface}

// The forward X_e · W1 and the backward X_eᵀ · dH read the gather (top-2: group 2, ids below
// 2 · 6 = 12, clamped to 11); both become gathered calls with the ids viewed [2, 4], and the
// gather, its buffer and its dealloc go. The dealloc of X between them moves after the last.
// GELU (x · 0.5 · ...) of the first GEMM's output keeps its empty rows zero, so the second
// GEMM, which reads it, gets the ids too; a kernel that adds 1 does not.
// CHECK-LABEL: func.func @experts
// CHECK-SAME: (%[[X:.+]]: memref<6x3xf32>, %[[IDS:.+]]: memref<2x4xi32>,
// CHECK-NOT: linalg.generic {{.*}} ins(%[[IDS]]
// CHECK: %[[SRC:.+]] = memref.cast %[[X]] : memref<6x3xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[VIEW:.+]] = memref.reinterpret_cast %[[IDS]] to offset: [0], sizes: [2, 4], strides: [4, 1]
// CHECK: %[[IV:.+]] = memref.cast %[[VIEW]]
// CHECK: %[[TWO:.+]] = arith.constant 2 : i64
// CHECK: call @stepc_batch_matmul_gathered_f32(%[[SRC]], %{{.+}}, %{{.+}}, %[[IV]], %[[TWO]], %c0_i64, %c0_i64, %c0_i64) {step.origin = "fc"}
// CHECK: linalg.generic
// CHECK: call @stepc_batch_matmul_masked_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c0_i64, %c0_i64, %c0_i64)
// CHECK: linalg.generic
// CHECK: call @stepc_batch_matmul_f32(
// CHECK: call @stepc_batch_matmul_gathered_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c1_i64, %c0_i64, %c0_i64)
// CHECK-NEXT: memref.dealloc %[[X]]
// CHECK-NOT: memref.alloc() {{.*}} : memref<2x4x3xf32>
// CHECK: return
func.func @experts(%x: memref<6x3xf32>, %ids: memref<2x4xi32>, %w1: memref<2x3x5xf32>, %w2: memref<2x5x3xf32>, %dh: memref<2x4x5xf32>, %dw1: memref<2x3x5xf32>, %y: memref<2x4x3xf32>, %z: memref<2x4x3xf32>) {
  %c0 = arith.constant 0 : index
  %c11 = arith.constant 11 : index
  %c2 = arith.constant 2 : index
  %c0_i32 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %xe = memref.alloc() {alignment = 64 : i64} : memref<2x4x3xf32>
  linalg.generic {indexing_maps = [#ids, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : memref<2x4xi32>) outs(%xe : memref<2x4x3xf32>) {
  ^bb0(%in: i32, %out: f32):
    %0 = arith.index_cast %in : i32 to index
    %1 = arith.maxsi %0, %c0 : index
    %2 = arith.minsi %1, %c11 : index
    %3 = arith.divui %2, %c2 : index
    %4 = linalg.index 2 : index
    %5 = memref.load %x[%3, %4] : memref<6x3xf32>
    %6 = arith.cmpi sge, %in, %c0_i32 : i32
    %7 = arith.select %6, %5, %zero : f32
    linalg.yield %7 : f32
  }
  %h = memref.alloc() : memref<2x4x5xf32>
  %a0 = memref.cast %xe : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  %b0 = memref.cast %w1 : memref<2x3x5xf32> to memref<?x?x?xf32, #dyn3>
  %c0v = memref.cast %h : memref<2x4x5xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%a0, %b0, %c0v, %c0_i64, %c0_i64, %c0_i64) {step.origin = "fc"} : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  %g = memref.alloc() : memref<2x4x5xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h : memref<2x4x5xf32>) outs(%g : memref<2x4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %half : f32
    %1 = arith.addf %in, %one : f32
    %2 = math.tanh %1 : f32
    %3 = arith.mulf %0, %2 : f32
    linalg.yield %3 : f32
  }
  %a1 = memref.cast %g : memref<2x4x5xf32> to memref<?x?x?xf32, #dyn3>
  %b1 = memref.cast %w2 : memref<2x5x3xf32> to memref<?x?x?xf32, #dyn3>
  %c1v = memref.cast %y : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%a1, %b1, %c1v, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  %p = memref.alloc() : memref<2x4x5xf32>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g : memref<2x4x5xf32>) outs(%p : memref<2x4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %one : f32
    linalg.yield %0 : f32
  }
  %a2 = memref.cast %p : memref<2x4x5xf32> to memref<?x?x?xf32, #dyn3>
  %c2v = memref.cast %z : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%a2, %b1, %c2v, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  memref.dealloc %x : memref<6x3xf32>
  %a3 = memref.cast %xe : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  %b3 = memref.cast %dh : memref<2x4x5xf32> to memref<?x?x?xf32, #dyn3>
  %c3v = memref.cast %dw1 : memref<2x3x5xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%a3, %b3, %c3v, %c1_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  memref.dealloc %xe : memref<2x4x3xf32>
  return
}

// -----

#dyn3 = strided<[?, ?, ?], offset: ?>
#ids2 = affine_map<(d0, d1) -> (d0, 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func private @stepc_batch_matmul_f32(memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) attributes {llvm.emit_c_interface}

// The 2-D form ([E·C, D] from ids [E·C, 1], read through a reshape to [E, C, D]). Here X is
// written between the gather and the GEMM, and the gather's buffer has another reader: the
// gather stays a kernel, and the GEMM reading it still gets the ids (the gather wrote the
// zeros). Once the ids are written again, nothing is known.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.generic
// CHECK: linalg.fill {{.*}} outs(%arg0
// CHECK: call @stepc_batch_matmul_masked_f32(
// CHECK: linalg.fill {{.*}} outs(%arg1
// CHECK: call @stepc_batch_matmul_f32(
func.func @kept(%x: memref<6x3xf32>, %ids: memref<8xi32>, %w: memref<2x3x5xf32>, %h: memref<2x4x5xf32>, %other: memref<8x3xf32>) {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %c0_i32 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %zero = arith.constant 0.0 : f32
  %m1 = arith.constant -1 : i32
  %flat = memref.alloc() : memref<8x3xf32>
  %ids2 = memref.expand_shape %ids [[0, 1]] output_shape [8, 1] : memref<8xi32> into memref<8x1xi32>
  linalg.generic {indexing_maps = [#ids2, #id2], iterator_types = ["parallel", "parallel"]} ins(%ids2 : memref<8x1xi32>) outs(%flat : memref<8x3xf32>) {
  ^bb0(%in: i32, %out: f32):
    %0 = arith.index_cast %in : i32 to index
    %1 = arith.maxsi %0, %c0 : index
    %2 = arith.minsi %1, %c5 : index
    %4 = linalg.index 1 : index
    %5 = memref.load %x[%2, %4] : memref<6x3xf32>
    %6 = arith.cmpi sge, %in, %c0_i32 : i32
    %7 = arith.select %6, %5, %zero : f32
    linalg.yield %7 : f32
  }
  linalg.fill ins(%zero : f32) outs(%x : memref<6x3xf32>)
  memref.copy %flat, %other : memref<8x3xf32> to memref<8x3xf32>
  %xe = memref.expand_shape %flat [[0, 1], [2]] output_shape [2, 4, 3] : memref<8x3xf32> into memref<2x4x3xf32>
  %a = memref.cast %xe : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  %b = memref.cast %w : memref<2x3x5xf32> to memref<?x?x?xf32, #dyn3>
  %c = memref.cast %h : memref<2x4x5xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%a, %b, %c, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  linalg.fill ins(%m1 : i32) outs(%ids : memref<8xi32>)
  call @stepc_batch_matmul_f32(%a, %b, %c, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  return
}

// -----

#dyn3 = strided<[?, ?, ?], offset: ?>
#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func private @stepc_batch_matmul_f32(memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) attributes {llvm.emit_c_interface}

// One-shot bufferization reused the gather's buffer for the second GEMM's output (written
// with =): the gather goes, the buffer stays for that value. A gather whose rows are scaled
// (a gate fused into it) is not a pure gather: it stays a kernel, but its empty rows are
// still zero (select(id >= 0, x · g, 0)), so the GEMM that reads it gets the ids.
// CHECK-LABEL: func.func @reused
// CHECK: %[[BUF:.+]] = memref.alloc() : memref<2x4x3xf32>
// CHECK-NEXT: %[[H:.+]] = memref.alloc()
// CHECK-NOT: linalg.generic
// CHECK: call @stepc_batch_matmul_gathered_f32(
// CHECK: %[[OUT:.+]] = memref.cast %[[BUF]] :
// CHECK: call @stepc_batch_matmul_masked_f32(%{{.+}}, %{{.+}}, %[[OUT]],
// CHECK: linalg.generic
// CHECK: call @stepc_batch_matmul_masked_f32(
func.func @reused(%x: memref<6x3xf32>, %ids: memref<2x4xi32>, %w1: memref<2x3x5xf32>, %w2: memref<2x5x3xf32>, %gate: memref<6xf32>, %y: memref<2x4x3xf32>) {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %c0_i32 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %zero = arith.constant 0.0 : f32
  %xe = memref.alloc() : memref<2x4x3xf32>
  %h = memref.alloc() : memref<2x4x5xf32>
  linalg.generic {indexing_maps = [#ids, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : memref<2x4xi32>) outs(%xe : memref<2x4x3xf32>) {
  ^bb0(%in: i32, %out: f32):
    %0 = arith.index_cast %in : i32 to index
    %1 = arith.maxsi %0, %c0 : index
    %2 = arith.minsi %1, %c5 : index
    %4 = linalg.index 2 : index
    %5 = memref.load %x[%2, %4] : memref<6x3xf32>
    %6 = arith.cmpi sge, %in, %c0_i32 : i32
    %7 = arith.select %6, %5, %zero : f32
    linalg.yield %7 : f32
  }
  %a0 = memref.cast %xe : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  %b0 = memref.cast %w1 : memref<2x3x5xf32> to memref<?x?x?xf32, #dyn3>
  %c0v = memref.cast %h : memref<2x4x5xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%a0, %b0, %c0v, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  %a1 = memref.cast %h : memref<2x4x5xf32> to memref<?x?x?xf32, #dyn3>
  %b1 = memref.cast %w2 : memref<2x5x3xf32> to memref<?x?x?xf32, #dyn3>
  %c1v = memref.cast %xe : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%a1, %b1, %c1v, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  %s = memref.alloc() : memref<2x4x3xf32>
  linalg.generic {indexing_maps = [#ids, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : memref<2x4xi32>) outs(%s : memref<2x4x3xf32>) {
  ^bb0(%in: i32, %out: f32):
    %0 = arith.index_cast %in : i32 to index
    %1 = arith.maxsi %0, %c0 : index
    %2 = arith.minsi %1, %c5 : index
    %4 = linalg.index 2 : index
    %5 = memref.load %x[%2, %4] : memref<6x3xf32>
    %g = memref.load %gate[%2] : memref<6xf32>
    %m = arith.mulf %5, %g : f32
    %6 = arith.cmpi sge, %in, %c0_i32 : i32
    %7 = arith.select %6, %m, %zero : f32
    linalg.yield %7 : f32
  }
  %a2 = memref.cast %s : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  %c2v = memref.cast %y : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%a2, %b0, %c2v, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  return
}

// -----

#dyn3 = strided<[?, ?, ?], offset: ?>
#ids2 = affine_map<(d0, d1) -> (d0, 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func private @stepc_batch_matmul_f32(memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) attributes {llvm.emit_c_interface}

// The 2-D form read only through a reshape: the gather, the reshape, the cast and the buffer
// all go. A GEMM whose C is X itself keeps its gather (the gathered call would read X while
// writing it). A division by a value that may be zero does not keep zeros zero (0 / 0), and
// a write through a transposed view (not a view-like op) hides what the buffer holds: the
// GEMMs reading those stay plain.
// CHECK-LABEL: func.func @edges
// CHECK-NOT: memref.alloc() : memref<8x3xf32>
// CHECK: call @stepc_batch_matmul_gathered_f32(
// CHECK: linalg.generic
// CHECK: call @stepc_batch_matmul_masked_f32(
// CHECK: linalg.generic
// CHECK: call @stepc_batch_matmul_f32(
// CHECK: memref.transpose
// CHECK: linalg.fill
// CHECK: call @stepc_batch_matmul_f32(
// CHECK: return
func.func @edges(%x: memref<8x3xf32>, %ids: memref<8xi32>, %w: memref<2x3x3xf32>, %y: memref<2x4x3xf32>, %d: memref<2x4x3xf32>) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %c0_i32 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %flat = memref.alloc() : memref<8x3xf32>
  %ids2 = memref.expand_shape %ids [[0, 1]] output_shape [8, 1] : memref<8xi32> into memref<8x1xi32>
  linalg.generic {indexing_maps = [#ids2, #id2], iterator_types = ["parallel", "parallel"]} ins(%ids2 : memref<8x1xi32>) outs(%flat : memref<8x3xf32>) {
  ^bb0(%in: i32, %out: f32):
    %0 = arith.index_cast %in : i32 to index
    %1 = arith.maxsi %0, %c0 : index
    %2 = arith.minsi %1, %c7 : index
    %4 = linalg.index 1 : index
    %5 = memref.load %x[%2, %4] : memref<8x3xf32>
    %6 = arith.cmpi sge, %in, %c0_i32 : i32
    %7 = arith.select %6, %5, %zero : f32
    linalg.yield %7 : f32
  }
  %xe = memref.expand_shape %flat [[0, 1], [2]] output_shape [2, 4, 3] : memref<8x3xf32> into memref<2x4x3xf32>
  %a = memref.cast %xe : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  %b = memref.cast %w : memref<2x3x3xf32> to memref<?x?x?xf32, #dyn3>
  %h = memref.alloc() : memref<2x4x3xf32>
  %hc = memref.cast %h : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%a, %b, %hc, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  memref.dealloc %flat : memref<8x3xf32>
  // A second gather whose GEMM writes X itself.
  %flat2 = memref.alloc() : memref<8x3xf32>
  linalg.generic {indexing_maps = [#ids2, #id2], iterator_types = ["parallel", "parallel"]} ins(%ids2 : memref<8x1xi32>) outs(%flat2 : memref<8x3xf32>) {
  ^bb0(%in: i32, %out: f32):
    %0 = arith.index_cast %in : i32 to index
    %1 = arith.maxsi %0, %c0 : index
    %2 = arith.minsi %1, %c7 : index
    %4 = linalg.index 1 : index
    %5 = memref.load %x[%2, %4] : memref<8x3xf32>
    %6 = arith.cmpi sge, %in, %c0_i32 : i32
    %7 = arith.select %6, %5, %zero : f32
    linalg.yield %7 : f32
  }
  %xe2 = memref.expand_shape %flat2 [[0, 1], [2]] output_shape [2, 4, 3] : memref<8x3xf32> into memref<2x4x3xf32>
  %a2 = memref.cast %xe2 : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  %x3 = memref.expand_shape %x [[0, 1], [2]] output_shape [2, 4, 3] : memref<8x3xf32> into memref<2x4x3xf32>
  %xc = memref.cast %x3 : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%a2, %b, %xc, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  // h / h: 0 / 0 in the empty rows.
  %q = memref.alloc() : memref<2x4x3xf32>
  linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%h, %h : memref<2x4x3xf32>, memref<2x4x3xf32>) outs(%q : memref<2x4x3xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %0 = arith.divf %in, %in2 : f32
    linalg.yield %0 : f32
  }
  %qc = memref.cast %q : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  %yc = memref.cast %y : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%qc, %b, %yc, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  // h written through a transpose.
  %t = memref.transpose %h (d0, d1, d2) -> (d0, d2, d1) : memref<2x4x3xf32> to memref<2x3x4xf32, strided<[12, 1, 3]>>
  linalg.fill ins(%one : f32) outs(%t : memref<2x3x4xf32, strided<[12, 1, 3]>>)
  %dc = memref.cast %d : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%hc, %b, %dc, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  return
}

// -----

#dyn3 = strided<[?, ?, ?], offset: ?>
#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func private @stepc_batch_matmul_f32(memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) attributes {llvm.emit_c_interface}

// A weight gradient Hᵀ · dY summed over the slots, H unknown (a bias made its empty rows
// nonzero) but dY a gather (scaled: it stays a kernel): the empty slots' terms are zero, and
// the call gets the ids. A product that does not sum over the slots (G · dY, dY's rows the
// reduction's 4 = the 4 slots by chance) does not.
// CHECK-LABEL: func.func @weight_gradient
// CHECK: linalg.generic
// CHECK: call @stepc_batch_matmul_masked_f32({{.*}}, %c1_i64, %c0_i64, %c0_i64)
// CHECK: call @stepc_batch_matmul_f32({{.*}}, %c0_i64, %c0_i64, %c0_i64)
func.func @weight_gradient(%dy: memref<6x3xf32>, %gate: memref<6xf32>, %ids: memref<2x4xi32>, %h: memref<2x4x5xf32>, %dw: memref<2x5x3xf32>, %g4: memref<2x4x4xf32>, %res: memref<2x4x3xf32>) {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %c0_i32 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  %dye = memref.alloc() : memref<2x4x3xf32>
  linalg.generic {indexing_maps = [#ids, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : memref<2x4xi32>) outs(%dye : memref<2x4x3xf32>) {
  ^bb0(%in: i32, %out: f32):
    %0 = arith.index_cast %in : i32 to index
    %1 = arith.maxsi %0, %c0 : index
    %2 = arith.minsi %1, %c5 : index
    %4 = linalg.index 2 : index
    %5 = memref.load %dy[%2, %4] : memref<6x3xf32>
    %g = memref.load %gate[%2] : memref<6xf32>
    %m = arith.mulf %5, %g : f32
    %6 = arith.cmpi sge, %in, %c0_i32 : i32
    %7 = arith.select %6, %m, %zero : f32
    linalg.yield %7 : f32
  }
  %a = memref.cast %h : memref<2x4x5xf32> to memref<?x?x?xf32, #dyn3>
  %b = memref.cast %dye : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  %c = memref.cast %dw : memref<2x5x3xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%a, %b, %c, %c1_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  %a4 = memref.cast %g4 : memref<2x4x4xf32> to memref<?x?x?xf32, #dyn3>
  %o = memref.cast %res : memref<2x4x3xf32> to memref<?x?x?xf32, #dyn3>
  call @stepc_batch_matmul_f32(%a4, %b, %o, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, memref<?x?x?xf32, #dyn3>, i64, i64, i64) -> ()
  return
}
