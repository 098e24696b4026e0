// A single long row (2^16 elements or more) reduced to one value is split over the grid
// (BlockReduction.h): the kernel's blocks share the row's elements (block b from b * 256),
// each block folds its total into its entry of @<kernel>_partials (a memref.global of the
// kernel module holding the identity), and <kernel>_finish, launched right after on one block,
// combines the partials in a fixed order, puts the identity back and folds the total into the
// output.
// The run (under --step-emulate-gpu) checks a sum and a max against sequential references,
// twice each, so the second launch sees the partials the first one reset. Values are small
// integers: every order of the sum is exact.
//
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu --canonicalize | FileCheck %s
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu --step-emulate-gpu | %linalg-to-llvm | %run-cpu | FileCheck %s --check-prefix=OUT

// 300000 / 1024 = 292 partials, so 292 blocks of 256 threads; the finish: 1 block of 256.
// CHECK-LABEL: func.func @reduce
// CHECK-DAG: %[[C292:.+]] = arith.constant 292 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: gpu.launch_func @stepc_kernels::@kernel_0_generic blocks in (%[[C292]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]])
// CHECK-NEXT: gpu.launch_func @stepc_kernels::@kernel_0_generic_finish blocks in (%[[C1]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]])
// CHECK: gpu.launch_func @stepc_kernels::@kernel_1_generic blocks in (%[[C292]], %[[C1]], %[[C1]])
// CHECK-NEXT: gpu.launch_func @stepc_kernels::@kernel_1_generic_finish
// CHECK: memref.global "private" @kernel_1_generic_partials : memref<292xf32> = dense<0xFF800000>
// CHECK: memref.global "private" @kernel_0_generic_partials : memref<292xf32> = dense<-0.000000e+00>
// CHECK-LABEL: gpu.func @kernel_0_generic
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: %[[T:.+]] = gpu.thread_id x
// CHECK: %[[BD:.+]] = gpu.block_dim x
// CHECK: %[[B:.+]] = gpu.block_id x
// CHECK: %[[G:.+]] = gpu.grid_dim x
// CHECK: %[[BASE:.+]] = arith.muli %[[B]], %[[BD]]
// CHECK: %[[FIRST:.+]] = arith.addi %[[BASE]], %[[T]]
// CHECK: %[[STRIDE:.+]] = arith.muli %[[G]], %[[BD]]
// CHECK: scf.for %{{.+}} = %[[FIRST]] to %c300000 step %[[STRIDE]]
// CHECK: gpu.all_reduce add %{{.+}} uniform
// CHECK: scf.if
// CHECK: %[[P:.+]] = memref.get_global @kernel_0_generic_partials
// CHECK: memref.load %[[P]][%[[B]]]
// CHECK: memref.store %{{.+}}, %[[P]][%[[B]]]
// CHECK: } {step.block_owner}
// CHECK-LABEL: gpu.func @kernel_0_generic_finish
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: memref.get_global @kernel_0_generic_partials
// CHECK: scf.for %{{.+}} = %{{.+}} to %c292 step
// CHECK: memref.store %cst, %{{.+}}[%{{.+}}] : memref<292xf32>
// CHECK: gpu.all_reduce add
// CHECK: memref.load %arg1[] : memref<f32>
// CHECK: } {step.block_owner}

// OUT: sum ok
// OUT-NEXT: 1
// OUT-NEXT: 1
// OUT-NEXT: max ok
// OUT-NEXT: 1
// OUT-NEXT: 1

#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
module {
  func.func @stepc_profile_enter(%id: i64) { return }
  func.func @stepc_profile_exit(%id: i64) { return }
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func private @printString(!llvm.ptr)
  llvm.mlir.global internal constant @sum_ok("sum ok\0A\00")
  llvm.mlir.global internal constant @max_ok("max ok\0A\00")

  func.func @reduce(%x: memref<300000xf32>, %s: memref<f32>, %m: memref<f32>) {
    linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
        ins(%x : memref<300000xf32>) outs(%s : memref<f32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %a, %o : f32
      linalg.yield %r : f32
    }
    linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
        ins(%x : memref<300000xf32>) outs(%m : memref<f32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %o : f32
      linalg.yield %r : f32
    }
    return
  }

  func.func @check(%got: memref<f32>, %want: f32) {
    %g = memref.load %got[] : memref<f32>
    %eq = arith.cmpf oeq, %g, %want : f32
    %i = arith.extui %eq : i1 to i64
    call @printI64(%i) : (i64) -> ()
    call @printNewline() : () -> ()
    return
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 300000 : index
    %c13 = arith.constant 13 : index
    %c20 = arith.constant 20.0 : f32
    %x = memref.alloc() : memref<300000xf32>
    // x[i] = (i mod 13) - 20: all negative, so a max starting from 0 instead of -inf is caught.
    %total = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c20) -> f32 {
      %r = arith.remui %i, %c13 : index
      %ri = arith.index_cast %r : index to i32
      %rf = arith.sitofp %ri : i32 to f32
      %v = arith.subf %rf, %c20 : f32
      memref.store %v, %x[%i] : memref<300000xf32>
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    // The sum starts at 20 (the output's old value, which the reduction adds to).
    %s = memref.alloc() : memref<f32>
    %m = memref.alloc() : memref<f32>
    %lowest = arith.constant -1000.0 : f32
    memref.store %c20, %s[] : memref<f32>
    memref.store %lowest, %m[] : memref<f32>
    call @reduce(%x, %s, %m) : (memref<300000xf32>, memref<f32>, memref<f32>) -> ()
    %ps = llvm.mlir.addressof @sum_ok : !llvm.ptr
    call @printString(%ps) : (!llvm.ptr) -> ()
    call @check(%s, %total) : (memref<f32>, f32) -> ()
    // Again on the same outputs: the partials must be back at the identity.
    memref.store %c20, %s[] : memref<f32>
    memref.store %lowest, %m[] : memref<f32>
    call @reduce(%x, %s, %m) : (memref<300000xf32>, memref<f32>, memref<f32>) -> ()
    call @check(%s, %total) : (memref<f32>, f32) -> ()
    %pm = llvm.mlir.addressof @max_ok : !llvm.ptr
    call @printString(%pm) : (!llvm.ptr) -> ()
    %want = arith.constant -8.0 : f32
    memref.store %lowest, %m[] : memref<f32>
    call @reduce(%x, %s, %m) : (memref<300000xf32>, memref<f32>, memref<f32>) -> ()
    call @check(%m, %want) : (memref<f32>, f32) -> ()
    memref.store %lowest, %m[] : memref<f32>
    call @reduce(%x, %s, %m) : (memref<300000xf32>, memref<f32>, memref<f32>) -> ()
    call @check(%m, %want) : (memref<f32>, f32) -> ()
    return
  }
}
