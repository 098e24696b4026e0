// Tests --step-strided-copies-to-linalg: a memref.copy with a strided side (which would lower
// to a call into MLIR's C runner library) becomes linalg.copy between the same buffers; copies
// between contiguous buffers, including a contiguous subview with a non-identity layout, stay
// memref.copy (they lower to a memcpy).
//
// RUN: %stepc-opt %s -split-input-file --step-strided-copies-to-linalg | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-strided-copies-to-linalg | %stepc-opt -split-input-file -o /dev/null

// Tests both directions of a strided copy: a column slice into a buffer, and a buffer into a
// column slice.
// CHECK-LABEL: func.func @strided
// CHECK-SAME: (%[[BIG:.+]]: memref<4x8xf32>, %[[SMALL:.+]]: memref<4x2xf32>)
// CHECK: %[[SV:.+]] = memref.subview %[[BIG]][0, 3] [4, 2] [1, 1] : memref<4x8xf32> to memref<4x2xf32, strided<[8, 1], offset: 3>>
// CHECK-NEXT: linalg.copy ins(%[[SV]] : memref<4x2xf32, strided<[8, 1], offset: 3>>) outs(%[[SMALL]] : memref<4x2xf32>)
// CHECK-NEXT: linalg.copy ins(%[[SMALL]] : memref<4x2xf32>) outs(%[[SV]] : memref<4x2xf32, strided<[8, 1], offset: 3>>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func @strided(%big: memref<4x8xf32>, %small: memref<4x2xf32>) {
  %sv = memref.subview %big[0, 3] [4, 2] [1, 1] : memref<4x8xf32> to memref<4x2xf32, strided<[8, 1], offset: 3>>
  memref.copy %sv, %small : memref<4x2xf32, strided<[8, 1], offset: 3>> to memref<4x2xf32>
  memref.copy %small, %sv : memref<4x2xf32> to memref<4x2xf32, strided<[8, 1], offset: 3>>
  return
}

// -----

// Tests that contiguous copies are kept: identity layouts on both sides, and a row slice
// (a subview whose layout is not the identity but which is contiguous row-major).
// CHECK-LABEL: func.func @contiguous
// CHECK-SAME: (%[[A:.+]]: memref<4x8xf32>, %[[B:.+]]: memref<4x8xf32>, %[[R:.+]]: memref<2x8xf32>)
// CHECK-NOT: linalg.copy
// CHECK: memref.copy %[[A]], %[[B]] : memref<4x8xf32> to memref<4x8xf32>
// CHECK: %[[ROWS:.+]] = memref.subview %[[A]][1, 0] [2, 8] [1, 1]
// CHECK-NEXT: memref.copy %[[ROWS]], %[[R]] : memref<2x8xf32, strided<[8, 1], offset: 8>> to memref<2x8xf32>
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @contiguous(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %r: memref<2x8xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  %rows = memref.subview %a[1, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 8>>
  memref.copy %rows, %r : memref<2x8xf32, strided<[8, 1], offset: 8>> to memref<2x8xf32>
  return
}

// -----

// Tests a copy nested in a loop (the scan case: one slice of a stacked buffer per iteration,
// dynamic offset) is found and rewritten too.
// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for
// CHECK: %[[SLICE:.+]] = memref.subview
// CHECK-NEXT: linalg.copy ins(%{{.+}} : memref<8xf32>) outs(%[[SLICE]] : memref<8xf32, strided<[3], offset: ?>>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func @in_loop(%stack: memref<8x3xf32>, %col: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %slice = memref.subview %stack[0, %i] [8, 1] [1, 1] : memref<8x3xf32> to memref<8xf32, strided<[3], offset: ?>>
    memref.copy %col, %slice : memref<8xf32> to memref<8xf32, strided<[3], offset: ?>>
  }
  return
}

// -----

// With parallel-bytes (the CPU pipeline's 1 MiB), a contiguous copy at least that large becomes
// linalg.copy too (a kernel the threads share); a smaller one stays a memcpy.
// RUN: %stepc-opt %s -split-input-file --step-strided-copies-to-linalg="parallel-bytes=1024" | FileCheck %s --check-prefix=LARGE
// LARGE-LABEL: func.func @large_contiguous
// LARGE-SAME: (%[[X:.+]]: memref<16x16xf32>, %[[Y:.+]]: memref<16x16xf32>, %[[S:.+]]: memref<4x4xf32>, %[[T:.+]]: memref<4x4xf32>)
// LARGE: linalg.copy ins(%[[X]] : memref<16x16xf32>) outs(%[[Y]] : memref<16x16xf32>)
// LARGE: memref.copy %[[S]], %[[T]]
// Without the option, both stay memref.copy.
// CHECK-LABEL: func.func @large_contiguous
// CHECK-NOT: linalg.copy
// CHECK-COUNT-2: memref.copy
func.func @large_contiguous(%x: memref<16x16xf32>, %y: memref<16x16xf32>, %s: memref<4x4xf32>, %t: memref<4x4xf32>) {
  memref.copy %x, %y : memref<16x16xf32> to memref<16x16xf32>
  memref.copy %s, %t : memref<4x4xf32> to memref<4x4xf32>
  return
}
