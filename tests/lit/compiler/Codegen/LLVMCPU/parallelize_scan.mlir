// Tests --step-parallelize-kernels on a cumsum's scan kernel (ScanLoop.h): the scan loop is
// split over the state's first non-axis dimension (here the 4 of [4, 1, 512]), each forall
// iteration the same scan on its [1, 1, 512] slice (a reverse one reading from the end), and
// then run as a range of those iterations on the CPU threads like any tiled kernel. A scan
// over a state with no other dimension longer than 1 stays sequential. (The numbers:
// compiled_vs_interpreter.test, whose byte_lm_residual has cumsums forwards and in its gradient
// backwards.)
//
// RUN: %stepc-opt %s --step-outline-kernels --step-parallelize-kernels --canonicalize | FileCheck %s

// CHECK: func.func private @kernel_0_scan(%[[X:.+]]: memref<4x64x512xf32>, %[[S:.+]]: memref<4x1x512xf32>, %[[Y:.+]]: memref<4x64x512xf32>, %[[LO:.+]]: index, %[[HI:.+]]: index)
// CHECK-SAME: step.parallel_tasks = 4
// CHECK: scf.for %[[B:.+]] = %[[LO]] to %[[HI]]
// CHECK: %[[ST:.+]] = memref.subview %[[S]][%[[B]], 0, 0] [1, 1, 512] [1, 1, 1]
// CHECK: scf.for %[[T:.+]] = %c0 to %c64 step %c1 {
// CHECK: %[[AT:.+]] = arith.subi %c63, %[[T]]
// CHECK: memref.subview %[[X]][%[[B]], %[[AT]], 0] [1, 1, 512] [1, 1, 1]
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[ST]]
// CHECK: memref.subview %[[Y]][%[[B]], %[[AT]], 0] [1, 1, 512] [1, 1, 1]
// CHECK: linalg.copy ins(%[[ST]]
// CHECK: } {step.scan}
// CHECK-LABEL: func.func private @kernel_1_scan(%{{.+}}: memref<1x64x1xf32>, %{{.+}}: memref<1x1x1xf32>, %{{.+}}: memref<1x64x1xf32>) attributes {{{.*}}step.kernel}
// CHECK-NOT: parallel_tasks
// CHECK-LABEL: func.func @train_step
// CHECK: call @kernel_0_scan(%{{.+}}, %{{.+}}, %{{.+}}, %c0, %c4)
// CHECK: call @kernel_1_scan(%{{.+}}, %{{.+}}, %{{.+}}) :

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @train_step(%x: memref<4x64x512xf32>, %sum: memref<4x1x512xf32>, %y: memref<4x64x512xf32>,
                        %u: memref<1x64x1xf32>, %usum: memref<1x1x1xf32>, %v: memref<1x64x1xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c63 = arith.constant 63 : index
    %c64 = arith.constant 64 : index
    scf.for %s = %c0 to %c64 step %c1 {
      %at = arith.subi %c63, %s : index
      %xs = memref.subview %x[0, %at, 0] [4, 1, 512] [1, 1, 1] : memref<4x64x512xf32> to memref<4x1x512xf32, strided<[32768, 512, 1], offset: ?>>
      linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%xs : memref<4x1x512xf32, strided<[32768, 512, 1], offset: ?>>) outs(%sum : memref<4x1x512xf32>) {
      ^bb0(%in: f32, %out: f32):
        %a = arith.addf %out, %in : f32
        linalg.yield %a : f32
      }
      %ys = memref.subview %y[0, %at, 0] [4, 1, 512] [1, 1, 1] : memref<4x64x512xf32> to memref<4x1x512xf32, strided<[32768, 512, 1], offset: ?>>
      linalg.copy ins(%sum : memref<4x1x512xf32>) outs(%ys : memref<4x1x512xf32, strided<[32768, 512, 1], offset: ?>>)
    } {step.scan}
    scf.for %s = %c0 to %c64 step %c1 {
      %us = memref.subview %u[0, %s, 0] [1, 1, 1] [1, 1, 1] : memref<1x64x1xf32> to memref<1x1x1xf32, strided<[64, 1, 1], offset: ?>>
      linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%us : memref<1x1x1xf32, strided<[64, 1, 1], offset: ?>>) outs(%usum : memref<1x1x1xf32>) {
      ^bb0(%in: f32, %out: f32):
        %a = arith.addf %out, %in : f32
        linalg.yield %a : f32
      }
      %vs = memref.subview %v[0, %s, 0] [1, 1, 1] [1, 1, 1] : memref<1x64x1xf32> to memref<1x1x1xf32, strided<[64, 1, 1], offset: ?>>
      linalg.copy ins(%usum : memref<1x1x1xf32>) outs(%vs : memref<1x1x1xf32, strided<[64, 1, 1], offset: ?>>)
    } {step.scan}
    return
  }
}
