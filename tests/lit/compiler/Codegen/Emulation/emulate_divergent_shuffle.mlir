// --step-emulate-gpu runs a loop or branch around a barrier or shuffle once for the block, so
// all of its threads must take the same path. A shuffle under `thread id < 32` in a block of 64
// threads is uniform per warp on the GPU, not per block here: the emulated program checks the
// threads' conditions and stops with a message instead of computing something the GPU would
// not (the second warp would get shuffled values it never asked for).
//
// RUN: %stepc-opt %s --step-emulate-gpu | %linalg-to-llvm | not --crash %run-cpu 2>&1 | FileCheck %s
// CHECK: --step-emulate-gpu: the threads of a block disagree on the bound or condition of a loop or branch around a barrier or shuffle
// The same kernel on 32 threads (one warp, all taking the branch) runs.
// RUN: sed 's/threads in (%c64/threads in (%c32/' %s | %stepc-opt --step-emulate-gpu | %linalg-to-llvm | %run-cpu | FileCheck %s --check-prefix=WARP
// WARP: [1, 0, 3, 2, 5, 4,
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%out: memref<64xi32>) kernel {
      %c32 = arith.constant 32 : index
      %c1 = arith.constant 1 : i32
      %w = arith.constant 32 : i32
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %warp0 = arith.cmpi ult, %tid, %c32 : index
      scf.if %warp0 {
        %s, %v = gpu.shuffle xor %t, %c1, %w : i32
        memref.store %s, %out[%tid] : memref<64xi32>
      }
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c32 = arith.constant 32 : index
    %z = arith.constant 0 : i32
    %o = memref.alloc() : memref<64xi32>
    linalg.fill ins(%z : i32) outs(%o : memref<64xi32>)
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%o : memref<64xi32>)
    %u = memref.cast %o : memref<64xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }
}
