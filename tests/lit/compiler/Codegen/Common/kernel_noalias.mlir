// Tests --step-kernel-noalias: a kernel's memref argument is marked when, at every call, it
// shares no bytes with another memref argument of the call. The marks are the positions of
// the arguments' aligned pointers in the lowered signature (a rank-r memref is 3 + 2r LLVM
// arguments, anything else one), for the CPU's object emitter.
//
// RUN: %stepc-opt %s --step-kernel-noalias | FileCheck %s
// RUN: %stepc-opt %s --step-kernel-noalias | %stepc-opt -o /dev/null

memref.global "private" @stepc_arena : memref<4096xi8> {alignment = 64 : i64}

// Two disjoint views of the arena and a host argument: all three (rank 2: 7 LLVM arguments
// each, aligned pointers at 1, 8 and 15).
// CHECK-LABEL: func.func private @disjoint
// CHECK-SAME: step.noalias_args = array<i64: 1, 8, 15>
func.func private @disjoint(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<4x8xf32>) attributes {step.kernel} {
  return
}

// The same buffer in and out (an in-place update): neither; the third argument is still
// its own. A scalar between them counts one position: %s at 7, %z's aligned pointer at 16.
// CHECK-LABEL: func.func private @in_place
// CHECK-SAME: step.noalias_args = array<i64: 16>
func.func private @in_place(%x: memref<4x8xf32>, %s: f32, %y: memref<4x8xf32>, %z: memref<2xf32>) attributes {step.kernel} {
  return
}

// Views whose bytes overlap (offsets 0 and 64, 128 bytes each): neither.
// CHECK-LABEL: func.func private @overlapping
// CHECK-NOT: step.noalias_args
// CHECK-SAME: {
func.func private @overlapping(%a: memref<32xf32>, %b: memref<32xf32>) attributes {step.kernel} {
  return
}

// A loop's slice at a dynamic offset may be anywhere in its root: not disjoint from another
// view of the arena, but from a host argument's (rank 1: 5 LLVM arguments each, the third
// one's aligned pointer at 11).
// CHECK-LABEL: func.func private @dynamic
// CHECK-SAME: step.noalias_args = array<i64: 11>
func.func private @dynamic(%a: memref<8xf32, strided<[1], offset: ?>>, %b: memref<8xf32>, %c: memref<8xf32>) attributes {step.kernel} {
  return
}

// Disjoint at one call, the same buffer twice at the other: the mark must hold at every call.
// CHECK-LABEL: func.func private @two_calls
// CHECK-NOT: step.noalias_args
// CHECK-SAME: {
func.func private @two_calls(%a: memref<8xf32>, %b: memref<8xf32>) attributes {step.kernel} {
  return
}

// Subviews with static offsets of one view: rows 0-1 and rows 2-3 of a [4, 8] view are
// disjoint; a strided column slice overlaps both.
// CHECK-LABEL: func.func private @rows
// CHECK-SAME: step.noalias_args = array<i64: 1, 8>
func.func private @rows(%a: memref<2x8xf32, strided<[8, 1]>>, %b: memref<2x8xf32, strided<[8, 1], offset: 16>>) attributes {step.kernel} {
  return
}
// CHECK-LABEL: func.func private @column
// CHECK-NOT: step.noalias_args
// CHECK-SAME: {
func.func private @column(%a: memref<2x8xf32, strided<[8, 1]>>, %b: memref<4x1xf32, strided<[8, 1], offset: 3>>) attributes {step.kernel} {
  return
}

func.func @host(%param: memref<4x8xf32>, %state: memref<4x8xf32>, %n: index) {
  %arena = memref.get_global @stepc_arena : memref<4096xi8>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c1024 = arith.constant 1024 : index
  %s = arith.constant 1.0 : f32
  %v0 = memref.view %arena[%c0][] : memref<4096xi8> to memref<4x8xf32>
  %v1 = memref.view %arena[%c128][] : memref<4096xi8> to memref<4x8xf32>
  call @disjoint(%v0, %v1, %param) : (memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>) -> ()
  %z = memref.view %arena[%c1024][] : memref<4096xi8> to memref<2xf32>
  call @in_place(%v0, %s, %v0, %z) : (memref<4x8xf32>, f32, memref<4x8xf32>, memref<2xf32>) -> ()
  %o0 = memref.view %arena[%c0][] : memref<4096xi8> to memref<32xf32>
  %o1 = memref.view %arena[%c64][] : memref<4096xi8> to memref<32xf32>
  call @overlapping(%o0, %o1) : (memref<32xf32>, memref<32xf32>) -> ()
  %long = memref.view %arena[%c1024][] : memref<4096xi8> to memref<64xf32>
  %h = memref.view %arena[%c0][] : memref<4096xi8> to memref<8xf32>
  %flat = memref.collapse_shape %state [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  %own = memref.subview %flat[0] [8] [1] : memref<32xf32> to memref<8xf32, strided<[1]>>
  %own2 = memref.cast %own : memref<8xf32, strided<[1]>> to memref<8xf32>
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %slice = memref.subview %long[%i] [8] [1] : memref<64xf32> to memref<8xf32, strided<[1], offset: ?>>
    func.call @dynamic(%slice, %h, %own2) : (memref<8xf32, strided<[1], offset: ?>>, memref<8xf32>, memref<8xf32>) -> ()
  }
  %t0 = memref.view %arena[%c0][] : memref<4096xi8> to memref<8xf32>
  %t1 = memref.view %arena[%c64][] : memref<4096xi8> to memref<8xf32>
  call @two_calls(%t0, %t1) : (memref<8xf32>, memref<8xf32>) -> ()
  call @two_calls(%t0, %t0) : (memref<8xf32>, memref<8xf32>) -> ()
  %r0 = memref.subview %v0[0, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1]>>
  %r1 = memref.subview %v0[2, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 16>>
  call @rows(%r0, %r1) : (memref<2x8xf32, strided<[8, 1]>>, memref<2x8xf32, strided<[8, 1], offset: 16>>) -> ()
  %col = memref.subview %v0[0, 3] [4, 1] [1, 1] : memref<4x8xf32> to memref<4x1xf32, strided<[8, 1], offset: 3>>
  call @column(%r0, %col) : (memref<2x8xf32, strided<[8, 1]>>, memref<4x1xf32, strided<[8, 1], offset: 3>>) -> ()
  return
}
