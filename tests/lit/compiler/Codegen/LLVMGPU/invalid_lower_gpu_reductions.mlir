// --step-lower-gpu-reductions needs whole warps: its shuffles are full-width.
// RUN: not %stepc-opt %s --step-lower-gpu-reductions 2>&1 | FileCheck %s --check-prefix=BAD

module attributes {gpu.container_module} {
  gpu.module @stepc_kernels {
    gpu.func @k(%x: f32) kernel {
      %t = gpu.all_reduce add %x uniform {} : (f32) -> f32
      gpu.return
    }
  }
  func.func @bad() {
    %c1 = arith.constant 1 : index
    %c48 = arith.constant 48 : index
    %x = arith.constant 1.0 : f32
    // BAD: :[[@LINE+1]]:5: error: a kernel with a block reduction needs a constant block of whole warps (x a multiple of 32, at most 1024; y = z = 1)
    gpu.launch_func @stepc_kernels::@k blocks in (%c1, %c1, %c1) threads in (%c48, %c1, %c1) args(%x : f32)
    return
  }
}
