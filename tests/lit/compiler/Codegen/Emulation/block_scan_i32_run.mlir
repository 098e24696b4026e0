// The block scan (BlockScan.h) of an i32 cumsum over the last axis, as token choice's routing
// counts each expert's earlier choices on a GPU (ParallelRoutingPatterns.cpp: E columns of k·T
// steps, read with a stride): --step-kernels-to-gpu maps it to one block of 32 warps (segments)
// by 32 lanes (columns), where one thread per column used to run all the steps, and
// --step-emulate-gpu runs that block in lock-step. x is 3 x 100: 3 columns (the block's other
// 29 lanes inactive) and 100 steps (25 segments of 4, 7 empty). The running sums start from
// non-zero values, carried in and out. Integer sums are exact, so the comparison with the
// sequential reference is for equality; without the barriers the numbers differ (NOBARRIER).
//
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu --step-emulate-gpu | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu | sed '/gpu.barrier/d' | %stepc-opt --step-emulate-gpu | %linalg-to-llvm | %run-cpu | FileCheck %s --check-prefix=NOBARRIER

// GPU: gpu.launch_func @stepc_kernels::@kernel_0_scan blocks in (%{{.+}}, %{{.+}}, %{{.+}}) threads in (%{{.+}}, %{{.+}}, %{{.+}})
// GPU: workgroup(%{{.+}} : memref<32x33xi32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 1024, 1, 1>}
// GPU: gpu.shuffle up {{.*}} : i32
// GPU: arith.addi

// CHECK: mismatches
// CHECK-NEXT: 0
// NOBARRIER: mismatches
// NOBARRIER-NEXT: {{[1-9][0-9]*}}

#id2 = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @stepc_profile_enter(%id: i64) { return }
  func.func @stepc_profile_exit(%id: i64) { return }
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func private @printString(!llvm.ptr)
  llvm.mlir.global internal constant @msg("mismatches\0A\00")

  func.func @scan(%x: memref<3x100xi32>, %sum: memref<3x1xi32>, %y: memref<3x100xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c100 = arith.constant 100 : index
    scf.for %s = %c0 to %c100 step %c1 {
      %xs = memref.subview %x[0, %s] [3, 1] [1, 1] : memref<3x100xi32> to memref<3x1xi32, strided<[100, 1], offset: ?>>
      linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
          ins(%xs : memref<3x1xi32, strided<[100, 1], offset: ?>>) outs(%sum : memref<3x1xi32>) {
      ^bb0(%in: i32, %out: i32):
        %a = arith.addi %out, %in : i32
        linalg.yield %a : i32
      }
      %ys = memref.subview %y[0, %s] [3, 1] [1, 1] : memref<3x100xi32> to memref<3x1xi32, strided<[100, 1], offset: ?>>
      linalg.copy ins(%sum : memref<3x1xi32>) outs(%ys : memref<3x1xi32, strided<[100, 1], offset: ?>>)
    } {step.scan}
    return
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %c11 = arith.constant 11 : index
    %c100 = arith.constant 100 : index
    %five = arith.constant 5 : i32
    %ten = arith.constant 10 : i32
    %z = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %x = memref.alloc() : memref<3x100xi32>
    %y = memref.alloc() : memref<3x100xi32>
    %sum = memref.alloc() : memref<3x1xi32>
    %want = memref.alloc() : memref<3x100xi32>
    // x[e, s] = ((7e + 3s) mod 11) - 5; the sums start at 10e + 1.
    scf.for %e = %c0 to %c3 step %c1 {
      %ei = arith.index_cast %e : index to i32
      %e10 = arith.muli %ei, %ten : i32
      %c1_i32 = arith.constant 1 : i32
      %init = arith.addi %e10, %c1_i32 : i32
      memref.store %init, %sum[%e, %c0] : memref<3x1xi32>
      %unused = scf.for %s = %c0 to %c100 step %c1 iter_args(%acc = %init) -> i32 {
        %e7 = arith.muli %e, %c7 : index
        %s3 = arith.muli %s, %c3 : index
        %t0 = arith.addi %e7, %s3 : index
        %t1 = arith.remui %t0, %c11 : index
        %ti = arith.index_cast %t1 : index to i32
        %v = arith.subi %ti, %five : i32
        memref.store %v, %x[%e, %s] : memref<3x100xi32>
        %a = arith.addi %acc, %v : i32
        memref.store %a, %want[%e, %s] : memref<3x100xi32>
        scf.yield %a : i32
      }
    }
    call @scan(%x, %sum, %y) : (memref<3x100xi32>, memref<3x1xi32>, memref<3x100xi32>) -> ()
    // Mismatches: every y[e, s] against the reference, and each column's final sum.
    %n = scf.for %e = %c0 to %c3 step %c1 iter_args(%n0 = %z) -> i64 {
      %n1 = scf.for %s = %c0 to %c100 step %c1 iter_args(%n2 = %n0) -> i64 {
        %g = memref.load %y[%e, %s] : memref<3x100xi32>
        %w = memref.load %want[%e, %s] : memref<3x100xi32>
        %ne = arith.cmpi ne, %g, %w : i32
        %inc = arith.select %ne, %one, %z : i64
        %n3 = arith.addi %n2, %inc : i64
        scf.yield %n3 : i64
      }
      %gs = memref.load %sum[%e, %c0] : memref<3x1xi32>
      %c99 = arith.constant 99 : index
      %ws = memref.load %want[%e, %c99] : memref<3x100xi32>
      %nes = arith.cmpi ne, %gs, %ws : i32
      %incs = arith.select %nes, %one, %z : i64
      %n4 = arith.addi %n1, %incs : i64
      scf.yield %n4 : i64
    }
    %p = llvm.mlir.addressof @msg : !llvm.ptr
    call @printString(%p) : (!llvm.ptr) -> ()
    call @printI64(%n) : (i64) -> ()
    call @printNewline() : () -> ()
    return
  }
}
