// --step-kernels-to-gpu spreads the loops of a kernel with several (a scan) with one mapping,
// with no barrier between them: that is only right when they have one static shape, so each
// thread owns the same elements in all. Anything else is refused.
// RUN: not %stepc-opt %s --step-kernels-to-gpu 2>&1 | FileCheck %s

#id = affine_map<(d0) -> (d0)>
module {
  func.func private @kernel_0_scan(%x: memref<64xf32>, %sum: memref<64xf32>, %y: memref<32xf32>) attributes {step.kernel} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %s = %c0 to %c4 step %c1 {
      linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
          ins(%x : memref<64xf32>) outs(%sum : memref<64xf32>) {
      ^bb0(%in: f32, %out: f32):
        %a = arith.addf %out, %in : f32
        linalg.yield %a : f32
      }
      %part = memref.subview %sum[0] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1]>>
      // CHECK: error: the loops of a kernel with several must have one static shape, so that each GPU thread owns the same elements in all of them
      linalg.copy ins(%part : memref<32xf32, strided<[1]>>) outs(%y : memref<32xf32>)
    } {step.scan}
    return
  }
  func.func @host(%x: memref<64xf32>, %sum: memref<64xf32>, %y: memref<32xf32>) {
    call @kernel_0_scan(%x, %sum, %y) : (memref<64xf32>, memref<64xf32>, memref<32xf32>) -> ()
    return
  }
}
