// Runs the block reductions as the GPU runs them: --step-kernels-to-gpu, then their lowering to
// warp shuffles, a workgroup buffer and barriers (--step-lower-gpu-reductions), under
// --step-emulate-gpu's lock-step phases (each barrier, and each shuffle's exchange, a point all
// threads of the block reach before any goes on), compared with sequential references:
//   - a row max over 4 x 8 rows of 100 (blocks of 128 threads: a partial last warp's lanes
//     bring the identity, -inf);
//   - row sums over 37 rows of 300 (the rows spread over the grid's blocks);
//   - a whole tensor's sum of squares, 300 x 70, in one block;
//   - a sum over 70000 elements, split over the grid, then the finish kernel, twice (the
//     second run needs the partials the first put back to the identity).
// The outputs start from non-identity values, which the reductions fold in. Values are small
// integers, so every order of the sums is exact. Without the barriers (NOBARRIER), warps read
// the shared totals before they are written: other numbers.
//
// RUN: %stepc-opt %s --step-kernels-to-gpu --step-lower-gpu-reductions --step-emulate-gpu | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-kernels-to-gpu --step-lower-gpu-reductions | sed '/gpu.barrier/d' | %stepc-opt --step-emulate-gpu | %linalg-to-llvm | %run-cpu | FileCheck %s --check-prefix=NOBARRIER

// CHECK: mismatches
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// NOBARRIER: mismatches
// NOBARRIER-NEXT: {{^[1-9][0-9]*$}}
// NOBARRIER-NEXT: {{^[1-9][0-9]*$}}

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#all2 = affine_map<(d0, d1) -> ()>
#id1 = affine_map<(d0) -> (d0)>
#all1 = affine_map<(d0) -> ()>
module {
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func private @printString(!llvm.ptr)
  llvm.mlir.global internal constant @title("mismatches\0A\00")

  func.func private @kernel_0_generic(%x: memref<4x8x100xf32>, %y: memref<4x8xf32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [#id3, #rows3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : memref<4x8x100xf32>) outs(%y : memref<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %o : f32
      linalg.yield %m : f32
    }
    return
  }
  func.func private @kernel_1_generic(%x: memref<37x300xf32>, %y: memref<37xf32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<37x300xf32>) outs(%y : memref<37xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    }
    return
  }
  func.func private @kernel_2_generic(%x: memref<300x70xf32>, %y: memref<f32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [#id2, #all2], iterator_types = ["reduction", "reduction"]}
        ins(%x : memref<300x70xf32>) outs(%y : memref<f32>) {
    ^bb0(%a: f32, %o: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %sq, %o : f32
      linalg.yield %s : f32
    }
    return
  }
  func.func private @kernel_3_generic(%x: memref<70000xf32>, %y: memref<f32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
        ins(%x : memref<70000xf32>) outs(%y : memref<f32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    }
    return
  }

  // v(i) = ((7 i) mod 13) - 6.
  func.func @value(%i: index) -> f32 {
    %c7 = arith.constant 7 : index
    %c13 = arith.constant 13 : index
    %six = arith.constant 6.0 : f32
    %m = arith.muli %i, %c7 : index
    %r = arith.remui %m, %c13 : index
    %ri = arith.index_cast %r : index to i32
    %rf = arith.sitofp %ri : i32 to f32
    %v = arith.subf %rf, %six : f32
    return %v : f32
  }
  func.func @count(%n: i64, %got: f32, %want: f32) -> i64 {
    %one = arith.constant 1 : i64
    %zero = arith.constant 0 : i64
    %ne = arith.cmpf une, %got, %want : f32
    %inc = arith.select %ne, %one, %zero : i64
    %r = arith.addi %n, %inc : i64
    return %r : i64
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c37 = arith.constant 37 : index
    %c70 = arith.constant 70 : index
    %c100 = arith.constant 100 : index
    %c300 = arith.constant 300 : index
    %c70000 = arith.constant 70000 : index
    %z = arith.constant 0 : i64
    %start = arith.constant 3.0 : f32
    %low = arith.constant -100.0 : f32
    %title = llvm.mlir.addressof @title : !llvm.ptr
    call @printString(%title) : (!llvm.ptr) -> ()

    // Row max: start from -100, below every value (from -6 - 31).
    %x0 = memref.alloc() : memref<4x8x100xf32>
    %y0 = memref.alloc() : memref<4x8xf32>
    %w0 = memref.alloc() : memref<4x8xf32>
    scf.for %a = %c0 to %c4 step %c1 {
      scf.for %b = %c0 to %c8 step %c1 {
        memref.store %low, %y0[%a, %b] : memref<4x8xf32>
        %r = scf.for %k = %c0 to %c100 step %c1 iter_args(%m = %low) -> f32 {
          %ab = arith.muli %a, %c8 : index
          %row = arith.addi %ab, %b : index
          %rk = arith.muli %row, %c100 : index
          %i = arith.addi %rk, %k : index
          %v0 = func.call @value(%i) : (index) -> f32
          // Minus the row: each row's max is below the rows before it (which a block takes
          // first), so totals left over from an earlier row would show.
          %rowi = arith.index_cast %row : index to i32
          %rowf = arith.sitofp %rowi : i32 to f32
          %v = arith.subf %v0, %rowf : f32
          memref.store %v, %x0[%a, %b, %k] : memref<4x8x100xf32>
          %n = arith.maximumf %v, %m : f32
          scf.yield %n : f32
        }
        memref.store %r, %w0[%a, %b] : memref<4x8xf32>
      }
    }
    func.call @kernel_0_generic(%x0, %y0) : (memref<4x8x100xf32>, memref<4x8xf32>) -> ()
    %n0 = scf.for %a = %c0 to %c4 step %c1 iter_args(%n = %z) -> i64 {
      %nn = scf.for %b = %c0 to %c8 step %c1 iter_args(%m = %n) -> i64 {
        %g = memref.load %y0[%a, %b] : memref<4x8xf32>
        %w = memref.load %w0[%a, %b] : memref<4x8xf32>
        %r = func.call @count(%m, %g, %w) : (i64, f32, f32) -> i64
        scf.yield %r : i64
      }
      scf.yield %nn : i64
    }
    call @printI64(%n0) : (i64) -> ()
    call @printNewline() : () -> ()

    // Row sums, from 3.
    %x1 = memref.alloc() : memref<37x300xf32>
    %y1 = memref.alloc() : memref<37xf32>
    %w1 = memref.alloc() : memref<37xf32>
    scf.for %a = %c0 to %c37 step %c1 {
      memref.store %start, %y1[%a] : memref<37xf32>
      %r = scf.for %k = %c0 to %c300 step %c1 iter_args(%s = %start) -> f32 {
        %ak = arith.muli %a, %c300 : index
        %i = arith.addi %ak, %k : index
        %v = func.call @value(%i) : (index) -> f32
        memref.store %v, %x1[%a, %k] : memref<37x300xf32>
        %n = arith.addf %s, %v : f32
        scf.yield %n : f32
      }
      memref.store %r, %w1[%a] : memref<37xf32>
    }
    func.call @kernel_1_generic(%x1, %y1) : (memref<37x300xf32>, memref<37xf32>) -> ()
    %n1 = scf.for %a = %c0 to %c37 step %c1 iter_args(%n = %z) -> i64 {
      %g = memref.load %y1[%a] : memref<37xf32>
      %w = memref.load %w1[%a] : memref<37xf32>
      %r = func.call @count(%n, %g, %w) : (i64, f32, f32) -> i64
      scf.yield %r : i64
    }
    call @printI64(%n1) : (i64) -> ()
    call @printNewline() : () -> ()

    // A whole tensor's sum of squares, from 3.
    %x2 = memref.alloc() : memref<300x70xf32>
    %y2 = memref.alloc() : memref<f32>
    memref.store %start, %y2[] : memref<f32>
    %w2 = scf.for %a = %c0 to %c300 step %c1 iter_args(%s = %start) -> f32 {
      %r = scf.for %k = %c0 to %c70 step %c1 iter_args(%t = %s) -> f32 {
        %ak = arith.muli %a, %c70 : index
        %i = arith.addi %ak, %k : index
        %v = func.call @value(%i) : (index) -> f32
        memref.store %v, %x2[%a, %k] : memref<300x70xf32>
        %sq = arith.mulf %v, %v : f32
        %n = arith.addf %t, %sq : f32
        scf.yield %n : f32
      }
      scf.yield %r : f32
    }
    func.call @kernel_2_generic(%x2, %y2) : (memref<300x70xf32>, memref<f32>) -> ()
    %g2 = memref.load %y2[] : memref<f32>
    %n2 = func.call @count(%z, %g2, %w2) : (i64, f32, f32) -> i64
    call @printI64(%n2) : (i64) -> ()
    call @printNewline() : () -> ()

    // A split row, twice.
    %x3 = memref.alloc() : memref<70000xf32>
    %y3 = memref.alloc() : memref<f32>
    %w3 = scf.for %i = %c0 to %c70000 step %c1 iter_args(%s = %start) -> f32 {
      %v = func.call @value(%i) : (index) -> f32
      memref.store %v, %x3[%i] : memref<70000xf32>
      %n = arith.addf %s, %v : f32
      scf.yield %n : f32
    }
    memref.store %start, %y3[] : memref<f32>
    func.call @kernel_3_generic(%x3, %y3) : (memref<70000xf32>, memref<f32>) -> ()
    %g3 = memref.load %y3[] : memref<f32>
    %n3 = func.call @count(%z, %g3, %w3) : (i64, f32, f32) -> i64
    call @printI64(%n3) : (i64) -> ()
    call @printNewline() : () -> ()
    memref.store %start, %y3[] : memref<f32>
    func.call @kernel_3_generic(%x3, %y3) : (memref<70000xf32>, memref<f32>) -> ()
    %g4 = memref.load %y3[] : memref<f32>
    %n4 = func.call @count(%z, %g4, %w3) : (i64, f32, f32) -> i64
    call @printI64(%n4) : (i64) -> ()
    call @printNewline() : () -> ()
    return
  }
}
