// Tests --step-emulate-gpu: a gpu.func becomes a private, non-inlined CPU function of its
// arguments plus (block id, thread id, block size, grid size), with the gpu ids replaced by
// them; a gpu.launch_func becomes a loop over the grid's blocks around a loop over the block's
// threads calling it; the gpu.module and the container attribute are gone. (--canonicalize only
// gathers the constants.)
//
// RUN: %stepc-opt %s --step-emulate-gpu --canonicalize | FileCheck %s

// CHECK-NOT: gpu.
// CHECK: func.func @host(%[[X:.+]]: memref<64xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[G:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[T:.+]] = arith.constant 32 : index
// CHECK: scf.for %[[B:.+]] = %[[C0]] to %[[G]] step %[[C1]] {
// CHECK-NEXT: scf.for %[[TH:.+]] = %[[C0]] to %[[T]] step %[[C1]] {
// CHECK-NEXT: func.call @scale_emulated(%[[X]], %[[B]], %[[TH]], %[[T]], %[[G]])
// CHECK: func.func private @scale_emulated(%[[A:.+]]: memref<64xf32>, %[[BID:.+]]: index, %[[TID:.+]]: index, %[[BDIM:.+]]: index, %[[GDIM:.+]]: index)
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]
// CHECK: arith.muli %[[BID]], %[[BDIM]]
// CHECK: arith.addi %{{.+}}, %[[TID]]
// CHECK: return
// CHECK-NOT: gpu.
module attributes {gpu.container_module} {
  func.func @host(%x: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @k::@scale blocks in (%c2, %c1, %c1) threads in (%c32, %c1, %c1) args(%x : memref<64xf32>)
    return
  }
  gpu.module @k {
    gpu.func @scale(%a: memref<64xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %n = gpu.block_dim x
      %base = arith.muli %b, %n : index
      %i = arith.addi %base, %t : index
      %v = memref.load %a[%i] : memref<64xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %a[%i] : memref<64xf32>
      gpu.return
    }
  }
}
