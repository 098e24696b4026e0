// Tests --step-windowed-gemms: a run of GEMM calls over consecutive row windows of one buffer
// (a convolution's taps) becomes one call over the overlapping window view [R, K·C] with
// strides [C, 1]: against consecutive weight taps (the forward and the input gradient), or
// into consecutive taps of the weight gradient. Runs that are not one window are left alone.
//
// RUN: %stepc-opt %s -split-input-file --step-windowed-gemms | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-windowed-gemms | %stepc-opt -split-input-file -o /dev/null

#dyn = strided<[?, ?], offset: ?>
func.func private @stepc_matmul_f32(memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) attributes {llvm.emit_c_interface}

// The forward form: y = X[0:6]·W[0] + X[1:7]·W[1] + X[2:8]·W[2] over rows of 4 columns is
// one GEMM of the [6, 12] window (strides [4, 1]) with the taps as a [12, 5] matrix; the first
// call's overwrite flag stays.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.+]]: memref<8x4xf32>, %[[W:.+]]: memref<3x4x5xf32>, %[[Y:.+]]: memref<6x5xf32>)
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK: %[[WIN:.+]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [6, 12], strides: [4, 1] : memref<8x4xf32> to memref<6x12xf32, strided<[4, 1]>>
// CHECK: %[[VA:.+]] = memref.cast %[[WIN]]
// CHECK: %[[TAPS:.+]] = memref.subview %[[W]][0, 0, 0] [3, 4, 5] [1, 1, 1]
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[TAPS]] {{\[}}[0, 1], [2]] : memref<3x4x5xf32, strided<[20, 5, 1]>> into memref<12x5xf32, strided<[5, 1]>>
// CHECK: %[[VB:.+]] = memref.cast %[[FLAT]]
// CHECK: %[[VC:.+]] = memref.cast %[[Y]]
// CHECK: call @stepc_matmul_f32(%[[VA]], %[[VB]], %[[VC]], %[[ZERO]], %[[ZERO]], %[[ZERO]])
// CHECK-NOT: call @stepc_matmul_f32
// CHECK: return
func.func @forward(%x: memref<8x4xf32>, %w: memref<3x4x5xf32>, %y: memref<6x5xf32>) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %vy = memref.cast %y : memref<6x5xf32> to memref<?x?xf32, #dyn>
  %x0 = memref.subview %x[0, 0] [6, 4] [1, 1] : memref<8x4xf32> to memref<6x4xf32, strided<[4, 1]>>
  %w0 = memref.subview %w[0, 0, 0] [1, 4, 5] [1, 1, 1] : memref<3x4x5xf32> to memref<4x5xf32, strided<[5, 1]>>
  %a0 = memref.cast %x0 : memref<6x4xf32, strided<[4, 1]>> to memref<?x?xf32, #dyn>
  %b0 = memref.cast %w0 : memref<4x5xf32, strided<[5, 1]>> to memref<?x?xf32, #dyn>
  call @stepc_matmul_f32(%a0, %b0, %vy, %c0, %c0, %c0) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  %x1 = memref.subview %x[1, 0] [6, 4] [1, 1] : memref<8x4xf32> to memref<6x4xf32, strided<[4, 1], offset: 4>>
  %w1 = memref.subview %w[1, 0, 0] [1, 4, 5] [1, 1, 1] : memref<3x4x5xf32> to memref<4x5xf32, strided<[5, 1], offset: 20>>
  %a1 = memref.cast %x1 : memref<6x4xf32, strided<[4, 1], offset: 4>> to memref<?x?xf32, #dyn>
  %b1 = memref.cast %w1 : memref<4x5xf32, strided<[5, 1], offset: 20>> to memref<?x?xf32, #dyn>
  call @stepc_matmul_f32(%a1, %b1, %vy, %c0, %c0, %c1) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  %x2 = memref.subview %x[2, 0] [6, 4] [1, 1] : memref<8x4xf32> to memref<6x4xf32, strided<[4, 1], offset: 8>>
  %w2 = memref.subview %w[2, 0, 0] [1, 4, 5] [1, 1, 1] : memref<3x4x5xf32> to memref<4x5xf32, strided<[5, 1], offset: 40>>
  %a2 = memref.cast %x2 : memref<6x4xf32, strided<[4, 1], offset: 8>> to memref<?x?xf32, #dyn>
  %b2 = memref.cast %w2 : memref<4x5xf32, strided<[5, 1], offset: 40>> to memref<?x?xf32, #dyn>
  call @stepc_matmul_f32(%a2, %b2, %vy, %c0, %c0, %c1) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  return
}

// -----

#dyn = strided<[?, ?], offset: ?>
func.func private @stepc_matmul_f32(memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) attributes {llvm.emit_c_interface}

// The weight-gradient form: dw[k] = X[1+k : 7+k]ᵀ · G for k = 0, 1 is one GEMM of the
// transposed window into dw as [8, 5]. The window starts at row 1 of a buffer whose offset is
// only known at run time (a layer's slice): the view's offset is read from it.
// CHECK-LABEL: func.func @weight_grad
// CHECK-SAME: (%[[X:.+]]: memref<8x4xf32, strided<[4, 1], offset: ?>>, %[[G:.+]]: memref<6x5xf32>, %[[DW:.+]]: memref<2x4x5xf32>)
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1 : i64
// CHECK: %{{[a-z_0-9]+}}, %[[OFFSET:[a-z_0-9]+]], %{{.+}} = memref.extract_strided_metadata %[[X]]
// CHECK: %[[FOUR:.+]] = arith.constant 4 : index
// CHECK: %[[AT:.+]] = arith.addi %[[OFFSET]], %[[FOUR]] : index
// CHECK: %[[WIN:.+]] = memref.reinterpret_cast %[[X]] to offset: [%[[AT]]], sizes: [6, 8], strides: [4, 1] : memref<8x4xf32, strided<[4, 1], offset: ?>> to memref<6x8xf32, strided<[4, 1], offset: ?>>
// CHECK: %[[VA:.+]] = memref.cast %[[WIN]]
// CHECK: %[[VB:.+]] = memref.cast %[[G]]
// CHECK: %[[TAPS:.+]] = memref.subview %[[DW]][0, 0, 0] [2, 4, 5] [1, 1, 1]
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[TAPS]] {{\[}}[0, 1], [2]]
// CHECK: %[[VC:.+]] = memref.cast %[[FLAT]]
// CHECK: call @stepc_matmul_f32(%[[VA]], %[[VB]], %[[VC]], %[[ONE]], %[[ZERO]], %[[ZERO]])
// CHECK-NOT: call @stepc_matmul_f32
// CHECK: return
func.func @weight_grad(%x: memref<8x4xf32, strided<[4, 1], offset: ?>>, %g: memref<6x5xf32>, %dw: memref<2x4x5xf32>) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %vg = memref.cast %g : memref<6x5xf32> to memref<?x?xf32, #dyn>
  %x0 = memref.subview %x[1, 0] [6, 4] [1, 1] : memref<8x4xf32, strided<[4, 1], offset: ?>> to memref<6x4xf32, strided<[4, 1], offset: ?>>
  %d0 = memref.subview %dw[0, 0, 0] [1, 4, 5] [1, 1, 1] : memref<2x4x5xf32> to memref<4x5xf32, strided<[5, 1]>>
  %a0 = memref.cast %x0 : memref<6x4xf32, strided<[4, 1], offset: ?>> to memref<?x?xf32, #dyn>
  %o0 = memref.cast %d0 : memref<4x5xf32, strided<[5, 1]>> to memref<?x?xf32, #dyn>
  call @stepc_matmul_f32(%a0, %vg, %o0, %c1, %c0, %c0) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  %x1 = memref.subview %x[2, 0] [6, 4] [1, 1] : memref<8x4xf32, strided<[4, 1], offset: ?>> to memref<6x4xf32, strided<[4, 1], offset: ?>>
  %d1 = memref.subview %dw[1, 0, 0] [1, 4, 5] [1, 1, 1] : memref<2x4x5xf32> to memref<4x5xf32, strided<[5, 1], offset: 20>>
  %a1 = memref.cast %x1 : memref<6x4xf32, strided<[4, 1], offset: ?>> to memref<?x?xf32, #dyn>
  %o1 = memref.cast %d1 : memref<4x5xf32, strided<[5, 1], offset: 20>> to memref<?x?xf32, #dyn>
  call @stepc_matmul_f32(%a1, %vg, %o1, %c1, %c0, %c0) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  return
}

// -----

#dyn = strided<[?, ?], offset: ?>
func.func private @stepc_matmul_f32(memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) attributes {llvm.emit_c_interface}
func.func private @touch(memref<6x5xf32>)

// Not one window, each left as it is:
// - the windows skip a row (rows 0 and 2);
// - the second call overwrites instead of accumulating;
// - a call to something else sits between them (it may read or write the output);
// - the windows are not whole rows of their buffer (2 of 4 columns).
// CHECK-LABEL: func.func @not_windows
// CHECK-NOT: reinterpret_cast
// CHECK-COUNT-8: call @stepc_matmul_f32
// CHECK-NOT: reinterpret_cast
// CHECK: return
func.func @not_windows(%x: memref<8x4xf32>, %w: memref<3x4x5xf32>, %w2: memref<3x2x5xf32>, %y: memref<6x5xf32>) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %vy = memref.cast %y : memref<6x5xf32> to memref<?x?xf32, #dyn>
  %x0 = memref.subview %x[0, 0] [6, 4] [1, 1] : memref<8x4xf32> to memref<6x4xf32, strided<[4, 1]>>
  %x1 = memref.subview %x[1, 0] [6, 4] [1, 1] : memref<8x4xf32> to memref<6x4xf32, strided<[4, 1], offset: 4>>
  %x2 = memref.subview %x[2, 0] [6, 4] [1, 1] : memref<8x4xf32> to memref<6x4xf32, strided<[4, 1], offset: 8>>
  %w0 = memref.subview %w[0, 0, 0] [1, 4, 5] [1, 1, 1] : memref<3x4x5xf32> to memref<4x5xf32, strided<[5, 1]>>
  %w1 = memref.subview %w[1, 0, 0] [1, 4, 5] [1, 1, 1] : memref<3x4x5xf32> to memref<4x5xf32, strided<[5, 1], offset: 20>>
  %a0 = memref.cast %x0 : memref<6x4xf32, strided<[4, 1]>> to memref<?x?xf32, #dyn>
  %a1 = memref.cast %x1 : memref<6x4xf32, strided<[4, 1], offset: 4>> to memref<?x?xf32, #dyn>
  %a2 = memref.cast %x2 : memref<6x4xf32, strided<[4, 1], offset: 8>> to memref<?x?xf32, #dyn>
  %b0 = memref.cast %w0 : memref<4x5xf32, strided<[5, 1]>> to memref<?x?xf32, #dyn>
  %b1 = memref.cast %w1 : memref<4x5xf32, strided<[5, 1], offset: 20>> to memref<?x?xf32, #dyn>
  // rows 0, then 2
  call @stepc_matmul_f32(%a0, %b0, %vy, %c0, %c0, %c0) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  call @stepc_matmul_f32(%a2, %b1, %vy, %c0, %c0, %c1) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  // overwrite
  call @stepc_matmul_f32(%a0, %b0, %vy, %c0, %c0, %c0) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  call @stepc_matmul_f32(%a1, %b1, %vy, %c0, %c0, %c0) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  // a call between
  call @stepc_matmul_f32(%a0, %b0, %vy, %c0, %c0, %c0) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  call @touch(%y) : (memref<6x5xf32>) -> ()
  call @stepc_matmul_f32(%a1, %b1, %vy, %c0, %c0, %c1) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  // half rows
  %h0 = memref.subview %x[0, 0] [6, 2] [1, 1] : memref<8x4xf32> to memref<6x2xf32, strided<[4, 1]>>
  %h1 = memref.subview %x[1, 0] [6, 2] [1, 1] : memref<8x4xf32> to memref<6x2xf32, strided<[4, 1], offset: 4>>
  %v0 = memref.subview %w2[0, 0, 0] [1, 2, 5] [1, 1, 1] : memref<3x2x5xf32> to memref<2x5xf32, strided<[5, 1]>>
  %v1 = memref.subview %w2[1, 0, 0] [1, 2, 5] [1, 1, 1] : memref<3x2x5xf32> to memref<2x5xf32, strided<[5, 1], offset: 10>>
  %e0 = memref.cast %h0 : memref<6x2xf32, strided<[4, 1]>> to memref<?x?xf32, #dyn>
  %e1 = memref.cast %h1 : memref<6x2xf32, strided<[4, 1], offset: 4>> to memref<?x?xf32, #dyn>
  %f0 = memref.cast %v0 : memref<2x5xf32, strided<[5, 1]>> to memref<?x?xf32, #dyn>
  %f1 = memref.cast %v1 : memref<2x5xf32, strided<[5, 1], offset: 10>> to memref<?x?xf32, #dyn>
  call @stepc_matmul_f32(%e0, %f0, %vy, %c0, %c0, %c0) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  call @stepc_matmul_f32(%e1, %f1, %vy, %c0, %c0, %c1) : (memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, memref<?x?xf32, #dyn>, i64, i64, i64) -> ()
  return
}
