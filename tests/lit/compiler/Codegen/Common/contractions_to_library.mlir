// Tests --step-contractions-to-library: bufferized f32 contractions become calls to the GEMM
// interface (runtime/hal/Gemm.h) with the transpose flags derived from the operand layouts, and
// everything the library cannot run (f64, non-collapsible strides, kernel bodies) is left
// as linalg. Each case is its own module, so each checks its own declaration.
//
// RUN: %stepc-opt %s -split-input-file --step-contractions-to-library | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-contractions-to-library | %stepc-opt -split-input-file -o /dev/null

// A plain linalg.matmul becomes a call with no transposes, operands in order (A, B, C), each
// cast to the interface's fully dynamic strided view; the callee is declared once, private,
// with llvm.emit_c_interface (the runtime implements _mlir_ciface_stepc_matmul_f32).
// CHECK: func.func private @stepc_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.+]]: memref<4x8xf32>, %[[B:.+]]: memref<8x16xf32>, %[[C:.+]]: memref<4x16xf32>)
// CHECK-NOT: linalg.matmul
// CHECK-DAG: %[[VA:.+]] = memref.cast %[[A]] : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-DAG: %[[VB:.+]] = memref.cast %[[B]] : memref<8x16xf32> to
// CHECK-DAG: %[[VC:.+]] = memref.cast %[[C]] : memref<4x16xf32> to
// CHECK-DAG: %[[F0:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[F1:.+]] = arith.constant 0 : i64
// CHECK: call @stepc_matmul_f32(%[[VA]], %[[VB]], %[[VC]], %[[F0]], %[[F1]], %{{.+}})
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// A generic contraction whose lhs is stored [K, M] (map (m, n, k) -> (k, m)) is a GEMM with
// transA = 1, transB = 0.
// CHECK-LABEL: func.func @trans_a
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[TA:.+]] = arith.constant 1 : i64
// CHECK-DAG: %[[TB:.+]] = arith.constant 0 : i64
// CHECK: call @stepc_matmul_f32(%{{.+}}, %{{.+}}, %{{.+}}, %[[TA]], %[[TB]], %{{.+}})
// CHECK-NOT: linalg.generic
// CHECK: return
#at = affine_map<(m, n, k) -> (k, m)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @trans_a(%a: memref<8x4xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.generic {indexing_maps = [#at, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x4xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An N-D contraction with two M dims (m0, m1): A and C collapse their leading dims with
// memref.collapse_shape (2x3 rows -> 6) and the call is a plain 2-D GEMM; B is already 2-D.
// CHECK-LABEL: func.func @nd
// CHECK-SAME: (%[[A:.+]]: memref<2x3x8xf32>, %[[B:.+]]: memref<8x16xf32>, %[[C:.+]]: memref<2x3x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[A2:.+]] = memref.collapse_shape %[[A]] {{\[}}[0, 1], [2]] : memref<2x3x8xf32> into memref<6x8xf32>
// CHECK: %[[VA:.+]] = memref.cast %[[A2]] : memref<6x8xf32> to
// CHECK: %[[VB:.+]] = memref.cast %[[B]]
// CHECK: %[[C2:.+]] = memref.collapse_shape %[[C]] {{\[}}[0, 1], [2]] : memref<2x3x16xf32> into memref<6x16xf32>
// CHECK: %[[VC:.+]] = memref.cast %[[C2]] : memref<6x16xf32> to
// CHECK: call @stepc_matmul_f32(%[[VA]], %[[VB]], %[[VC]], %{{.+}}, %{{.+}}, %{{.+}}) : (memref<?x?xf32,
// CHECK-NOT: linalg.generic
// CHECK: return
#a3 = affine_map<(m0, m1, n, k) -> (m0, m1, k)>
#b3 = affine_map<(m0, m1, n, k) -> (k, n)>
#c3 = affine_map<(m0, m1, n, k) -> (m0, m1, n)>
func.func @nd(%a: memref<2x3x8xf32>, %b: memref<8x16xf32>, %c: memref<2x3x16xf32>) {
  linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3x8xf32>, memref<8x16xf32>) outs(%c : memref<2x3x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// linalg.batch_matmul becomes a call to the batched entry point with 3-D views; only that
// declaration is added (no stepc_matmul_f32 in this module).
// CHECK-NOT: @stepc_matmul_f32
// CHECK: func.func private @stepc_batch_matmul_f32(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, {{.*}} attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @batch
// CHECK-NOT: linalg.batch_matmul
// CHECK-DAG: %[[F0:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[F1:.+]] = arith.constant 0 : i64
// CHECK: call @stepc_batch_matmul_f32(%{{.+}}, %{{.+}}, %{{.+}}, %[[F0]], %[[F1]], %{{.+}}) : (memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-NOT: @stepc_matmul_f32
// CHECK: return
func.func @batch(%a: memref<5x4x8xf32>, %b: memref<5x8x16xf32>, %c: memref<5x4x16xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<5x4x8xf32>, memref<5x8x16xf32>) outs(%c : memref<5x4x16xf32>)
  return
}

// -----

// C stored [N, M]: the call computes C^T = B^T A^T, so A and B are swapped and both flags
// flip from (0, 0) to (1, 1): C (16x4) = op(B) (B^T, 16x8) * op(A) (A^T, 8x4).
// CHECK-LABEL: func.func @c_transposed
// CHECK-SAME: (%[[A:.+]]: memref<4x8xf32>, %[[B:.+]]: memref<8x16xf32>, %[[C:.+]]: memref<16x4xf32>)
// CHECK-DAG: %[[VA:.+]] = memref.cast %[[A]]
// CHECK-DAG: %[[VB:.+]] = memref.cast %[[B]]
// CHECK-DAG: %[[VC:.+]] = memref.cast %[[C]]
// CHECK-DAG: %[[T0:.+]] = arith.constant 1 : i64
// CHECK-DAG: %[[T1:.+]] = arith.constant 1 : i64
// CHECK: call @stepc_matmul_f32(%[[VB]], %[[VA]], %[[VC]], %[[T0]], %[[T1]], %{{.+}})
// CHECK-NOT: linalg.generic
// CHECK: return
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#ct = affine_map<(m, n, k) -> (n, m)>
func.func @c_transposed(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<16x4xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #ct], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<16x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The library is f32 only: an f64 matmul stays a linalg op and nothing is declared.
// CHECK-NOT: stepc_matmul_f32
// CHECK-LABEL: func.func @f64
// CHECK-NEXT: linalg.matmul ins(%{{.+}}, %{{.+}} : memref<4x8xf64>, memref<8x16xf64>)
// CHECK-NOT: call
// CHECK: return
func.func @f64(%a: memref<4x8xf64>, %b: memref<8x16xf64>, %c: memref<4x16xf64>) {
  linalg.matmul ins(%a, %b : memref<4x8xf64>, memref<8x16xf64>) outs(%c : memref<4x16xf64>)
  return
}

// -----

// A's M dims (2, 3) have strides 48 and 8 (a slice of a 2x6x8 buffer): 3 * 8 != 48, so they
// do not collapse without a copy and the contraction stays a generic on the original
// buffers, with no call and no leftover views (casts or collapse_shapes of B and C).
// CHECK-LABEL: func.func @strided
// CHECK-SAME: (%[[BIG:.+]]: memref<2x6x8xf32>, %[[B:.+]]: memref<8x16xf32>, %[[C:.+]]: memref<2x3x16xf32>)
// CHECK-NOT: memref.cast
// CHECK-NOT: memref.collapse_shape
// CHECK: %[[SV:.+]] = memref.subview %[[BIG]]
// CHECK-NOT: memref.cast
// CHECK-NOT: memref.collapse_shape
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SV]], %[[B]] : memref<2x3x8xf32, strided<[48, 8, 1]>>, memref<8x16xf32>) outs(%[[C]] : memref<2x3x16xf32>)
// CHECK-NOT: call
// CHECK: return
#a3 = affine_map<(m0, m1, n, k) -> (m0, m1, k)>
#b3 = affine_map<(m0, m1, n, k) -> (k, n)>
#c3 = affine_map<(m0, m1, n, k) -> (m0, m1, n)>
func.func @strided(%big: memref<2x6x8xf32>, %b: memref<8x16xf32>, %c: memref<2x3x16xf32>) {
  %a = memref.subview %big[0, 0, 0] [2, 3, 8] [1, 1, 1] : memref<2x6x8xf32> to memref<2x3x8xf32, strided<[48, 8, 1]>>
  linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3x8xf32, strided<[48, 8, 1]>>, memref<8x16xf32>) outs(%c : memref<2x3x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A function marked step.kernel (an outlined loop kernel) is left untouched, even though it
// holds a plain f32 matmul.
// CHECK-NOT: stepc_matmul_f32
// CHECK-LABEL: func.func @kernel
// CHECK-NEXT: linalg.matmul
// CHECK-NOT: call
// CHECK: return
func.func @kernel(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) attributes {step.kernel} {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// A contraction right after a zero fill of its output overwrites instead of accumulating
// (accumulate = 0) and the fill is gone; views and constants in between do not matter. A
// second contraction into the same C accumulates (the first call stands between).
// CHECK-LABEL: func.func @after_zero_fill
// CHECK-NOT: linalg.fill
// CHECK: arith.constant 0 : i64
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: %[[ACC0:.+]] = arith.constant 0 : i64
// CHECK-NEXT: call @stepc_matmul_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ACC0]])
// CHECK: arith.constant 0 : i64
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: %[[ACC1:.+]] = arith.constant 1 : i64
// CHECK-NEXT: call @stepc_matmul_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ACC1]])
func.func @after_zero_fill(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  %v = memref.subview %a[0, 0] [4, 8] [1, 1] : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1]>>
  linalg.matmul ins(%v, %b : memref<4x8xf32, strided<[8, 1]>>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// A fill of a non-zero value, or one followed by another use of C, keeps the fill.
// CHECK-LABEL: func.func @after_other_fill
// CHECK: linalg.fill
// CHECK: arith.constant 0 : i64
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: %[[ACC:.+]] = arith.constant 1 : i64
// CHECK-NEXT: call @stepc_matmul_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ACC]])
func.func @after_other_fill(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// bf16 operands into an f32 accumulator (--precision=bf16): the _bf16 variant, whose A and B
// views are bf16 and C f32; the transposed form (a generic contraction extending its operands
// in the body) too. bf16 into bf16 (rounding every partial sum) is left alone.
// CHECK: func.func private @stepc_matmul_bf16(memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @matmul_bf16
// CHECK: call @stepc_matmul_bf16
// CHECK: %[[T:.+]] = arith.constant 1 : i64
// CHECK: call @stepc_matmul_bf16(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[T]], %{{.+}})
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : memref<4x8xbf16>, memref<8x16xbf16>) outs(%{{.+}} : memref<4x16xbf16>)
func.func @matmul_bf16(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %bt: memref<16x8xbf16>, %c: memref<4x16xf32>, %c16: memref<4x16xbf16>) {
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %bt : memref<4x8xbf16>, memref<16x8xbf16>) outs(%c : memref<4x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c16 : memref<4x16xbf16>)
  return
}
