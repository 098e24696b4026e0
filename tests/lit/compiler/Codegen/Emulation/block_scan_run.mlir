// Runs the block scan (BlockScan.h) of --step-kernels-to-gpu under --step-emulate-gpu, whose
// lock-step phases carry the threads' exchanges (the segment totals in the workgroup buffer,
// the shuffles between lanes), and compares it with a sequential reference computed here.
// Shapes at the edges: x is 2 x 45 x 20, so 40 columns (two blocks, the second with 8 active
// lanes) and 45 steps (23 segments of 2, the last of 1, and 9 empty). The running sums start
// from non-zero values, which the kernel must carry in (lane 0 of each warp) and out (the last
// segment). Values are small integers and quarters, so every order of the sums is exact and
// the comparison is for equality. A scan whose barriers are dropped gets other numbers (the
// NOBARRIER run).
//
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu --step-emulate-gpu | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu | sed '/gpu.barrier/d' | %stepc-opt --step-emulate-gpu | %linalg-to-llvm | %run-cpu | FileCheck %s --check-prefix=NOBARRIER

// GPU-COUNT-2: gpu.launch_func @stepc_kernels::@kernel_{{[01]}}_scan blocks in (%{{.+}}, %{{.+}}, %{{.+}}) threads in (%{{.+}}, %{{.+}}, %{{.+}})
// GPU-COUNT-2: workgroup(%{{.+}} : memref<32x33xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 1024, 1, 1>}

// CHECK: forward mismatches
// CHECK-NEXT: 0
// CHECK-NEXT: reverse mismatches
// CHECK-NEXT: 0
// NOBARRIER: forward mismatches
// NOBARRIER-NEXT: {{[1-9][0-9]*}}

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @stepc_profile_enter(%id: i64) { return }
  func.func @stepc_profile_exit(%id: i64) { return }
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func private @printString(!llvm.ptr)
  llvm.mlir.global internal constant @fwd("forward mismatches\0A\00")
  llvm.mlir.global internal constant @rev("reverse mismatches\0A\00")

  func.func @scan(%x: memref<2x45x20xf32>, %sum: memref<2x1x20xf32>, %y: memref<2x45x20xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c45 = arith.constant 45 : index
    scf.for %s = %c0 to %c45 step %c1 {
      %xs = memref.subview %x[0, %s, 0] [2, 1, 20] [1, 1, 1] : memref<2x45x20xf32> to memref<2x1x20xf32, strided<[900, 20, 1], offset: ?>>
      linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%xs : memref<2x1x20xf32, strided<[900, 20, 1], offset: ?>>) outs(%sum : memref<2x1x20xf32>) {
      ^bb0(%in: f32, %out: f32):
        %a = arith.addf %out, %in : f32
        linalg.yield %a : f32
      }
      %ys = memref.subview %y[0, %s, 0] [2, 1, 20] [1, 1, 1] : memref<2x45x20xf32> to memref<2x1x20xf32, strided<[900, 20, 1], offset: ?>>
      linalg.copy ins(%sum : memref<2x1x20xf32>) outs(%ys : memref<2x1x20xf32, strided<[900, 20, 1], offset: ?>>)
    } {step.scan}
    return
  }

  func.func @scan_reverse(%x: memref<2x45x20xf32>, %sum: memref<2x1x20xf32>, %y: memref<2x45x20xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c44 = arith.constant 44 : index
    %c45 = arith.constant 45 : index
    scf.for %s = %c0 to %c45 step %c1 {
      %at = arith.subi %c44, %s : index
      %xs = memref.subview %x[0, %at, 0] [2, 1, 20] [1, 1, 1] : memref<2x45x20xf32> to memref<2x1x20xf32, strided<[900, 20, 1], offset: ?>>
      linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%xs : memref<2x1x20xf32, strided<[900, 20, 1], offset: ?>>) outs(%sum : memref<2x1x20xf32>) {
      ^bb0(%in: f32, %out: f32):
        %a = arith.addf %in, %out : f32
        linalg.yield %a : f32
      }
      %ys = memref.subview %y[0, %at, 0] [2, 1, 20] [1, 1, 1] : memref<2x45x20xf32> to memref<2x1x20xf32, strided<[900, 20, 1], offset: ?>>
      linalg.copy ins(%sum : memref<2x1x20xf32>) outs(%ys : memref<2x1x20xf32, strided<[900, 20, 1], offset: ?>>)
    } {step.scan}
    return
  }

  // Counts the elements where `got` differs from `want`.
  func.func @mismatches(%got: memref<2x45x20xf32>, %want: memref<2x45x20xf32>, %gs: memref<2x1x20xf32>, %ws: memref<2x1x20xf32>) -> i64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c20 = arith.constant 20 : index
    %c45 = arith.constant 45 : index
    %z = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %n = scf.for %b = %c0 to %c2 step %c1 iter_args(%n0 = %z) -> i64 {
      %n1 = scf.for %c = %c0 to %c20 step %c1 iter_args(%n2 = %n0) -> i64 {
        %g = memref.load %gs[%b, %c0, %c] : memref<2x1x20xf32>
        %w = memref.load %ws[%b, %c0, %c] : memref<2x1x20xf32>
        %ne = arith.cmpf une, %g, %w : f32
        %inc = arith.select %ne, %one, %z : i64
        %n3 = arith.addi %n2, %inc : i64
        %n4 = scf.for %s = %c0 to %c45 step %c1 iter_args(%n5 = %n3) -> i64 {
          %gy = memref.load %got[%b, %s, %c] : memref<2x45x20xf32>
          %wy = memref.load %want[%b, %s, %c] : memref<2x45x20xf32>
          %ney = arith.cmpf une, %gy, %wy : f32
          %incy = arith.select %ney, %one, %z : i64
          %n6 = arith.addi %n5, %incy : i64
          scf.yield %n6 : i64
        }
        scf.yield %n4 : i64
      }
      scf.yield %n1 : i64
    }
    return %n : i64
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c20 = arith.constant 20 : index
    %c44 = arith.constant 44 : index
    %c45 = arith.constant 45 : index
    %x = memref.alloc() : memref<2x45x20xf32>
    %y = memref.alloc() : memref<2x45x20xf32>
    %yr = memref.alloc() : memref<2x45x20xf32>
    %want = memref.alloc() : memref<2x45x20xf32>
    %wantr = memref.alloc() : memref<2x45x20xf32>
    %sum = memref.alloc() : memref<2x1x20xf32>
    %sumr = memref.alloc() : memref<2x1x20xf32>
    %wsum = memref.alloc() : memref<2x1x20xf32>
    %wsumr = memref.alloc() : memref<2x1x20xf32>
    %c7 = arith.constant 7 : index
    %c3 = arith.constant 3 : index
    %c11 = arith.constant 11 : index
    %five = arith.constant 5.0 : f32
    %quarter = arith.constant 0.25 : f32
    // x[b, s, c] = ((7b + 3s + c) mod 11) - 5; the sums start at (20b + c) / 4.
    scf.for %b = %c0 to %c2 step %c1 {
      scf.for %c = %c0 to %c20 step %c1 {
        %bc = arith.muli %b, %c20 : index
        %k = arith.addi %bc, %c : index
        %ki = arith.index_cast %k : index to i32
        %kf = arith.sitofp %ki : i32 to f32
        %init = arith.mulf %kf, %quarter : f32
        memref.store %init, %sum[%b, %c0, %c] : memref<2x1x20xf32>
        memref.store %init, %sumr[%b, %c0, %c] : memref<2x1x20xf32>
        scf.for %s = %c0 to %c45 step %c1 {
          %b7 = arith.muli %b, %c7 : index
          %s3 = arith.muli %s, %c3 : index
          %t0 = arith.addi %b7, %s3 : index
          %t1 = arith.addi %t0, %c : index
          %t2 = arith.remui %t1, %c11 : index
          %ti = arith.index_cast %t2 : index to i32
          %tf = arith.sitofp %ti : i32 to f32
          %v = arith.subf %tf, %five : f32
          memref.store %v, %x[%b, %s, %c] : memref<2x45x20xf32>
        }
        // The reference: a running sum forwards and one from the end.
        %f = scf.for %s = %c0 to %c45 step %c1 iter_args(%acc = %init) -> f32 {
          %v = memref.load %x[%b, %s, %c] : memref<2x45x20xf32>
          %a = arith.addf %acc, %v : f32
          memref.store %a, %want[%b, %s, %c] : memref<2x45x20xf32>
          scf.yield %a : f32
        }
        memref.store %f, %wsum[%b, %c0, %c] : memref<2x1x20xf32>
        %r = scf.for %s = %c0 to %c45 step %c1 iter_args(%acc = %init) -> f32 {
          %at = arith.subi %c44, %s : index
          %v = memref.load %x[%b, %at, %c] : memref<2x45x20xf32>
          %a = arith.addf %acc, %v : f32
          memref.store %a, %wantr[%b, %at, %c] : memref<2x45x20xf32>
          scf.yield %a : f32
        }
        memref.store %r, %wsumr[%b, %c0, %c] : memref<2x1x20xf32>
      }
    }
    call @scan(%x, %sum, %y) : (memref<2x45x20xf32>, memref<2x1x20xf32>, memref<2x45x20xf32>) -> ()
    call @scan_reverse(%x, %sumr, %yr) : (memref<2x45x20xf32>, memref<2x1x20xf32>, memref<2x45x20xf32>) -> ()
    %nf = call @mismatches(%y, %want, %sum, %wsum) : (memref<2x45x20xf32>, memref<2x45x20xf32>, memref<2x1x20xf32>, memref<2x1x20xf32>) -> i64
    %nr = call @mismatches(%yr, %wantr, %sumr, %wsumr) : (memref<2x45x20xf32>, memref<2x45x20xf32>, memref<2x1x20xf32>, memref<2x1x20xf32>) -> i64
    %pf = llvm.mlir.addressof @fwd : !llvm.ptr
    call @printString(%pf) : (!llvm.ptr) -> ()
    call @printI64(%nf) : (i64) -> ()
    call @printNewline() : () -> ()
    %pr = llvm.mlir.addressof @rev : !llvm.ptr
    call @printString(%pr) : (!llvm.ptr) -> ()
    call @printI64(%nr) : (i64) -> ()
    call @printNewline() : () -> ()
    return
  }
}
