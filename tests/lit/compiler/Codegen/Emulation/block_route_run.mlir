// Token choice's routing on a GPU (BlockRoute.h): the loop nest ParallelRoutingPatterns.cpp
// lowers route_tokens to (as bufferized, the outer loop over the experts marked
// step.block_route) becomes one kernel of E blocks, each a block scan of its expert's choices,
// and --step-emulate-gpu runs it in lock-step. T = 1500 tokens, k = 2 (3000 choices: segments
// of 3 per thread), E = 5 experts of capacity C = 500: expert 0 overflows (its late choices are
// dropped), expert 4 is never named (an empty row of choices), and some choices name no expert
// (-1 and 5). The outputs start as garbage (every element must be written) and are compared
// for equality with the CPU's sequential definition (one load counter per expert, ranks outer):
// no mismatch; without the barrier the warps' totals are read before they are written
// (NOBARRIER).
//
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu --step-emulate-gpu | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu | sed '/gpu.barrier/d' | %stepc-opt --step-emulate-gpu | %linalg-to-llvm | %run-cpu | FileCheck %s --check-prefix=NOBARRIER

// GPU: gpu.launch_func @stepc_kernels::@kernel_0_scan blocks in (%[[E:.+]], %{{.+}}, %{{.+}}) threads in (%[[T:.+]], %{{.+}}, %{{.+}})
// GPU: gpu.func @kernel_0_scan
// GPU-SAME: workgroup(%{{.+}} : memref<1x32xi32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 1024, 1, 1>}
// GPU: gpu.block_id x
// GPU: gpu.shuffle up
// GPU: gpu.barrier
// GPU: gpu.shuffle idx
// GPU-NOT: step.block_route

// CHECK: dropped
// CHECK-NEXT: {{[1-9][0-9]+}}
// CHECK-NEXT: empty
// CHECK-NEXT: 500
// CHECK-NEXT: mismatches
// CHECK-NEXT: 0
// NOBARRIER: mismatches
// NOBARRIER-NEXT: {{[1-9][0-9]*}}

module {
  func.func @stepc_profile_enter(%id: i64) { return }
  func.func @stepc_profile_exit(%id: i64) { return }
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func private @printString(!llvm.ptr)
  llvm.mlir.global internal constant @dropped("dropped\0A\00")
  llvm.mlir.global internal constant @empty("empty\0A\00")
  llvm.mlir.global internal constant @mismatches("mismatches\0A\00")

  // As --emit=buffers shows it for --target=cuda (ParallelRoutingPatterns.cpp).
  func.func @route(%arg0: memref<1500x2xi32>, %arg1: memref<1500x2xi32>, %arg2: memref<5x500xi32>) {
    %c0_i32 = arith.constant 0 : i32
    %c1500 = arith.constant 1500 : index
    %c5_i32 = arith.constant 5 : i32
    %c500_i32 = arith.constant 500 : i32
    %c-1_i32 = arith.constant -1 : i32
    %c499_i32 = arith.constant 499 : i32
    %c2_i32 = arith.constant 2 : i32
    %c0 = arith.constant 0 : index
    %c3000 = arith.constant 3000 : index
    %c1 = arith.constant 1 : index
    %c500 = arith.constant 500 : index
    %c5 = arith.constant 5 : index
    scf.for %arg3 = %c0 to %c5 step %c1 {
      %0 = arith.index_cast %arg3 : index to i32
      %1 = arith.cmpi eq, %0, %c0_i32 : i32
      %2 = scf.for %arg4 = %c0 to %c3000 step %c1 iter_args(%arg5 = %c0_i32) -> (i32) {
        %3 = arith.remui %arg4, %c1500 : index
        %4 = arith.divui %arg4, %c1500 : index
        %5 = memref.load %arg0[%3, %4] : memref<1500x2xi32>
        %6 = arith.cmpi eq, %5, %0 : i32
        %7 = arith.cmpi sge, %5, %c5_i32 : i32
        %8 = arith.cmpi slt, %5, %c0_i32 : i32
        %9 = arith.ori %8, %7 : i1
        %10 = arith.cmpi slt, %arg5, %c500_i32 : i32
        %11 = arith.muli %0, %c500_i32 : i32
        %12 = arith.addi %11, %arg5 : i32
        %13 = arith.andi %6, %10 : i1
        %14 = arith.select %13, %12, %c-1_i32 : i32
        %15 = arith.andi %9, %1 : i1
        %16 = arith.ori %6, %15 : i1
        %17 = memref.load %arg1[%3, %4] : memref<1500x2xi32>
        %18 = arith.select %16, %14, %17 : i32
        memref.store %18, %arg1[%3, %4] : memref<1500x2xi32>
        %19 = arith.minsi %arg5, %c499_i32 : i32
        %20 = arith.index_cast %19 : i32 to index
        %21 = arith.index_cast %4 : index to i32
        %22 = arith.index_cast %3 : index to i32
        %23 = arith.muli %22, %c2_i32 : i32
        %24 = arith.addi %23, %21 : i32
        %25 = memref.load %arg2[%arg3, %20] : memref<5x500xi32>
        %26 = arith.select %13, %24, %25 : i32
        memref.store %26, %arg2[%arg3, %20] : memref<5x500xi32>
        %27 = arith.extui %6 : i1 to i32
        %28 = arith.addi %arg5, %27 : i32
        scf.yield %28 : i32
      } {step.scan}
      scf.for %arg4 = %c0 to %c500 step %c1 {
        %3 = arith.index_cast %arg4 : index to i32
        %4 = arith.cmpi sge, %3, %2 : i32
        %5 = memref.load %arg2[%arg3, %arg4] : memref<5x500xi32>
        %6 = arith.select %4, %c-1_i32, %5 : i32
        memref.store %6, %arg2[%arg3, %arg4] : memref<5x500xi32>
      } {step.scan}
    } {step.block_route, step.scan}
    return
  }

  // The CPU's definition (RoutingPatterns.cpp): the choices in priority order, ranks outer,
  // one load counter per expert.
  func.func @reference(%experts: memref<1500x2xi32>, %slots: memref<1500x2xi32>, %choices: memref<5x500xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c5 = arith.constant 5 : index
    %c500 = arith.constant 500 : index
    %c1500 = arith.constant 1500 : index
    %zero = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %two = arith.constant 2 : i32
    %none = arith.constant -1 : i32
    %cap = arith.constant 500 : i32
    %ne = arith.constant 5 : i32
    %load = memref.alloc() : memref<5xi32>
    scf.for %e = %c0 to %c5 step %c1 {
      memref.store %zero, %load[%e] : memref<5xi32>
      scf.for %c = %c0 to %c500 step %c1 {
        memref.store %none, %choices[%e, %c] : memref<5x500xi32>
      }
    }
    scf.for %j = %c0 to %c2 step %c1 {
      scf.for %t = %c0 to %c1500 step %c1 {
        %e = memref.load %experts[%t, %j] : memref<1500x2xi32>
        %ge = arith.cmpi sge, %e, %zero : i32
        %lt = arith.cmpi slt, %e, %ne : i32
        %valid = arith.andi %ge, %lt : i1
        memref.store %none, %slots[%t, %j] : memref<1500x2xi32>
        scf.if %valid {
          %ei = arith.index_cast %e : i32 to index
          %c = memref.load %load[%ei] : memref<5xi32>
          %fits = arith.cmpi slt, %c, %cap : i32
          scf.if %fits {
            %ci = arith.index_cast %c : i32 to index
            %ti = arith.index_cast %t : index to i32
            %ji = arith.index_cast %j : index to i32
            %t2 = arith.muli %ti, %two : i32
            %choice = arith.addi %t2, %ji : i32
            memref.store %choice, %choices[%ei, %ci] : memref<5x500xi32>
            %base = arith.muli %e, %cap : i32
            %slot = arith.addi %base, %c : i32
            memref.store %slot, %slots[%t, %j] : memref<1500x2xi32>
            %c2n = arith.addi %c, %one : i32
            memref.store %c2n, %load[%ei] : memref<5xi32>
          }
        }
      }
    }
    return
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c500 = arith.constant 500 : index
    %c1500 = arith.constant 1500 : index
    %z = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %garbage = arith.constant 12345 : i32
    %four = arith.constant 4 : i32
    %zero = arith.constant 0 : i32
    %none = arith.constant -1 : i32
    %experts = memref.alloc() : memref<1500x2xi32>
    %slots = memref.alloc() : memref<1500x2xi32>
    %choices = memref.alloc() : memref<5x500xi32>
    %wantSlots = memref.alloc() : memref<1500x2xi32>
    %wantChoices = memref.alloc() : memref<5x500xi32>
    // experts[t, j] = ((7t + 3j + t² mod 11) mod 7) - 1, with 4 named as 0: -1 .. 5, expert 0
    // twice as often as the others, expert 4 never.
    scf.for %t = %c0 to %c1500 step %c1 {
      scf.for %j = %c0 to %c2 step %c1 {
        %c7 = arith.constant 7 : index
        %c3 = arith.constant 3 : index
        %c11 = arith.constant 11 : index
        %t7 = arith.muli %t, %c7 : index
        %j3 = arith.muli %j, %c3 : index
        %tt = arith.muli %t, %t : index
        %tt11 = arith.remui %tt, %c11 : index
        %s0 = arith.addi %t7, %j3 : index
        %s1 = arith.addi %s0, %tt11 : index
        %s2 = arith.remui %s1, %c7 : index
        %si = arith.index_cast %s2 : index to i32
        %c1_i32 = arith.constant 1 : i32
        %v0 = arith.subi %si, %c1_i32 : i32
        %is4 = arith.cmpi eq, %v0, %four : i32
        %v = arith.select %is4, %zero, %v0 : i32
        memref.store %v, %experts[%t, %j] : memref<1500x2xi32>
        memref.store %garbage, %slots[%t, %j] : memref<1500x2xi32>
      }
    }
    scf.for %e = %c0 to %c5 step %c1 {
      scf.for %c = %c0 to %c500 step %c1 {
        memref.store %garbage, %choices[%e, %c] : memref<5x500xi32>
      }
    }
    call @route(%experts, %slots, %choices) : (memref<1500x2xi32>, memref<1500x2xi32>, memref<5x500xi32>) -> ()
    call @reference(%experts, %wantSlots, %wantChoices) : (memref<1500x2xi32>, memref<1500x2xi32>, memref<5x500xi32>) -> ()
    // Dropped: choices of an expert that got no slot (expert 0's overflow, and none).
    %dropped = scf.for %t = %c0 to %c1500 step %c1 iter_args(%n0 = %z) -> i64 {
      %n1 = scf.for %j = %c0 to %c2 step %c1 iter_args(%n2 = %n0) -> i64 {
        %s = memref.load %slots[%t, %j] : memref<1500x2xi32>
        %d = arith.cmpi eq, %s, %none : i32
        %inc = arith.select %d, %one, %z : i64
        %n3 = arith.addi %n2, %inc : i64
        scf.yield %n3 : i64
      }
      scf.yield %n1 : i64
    }
    %empty = scf.for %c = %c0 to %c500 step %c1 iter_args(%n0 = %z) -> i64 {
      %v = memref.load %choices[%c4, %c] : memref<5x500xi32>
      %d = arith.cmpi eq, %v, %none : i32
      %inc = arith.select %d, %one, %z : i64
      %n1 = arith.addi %n0, %inc : i64
      scf.yield %n1 : i64
    }
    %m0 = scf.for %t = %c0 to %c1500 step %c1 iter_args(%n0 = %z) -> i64 {
      %n1 = scf.for %j = %c0 to %c2 step %c1 iter_args(%n2 = %n0) -> i64 {
        %g = memref.load %slots[%t, %j] : memref<1500x2xi32>
        %w = memref.load %wantSlots[%t, %j] : memref<1500x2xi32>
        %ne = arith.cmpi ne, %g, %w : i32
        %inc = arith.select %ne, %one, %z : i64
        %n3 = arith.addi %n2, %inc : i64
        scf.yield %n3 : i64
      }
      scf.yield %n1 : i64
    }
    %m = scf.for %e = %c0 to %c5 step %c1 iter_args(%n0 = %m0) -> i64 {
      %n1 = scf.for %c = %c0 to %c500 step %c1 iter_args(%n2 = %n0) -> i64 {
        %g = memref.load %choices[%e, %c] : memref<5x500xi32>
        %w = memref.load %wantChoices[%e, %c] : memref<5x500xi32>
        %ne = arith.cmpi ne, %g, %w : i32
        %inc = arith.select %ne, %one, %z : i64
        %n3 = arith.addi %n2, %inc : i64
        scf.yield %n3 : i64
      }
      scf.yield %n1 : i64
    }
    %p0 = llvm.mlir.addressof @dropped : !llvm.ptr
    call @printString(%p0) : (!llvm.ptr) -> ()
    call @printI64(%dropped) : (i64) -> ()
    call @printNewline() : () -> ()
    %p1 = llvm.mlir.addressof @empty : !llvm.ptr
    call @printString(%p1) : (!llvm.ptr) -> ()
    call @printI64(%empty) : (i64) -> ()
    call @printNewline() : () -> ()
    %p2 = llvm.mlir.addressof @mismatches : !llvm.ptr
    call @printString(%p2) : (!llvm.ptr) -> ()
    call @printI64(%m) : (i64) -> ()
    call @printNewline() : () -> ()
    return
  }
}
