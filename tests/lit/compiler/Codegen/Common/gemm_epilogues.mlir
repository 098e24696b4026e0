// Tests --step-gemm-epilogues: a library GEMM into a temporary, read once by the very next
// kernel, which adds a bias along the last dimension (and maybe a residual, or then applies
// the tanh GELU), becomes one stepc_matmul_epilogue_f32(A, B, D, bias, R, transA, transB,
// flags) (flags: 1 residual, 2 gelu, 4 GELU's gradient with GELU's input in R's slot, 8 the
// bias gradient after it, into the bias slot);
// anything else is left alone: an op in between that may write A or B, C read again later
// (unless D was written into C), a kernel that is not a plain sum, GELU of one or GELU's
// gradient (a wrong GELU constant included).
//
// RUN: %stepc-opt %s --step-gemm-epilogues --canonicalize | FileCheck %s

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#last = affine_map<(d0, d1, d2) -> (d2)>
!dyn = memref<?x?xf32, strided<[?, ?], offset: ?>>
module {
  func.func private @stepc_matmul_f32(!dyn, !dyn, !dyn, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func private @other(memref<32x96xf32>)

  // CHECK-LABEL: func.func @bias(
  // CHECK-SAME: %[[X:[^:]+]]: memref<32x32xf32>, %[[W:[^:]+]]: memref<32x96xf32>, %[[B:[^:]+]]: memref<96xf32>, %[[D:[^:]+]]: memref<2x16x96xf32>
  // CHECK-NOT: memref.alloc
  // CHECK-DAG: %[[XV:.+]] = memref.cast %[[X]]
  // CHECK-DAG: %[[WV:.+]] = memref.cast %[[W]]
  // CHECK-DAG: %[[DM:.+]] = memref.collapse_shape %[[D]] {{\[\[}}0, 1], [2]] : memref<2x16x96xf32> into memref<32x96xf32>
  // CHECK-DAG: %[[DV:.+]] = memref.cast %[[DM]]
  // CHECK-DAG: %[[BV:.+]] = memref.cast %[[B]] : memref<96xf32> to memref<?xf32, strided<[?], offset: ?>>
  // CHECK-DAG: %[[NO:.+]] = arith.constant 0 : i64
  // CHECK: call @stepc_matmul_epilogue_f32(%[[XV]], %[[WV]], %[[DV]], %[[BV]], %[[DV]], %[[NO]], %[[NO]], %[[NO]])
  // CHECK-NOT: linalg.generic
  // CHECK: return
  func.func @bias(%x: memref<32x32xf32>, %w: memref<32x96xf32>, %b: memref<96xf32>, %d: memref<2x16x96xf32>) {
    %c0 = arith.constant 0 : i64
    %c = memref.alloc() : memref<32x96xf32>
    %xv = memref.cast %x : memref<32x32xf32> to !dyn
    %wv = memref.cast %w : memref<32x96xf32> to !dyn
    %cv = memref.cast %c : memref<32x96xf32> to !dyn
    call @stepc_matmul_f32(%xv, %wv, %cv, %c0, %c0, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    %c3 = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 16, 96] : memref<32x96xf32> into memref<2x16x96xf32>
    linalg.generic {indexing_maps = [#id3, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%c3, %b : memref<2x16x96xf32>, memref<96xf32>) outs(%d : memref<2x16x96xf32>) {
    ^bb0(%in: f32, %bias: f32, %out: f32):
      %s = arith.addf %in, %bias : f32
      linalg.yield %s : f32
    }
    memref.dealloc %c : memref<32x96xf32>
    return
  }

  // The residual, in any order of the adds; D may be the residual itself (in place).
  // CHECK-LABEL: func.func @residual(
  // CHECK-SAME: %[[R:[^:]+]]: memref<2x16x96xf32>, %{{[^:]+}}: memref<96xf32>
  // CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : i64
  // CHECK: memref.collapse_shape %[[R]]
  // CHECK: memref.collapse_shape %[[R]]
  // CHECK: call @stepc_matmul_epilogue_f32({{.*}}, %[[ONE]])
  func.func @residual(%x: memref<32x32xf32>, %w: memref<32x96xf32>, %r: memref<2x16x96xf32>, %b: memref<96xf32>) {
    %c0 = arith.constant 0 : i64
    %c = memref.alloc() : memref<32x96xf32>
    %xv = memref.cast %x : memref<32x32xf32> to !dyn
    %wv = memref.cast %w : memref<32x96xf32> to !dyn
    %cv = memref.cast %c : memref<32x96xf32> to !dyn
    call @stepc_matmul_f32(%xv, %wv, %cv, %c0, %c0, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    %c3 = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 16, 96] : memref<32x96xf32> into memref<2x16x96xf32>
    linalg.generic {indexing_maps = [#id3, #id3, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%r, %c3, %b : memref<2x16x96xf32>, memref<2x16x96xf32>, memref<96xf32>) outs(%r : memref<2x16x96xf32>) {
    ^bb0(%res: f32, %in: f32, %bias: f32, %out: f32):
      %s = arith.addf %in, %bias : f32
      %t = arith.addf %res, %s : f32
      linalg.yield %t : f32
    }
    memref.dealloc %c : memref<32x96xf32>
    return
  }

  // An op between the GEMM and its consumer is fine if it cannot write A or B (the GEMM moves
  // to the consumer): an unknown call on another buffer is; one given B is not.
  // CHECK-LABEL: func.func @between(
  // CHECK: call @other
  // CHECK: call @stepc_matmul_epilogue_f32
  // CHECK-NOT: linalg.generic
  // CHECK-LABEL: func.func @between_writes_input(
  // CHECK: call @stepc_matmul_f32
  // CHECK: call @other
  // CHECK: linalg.generic
  func.func @between(%x: memref<32x32xf32>, %w: memref<32x96xf32>, %b: memref<96xf32>, %d: memref<32x96xf32>, %e: memref<32x96xf32>) {
    %c0 = arith.constant 0 : i64
    %c = memref.alloc() : memref<32x96xf32>
    %xv = memref.cast %x : memref<32x32xf32> to !dyn
    %wv = memref.cast %w : memref<32x96xf32> to !dyn
    %cv = memref.cast %c : memref<32x96xf32> to !dyn
    call @stepc_matmul_f32(%xv, %wv, %cv, %c0, %c0, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    call @other(%e) : (memref<32x96xf32>) -> ()
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%c, %b : memref<32x96xf32>, memref<96xf32>) outs(%d : memref<32x96xf32>) {
    ^bb0(%in: f32, %bias: f32, %out: f32):
      %s = arith.addf %in, %bias : f32
      linalg.yield %s : f32
    }
    memref.dealloc %c : memref<32x96xf32>
    return
  }
  func.func @between_writes_input(%x: memref<32x32xf32>, %w: memref<32x96xf32>, %b: memref<96xf32>, %d: memref<32x96xf32>) {
    %c0 = arith.constant 0 : i64
    %c = memref.alloc() : memref<32x96xf32>
    %xv = memref.cast %x : memref<32x32xf32> to !dyn
    %wv = memref.cast %w : memref<32x96xf32> to !dyn
    %cv = memref.cast %c : memref<32x96xf32> to !dyn
    call @stepc_matmul_f32(%xv, %wv, %cv, %c0, %c0, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    call @other(%w) : (memref<32x96xf32>) -> ()
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%c, %b : memref<32x96xf32>, memref<96xf32>) outs(%d : memref<32x96xf32>) {
    ^bb0(%in: f32, %bias: f32, %out: f32):
      %s = arith.addf %in, %bias : f32
      linalg.yield %s : f32
    }
    memref.dealloc %c : memref<32x96xf32>
    return
  }

  // C is read again after the bias add (a backward needs it), and another kernel scales.
  // CHECK-LABEL: func.func @reused(
  // CHECK: call @stepc_matmul_f32
  // CHECK: linalg.generic
  // CHECK: call @other
  // CHECK-LABEL: func.func @scaled(
  // CHECK: call @stepc_matmul_f32
  // CHECK: linalg.generic
  func.func @reused(%x: memref<32x32xf32>, %w: memref<32x96xf32>, %b: memref<96xf32>, %d: memref<32x96xf32>) {
    %c0 = arith.constant 0 : i64
    %c = memref.alloc() : memref<32x96xf32>
    %xv = memref.cast %x : memref<32x32xf32> to !dyn
    %wv = memref.cast %w : memref<32x96xf32> to !dyn
    %cv = memref.cast %c : memref<32x96xf32> to !dyn
    call @stepc_matmul_f32(%xv, %wv, %cv, %c0, %c0, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%c, %b : memref<32x96xf32>, memref<96xf32>) outs(%d : memref<32x96xf32>) {
    ^bb0(%in: f32, %bias: f32, %out: f32):
      %s = arith.addf %in, %bias : f32
      linalg.yield %s : f32
    }
    call @other(%c) : (memref<32x96xf32>) -> ()
    memref.dealloc %c : memref<32x96xf32>
    return
  }
  func.func @scaled(%x: memref<32x32xf32>, %w: memref<32x96xf32>, %b: memref<96xf32>, %d: memref<32x96xf32>) {
    %c0 = arith.constant 0 : i64
    %c = memref.alloc() : memref<32x96xf32>
    %xv = memref.cast %x : memref<32x32xf32> to !dyn
    %wv = memref.cast %w : memref<32x96xf32> to !dyn
    %cv = memref.cast %c : memref<32x96xf32> to !dyn
    call @stepc_matmul_f32(%xv, %wv, %cv, %c0, %c0, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%c, %b : memref<32x96xf32>, memref<96xf32>) outs(%d : memref<32x96xf32>) {
    ^bb0(%in: f32, %bias: f32, %out: f32):
      %s = arith.mulf %in, %bias : f32
      linalg.yield %s : f32
    }
    memref.dealloc %c : memref<32x96xf32>
    return
  }

  // gelu(C + bias), operands in another order than the lowering writes them.
  // CHECK-LABEL: func.func @gelu(
  // CHECK-DAG: %[[TWO:.+]] = arith.constant 2 : i64
  // CHECK: call @stepc_matmul_epilogue_f32({{.*}}, %[[TWO]])
  // CHECK-NOT: linalg.generic
  // CHECK-LABEL: func.func @not_gelu(
  // CHECK: call @stepc_matmul_f32
  // CHECK: linalg.generic
  func.func @gelu(%x: memref<32x32xf32>, %w: memref<32x96xf32>, %b: memref<96xf32>, %d: memref<32x96xf32>) {
    %c0 = arith.constant 0 : i64
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k = arith.constant 0.044715 : f32
    %s = arith.constant 0.797884583 : f32
    %c = memref.alloc() : memref<32x96xf32>
    %xv = memref.cast %x : memref<32x32xf32> to !dyn
    %wv = memref.cast %w : memref<32x96xf32> to !dyn
    %cv = memref.cast %c : memref<32x96xf32> to !dyn
    call @stepc_matmul_f32(%xv, %wv, %cv, %c0, %c0, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%b, %c : memref<96xf32>, memref<32x96xf32>) outs(%d : memref<32x96xf32>) {
    ^bb0(%bias: f32, %in: f32, %out: f32):
      %v = arith.addf %bias, %in : f32
      %sq = arith.mulf %v, %v : f32
      %cube = arith.mulf %v, %sq : f32
      %kc = arith.mulf %cube, %k : f32
      %sum = arith.addf %kc, %v : f32
      %arg = arith.mulf %sum, %s : f32
      %t = math.tanh %arg : f32
      %onet = arith.addf %t, %one : f32
      %hv = arith.mulf %v, %half : f32
      %y = arith.mulf %onet, %hv : f32
      linalg.yield %y : f32
    }
    memref.dealloc %c : memref<32x96xf32>
    return
  }
  func.func @not_gelu(%x: memref<32x32xf32>, %w: memref<32x96xf32>, %b: memref<96xf32>, %d: memref<32x96xf32>) {
    %c0 = arith.constant 0 : i64
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k = arith.constant 0.05 : f32
    %s = arith.constant 0.797884583 : f32
    %c = memref.alloc() : memref<32x96xf32>
    %xv = memref.cast %x : memref<32x32xf32> to !dyn
    %wv = memref.cast %w : memref<32x96xf32> to !dyn
    %cv = memref.cast %c : memref<32x96xf32> to !dyn
    call @stepc_matmul_f32(%xv, %wv, %cv, %c0, %c0, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%b, %c : memref<96xf32>, memref<32x96xf32>) outs(%d : memref<32x96xf32>) {
    ^bb0(%bias: f32, %in: f32, %out: f32):
      %v = arith.addf %bias, %in : f32
      %sq = arith.mulf %v, %v : f32
      %cube = arith.mulf %v, %sq : f32
      %kc = arith.mulf %cube, %k : f32
      %sum = arith.addf %kc, %v : f32
      %arg = arith.mulf %sum, %s : f32
      %t = math.tanh %arg : f32
      %onet = arith.addf %t, %one : f32
      %hv = arith.mulf %v, %half : f32
      %y = arith.mulf %onet, %hv : f32
      linalg.yield %y : f32
    }
    memref.dealloc %c : memref<32x96xf32>
    return
  }

  // GELU's backward, written in place into C (later readers see D), GELU's input in R's slot;
  // another GEMM (reading A) in between is fine.
  // CHECK-LABEL: func.func @gelu_grad(
  // CHECK-SAME: %[[G:[^:]+]]: memref<32x32xf32>, %{{[^:]+}}: memref<96x32xf32>, %[[PRE:[^:]+]]: memref<32x96xf32>
  // CHECK-DAG: %[[FOUR:.+]] = arith.constant 4 : i64
  // CHECK: call @stepc_matmul_f32
  // CHECK: memref.cast %[[PRE]]
  // CHECK: call @stepc_matmul_epilogue_f32({{.*}}, %[[FOUR]])
  // CHECK-NOT: linalg.generic
  // CHECK: call @other(%{{.+}})
  func.func @gelu_grad(%g: memref<32x32xf32>, %w: memref<96x32xf32>, %pre: memref<32x96xf32>, %dw: memref<32x32xf32>) {
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %k = arith.constant 0.797884583 : f32
    %c = arith.constant 0.044715 : f32
    %c3 = arith.constant 0.134145 : f32
    %one = arith.constant 1.0 : f32
    %half = arith.constant 0.5 : f32
    %out = memref.alloc() : memref<32x96xf32>
    %gv = memref.cast %g : memref<32x32xf32> to !dyn
    %wv = memref.cast %w : memref<96x32xf32> to !dyn
    %ov = memref.cast %out : memref<32x96xf32> to !dyn
    %dwv = memref.cast %dw : memref<32x32xf32> to !dyn
    call @stepc_matmul_f32(%gv, %wv, %ov, %c0, %c1, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    call @stepc_matmul_f32(%gv, %gv, %dwv, %c1, %c0, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%out, %pre : memref<32x96xf32>, memref<32x96xf32>) outs(%out : memref<32x96xf32>) {
    ^bb0(%gy: f32, %x: f32, %o: f32):
      %0 = arith.mulf %x, %x : f32
      %1 = arith.mulf %0, %x : f32
      %2 = arith.mulf %1, %c : f32
      %3 = arith.addf %x, %2 : f32
      %4 = arith.mulf %3, %k : f32
      %5 = arith.mulf %0, %c3 : f32
      %6 = arith.addf %5, %one : f32
      %7 = math.tanh %4 : f32
      %8 = arith.mulf %6, %k : f32
      %9 = arith.mulf %7, %7 : f32
      %10 = arith.subf %one, %9 : f32
      %11 = arith.mulf %10, %8 : f32
      %12 = arith.mulf %x, %half : f32
      %13 = arith.mulf %12, %11 : f32
      %14 = arith.addf %7, %one : f32
      %15 = arith.mulf %14, %half : f32
      %16 = arith.addf %15, %13 : f32
      %17 = arith.mulf %gy, %16 : f32
      linalg.yield %17 : f32
    }
    %view = memref.subview %out[0, 0] [32, 32] [1, 1] : memref<32x96xf32> to memref<32x32xf32, strided<[96, 1]>>
    %copy = memref.alloc() : memref<32x96xf32>
    call @other(%out) : (memref<32x96xf32>) -> ()
    memref.dealloc %out : memref<32x96xf32>
    memref.dealloc %copy : memref<32x96xf32>
    return
  }

  // ... and the bias gradient right after it (a zero fill, then D's column sums) joins in: the
  // gradient's buffer in the bias slot, flags 4 | 8; the fill and the sum are gone.
  // CHECK-LABEL: func.func @gelu_grad_bias(
  // CHECK-SAME: %[[DB:[^:]+]]: memref<96xf32>)
  // CHECK-DAG: %[[TWELVE:.+]] = arith.constant 12 : i64
  // CHECK-DAG: %[[DBV:.+]] = memref.cast %[[DB]]
  // CHECK: call @stepc_matmul_epilogue_f32(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[DBV]], %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[TWELVE]])
  // CHECK-NOT: linalg
  // CHECK: return
  func.func @gelu_grad_bias(%g: memref<32x32xf32>, %w: memref<96x32xf32>, %pre: memref<32x96xf32>, %db: memref<96xf32>) {
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %zero = arith.constant 0.0 : f32
    %k = arith.constant 0.797884583 : f32
    %c = arith.constant 0.044715 : f32
    %c3 = arith.constant 0.134145 : f32
    %one = arith.constant 1.0 : f32
    %half = arith.constant 0.5 : f32
    %out = memref.alloc() : memref<32x96xf32>
    %gv = memref.cast %g : memref<32x32xf32> to !dyn
    %wv = memref.cast %w : memref<96x32xf32> to !dyn
    %ov = memref.cast %out : memref<32x96xf32> to !dyn
    call @stepc_matmul_f32(%gv, %wv, %ov, %c0, %c1, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%out, %pre : memref<32x96xf32>, memref<32x96xf32>) outs(%out : memref<32x96xf32>) {
    ^bb0(%gy: f32, %x: f32, %o: f32):
      %0 = arith.mulf %x, %x : f32
      %1 = arith.mulf %0, %x : f32
      %2 = arith.mulf %1, %c : f32
      %3 = arith.addf %x, %2 : f32
      %4 = arith.mulf %3, %k : f32
      %5 = arith.mulf %0, %c3 : f32
      %6 = arith.addf %5, %one : f32
      %7 = math.tanh %4 : f32
      %8 = arith.mulf %6, %k : f32
      %9 = arith.mulf %7, %7 : f32
      %10 = arith.subf %one, %9 : f32
      %11 = arith.mulf %10, %8 : f32
      %12 = arith.mulf %x, %half : f32
      %13 = arith.mulf %12, %11 : f32
      %14 = arith.addf %7, %one : f32
      %15 = arith.mulf %14, %half : f32
      %16 = arith.addf %15, %13 : f32
      %17 = arith.mulf %gy, %16 : f32
      linalg.yield %17 : f32
    }
    linalg.fill ins(%zero : f32) outs(%db : memref<96xf32>)
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
        ins(%out : memref<32x96xf32>) outs(%db : memref<96xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %acc, %in : f32
      linalg.yield %s : f32
    }
    memref.dealloc %out : memref<32x96xf32>
    return
  }

  // A weight gradient dW = X^T dY and the bias gradient of the same dY (fill, then column
  // sums), even before it: one call with flags 16 at the GEMM's place (it writes db too).
  // CHECK-LABEL: func.func @weight_and_bias_grad(
  // CHECK-SAME: %[[DB2:[^:]+]]: memref<96xf32>)
  // CHECK-DAG: %[[SIXTEEN:.+]] = arith.constant 16 : i64
  // CHECK-NOT: linalg
  // CHECK: %[[DBV2:.+]] = memref.cast %[[DB2]]
  // CHECK: call @stepc_matmul_epilogue_f32(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[DBV2]], %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[SIXTEEN]])
  // CHECK-NOT: linalg
  // CHECK: return
  func.func @weight_and_bias_grad(%x: memref<2x16x32xf32>, %dy: memref<2x16x96xf32>, %dw: memref<32x96xf32>, %db: memref<96xf32>) {
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%db : memref<96xf32>)
    linalg.generic {indexing_maps = [affine_map<(a, b, j) -> (a, b, j)>, affine_map<(a, b, j) -> (j)>], iterator_types = ["reduction", "reduction", "parallel"]}
        ins(%dy : memref<2x16x96xf32>) outs(%db : memref<96xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %acc, %in : f32
      linalg.yield %s : f32
    }
    %x2 = memref.collapse_shape %x [[0, 1], [2]] : memref<2x16x32xf32> into memref<32x32xf32>
    %dy2 = memref.collapse_shape %dy [[0, 1], [2]] : memref<2x16x96xf32> into memref<32x96xf32>
    %xv = memref.cast %x2 : memref<32x32xf32> to !dyn
    %dyv = memref.cast %dy2 : memref<32x96xf32> to !dyn
    %dwv = memref.cast %dw : memref<32x96xf32> to !dyn
    call @stepc_matmul_f32(%xv, %dyv, %dwv, %c1, %c0, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    return
  }

  // A residual updated in place, D = C + D (x += h·W), needs no epilogue: the plain GEMM
  // accumulates into D (flag 1), C and the kernel go.
  // CHECK-LABEL: func.func @into_residual(
  // CHECK-SAME: %[[X3:[^:]+]]: memref<32x32xf32>, %[[W3:[^:]+]]: memref<32x96xf32>, %[[R3:[^:]+]]: memref<2x16x96xf32>)
  // CHECK-NOT: memref.alloc
  // CHECK-DAG: %[[ONE3:.+]] = arith.constant 1 : i64
  // CHECK-DAG: %[[NO3:.+]] = arith.constant 0 : i64
  // CHECK-DAG: %[[RM3:.+]] = memref.collapse_shape %[[R3]] {{\[\[}}0, 1], [2]] : memref<2x16x96xf32> into memref<32x96xf32>
  // CHECK-DAG: %[[RV3:.+]] = memref.cast %[[RM3]]
  // CHECK: call @stepc_matmul_f32(%{{[^,]+}}, %{{[^,]+}}, %[[RV3]], %[[NO3]], %[[NO3]], %[[ONE3]])
  // CHECK-NOT: linalg.generic
  // CHECK-NOT: stepc_matmul_epilogue_f32
  // CHECK: return
  func.func @into_residual(%x: memref<32x32xf32>, %w: memref<32x96xf32>, %r: memref<2x16x96xf32>) {
    %c0 = arith.constant 0 : i64
    %c = memref.alloc() : memref<32x96xf32>
    %xv = memref.cast %x : memref<32x32xf32> to !dyn
    %wv = memref.cast %w : memref<32x96xf32> to !dyn
    %cv = memref.cast %c : memref<32x96xf32> to !dyn
    call @stepc_matmul_f32(%xv, %wv, %cv, %c0, %c0, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    %c3 = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 16, 96] : memref<32x96xf32> into memref<2x16x96xf32>
    linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%r, %c3 : memref<2x16x96xf32>, memref<2x16x96xf32>) outs(%r : memref<2x16x96xf32>) {
    ^bb0(%in: f32, %prod: f32, %out: f32):
      %s = arith.addf %in, %prod : f32
      linalg.yield %s : f32
    }
    memref.dealloc %c : memref<32x96xf32>
    return
  }

  // D = C + R into another buffer stays as it is (the GEMM would need R copied into D first).
  // CHECK-LABEL: func.func @residual_elsewhere(
  // CHECK: call @stepc_matmul_f32(
  // CHECK: linalg.generic
  // CHECK: return
  func.func @residual_elsewhere(%x: memref<32x32xf32>, %w: memref<32x96xf32>, %r: memref<2x16x96xf32>, %d: memref<2x16x96xf32>) {
    %c0 = arith.constant 0 : i64
    %c = memref.alloc() : memref<32x96xf32>
    %xv = memref.cast %x : memref<32x32xf32> to !dyn
    %wv = memref.cast %w : memref<32x96xf32> to !dyn
    %cv = memref.cast %c : memref<32x96xf32> to !dyn
    call @stepc_matmul_f32(%xv, %wv, %cv, %c0, %c0, %c0) : (!dyn, !dyn, !dyn, i64, i64, i64) -> ()
    %c3 = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 16, 96] : memref<32x96xf32> into memref<2x16x96xf32>
    linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%r, %c3 : memref<2x16x96xf32>, memref<2x16x96xf32>) outs(%d : memref<2x16x96xf32>) {
    ^bb0(%in: f32, %prod: f32, %out: f32):
      %s = arith.addf %in, %prod : f32
      linalg.yield %s : f32
    }
    memref.dealloc %c : memref<32x96xf32>
    return
  }
}
