// Tests the scan kernel: a cumsum's bufferized loop (scf.for marked `step.scan`, holding the
// add to the running sum and the copy into the result's slice) is outlined whole as one
// kernel, @kernel_N_scan, with its bounds cloned in (--step-outline-kernels). A marked loop
// that allocates is not a kernel: its linalg ops are outlined one by one. On the GPU
// (--step-kernels-to-gpu) a cumsum's loop is a block scan (BlockScan.h; block_scan_run.mlir
// runs it): 4 x 512 columns make 64 blocks of 1024 threads (32 columns, 32 segments of the 64
// steps each), with a workgroup buffer of segment totals, two barriers and shuffles up. A scan
// loop of another form (here a running product) keeps its sequential loop, and both ops inside
// are spread over the grid the same way (element = block id * blockDim + thread id, stride
// gridDim * blockDim), so a thread owns the same columns at every step; 2048 columns make 8
// blocks of 256 threads.
//
// RUN: %stepc-opt %s --step-outline-kernels | FileCheck %s
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu --canonicalize | FileCheck %s --check-prefix=GPU

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @train_step(%x: memref<4x64x512xf32>, %sum: memref<4x1x512xf32>, %y: memref<4x64x512xf32>, %z: memref<4x1x512xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    scf.for %s = %c0 to %c64 step %c1 {
      %xs = memref.subview %x[0, %s, 0] [4, 1, 512] [1, 1, 1] : memref<4x64x512xf32> to memref<4x1x512xf32, strided<[32768, 512, 1], offset: ?>>
      linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%xs : memref<4x1x512xf32, strided<[32768, 512, 1], offset: ?>>) outs(%sum : memref<4x1x512xf32>) {
      ^bb0(%in: f32, %out: f32):
        %a = arith.addf %out, %in : f32
        linalg.yield %a : f32
      }
      %ys = memref.subview %y[0, %s, 0] [4, 1, 512] [1, 1, 1] : memref<4x64x512xf32> to memref<4x1x512xf32, strided<[32768, 512, 1], offset: ?>>
      linalg.copy ins(%sum : memref<4x1x512xf32>) outs(%ys : memref<4x1x512xf32, strided<[32768, 512, 1], offset: ?>>)
    } {step.scan}
    scf.for %s = %c0 to %c64 step %c1 {
      %xs = memref.subview %x[0, %s, 0] [4, 1, 512] [1, 1, 1] : memref<4x64x512xf32> to memref<4x1x512xf32, strided<[32768, 512, 1], offset: ?>>
      linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
          ins(%xs : memref<4x1x512xf32, strided<[32768, 512, 1], offset: ?>>) outs(%z : memref<4x1x512xf32>) {
      ^bb0(%in: f32, %out: f32):
        %a = arith.mulf %out, %in : f32
        linalg.yield %a : f32
      }
      %ys = memref.subview %y[0, %s, 0] [4, 1, 512] [1, 1, 1] : memref<4x64x512xf32> to memref<4x1x512xf32, strided<[32768, 512, 1], offset: ?>>
      linalg.copy ins(%z : memref<4x1x512xf32>) outs(%ys : memref<4x1x512xf32, strided<[32768, 512, 1], offset: ?>>)
    } {step.scan}
    // Not a kernel: it allocates.
    scf.for %s = %c0 to %c64 step %c1 {
      %t = memref.alloc() : memref<4x1x512xf32>
      linalg.copy ins(%z : memref<4x1x512xf32>) outs(%t : memref<4x1x512xf32>)
      memref.dealloc %t : memref<4x1x512xf32>
    } {step.scan}
    return
  }
}

// CHECK: module attributes {step.kernels = {calls = 3 : i64, distinct = 3 : i64}}
// CHECK: func.func private @kernel_0_scan(%[[X:.+]]: memref<4x64x512xf32>, %[[SUM:.+]]: memref<4x1x512xf32>, %[[Y:.+]]: memref<4x64x512xf32>)
// CHECK-SAME: step.kernel
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: scf.for %[[S:.+]] = %[[C0]] to %[[C64]]
// CHECK: memref.subview %[[X]][0, %[[S]], 0]
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[SUM]]
// CHECK: memref.subview %[[Y]][0, %[[S]], 0]
// CHECK: linalg.copy ins(%[[SUM]]
// CHECK: } {step.scan}
// CHECK-LABEL: func.func private @kernel_1_scan
// CHECK-LABEL: func.func private @kernel_2_copy
// CHECK: func.func @train_step(%[[A0:.+]]: memref<4x64x512xf32>, %[[A1:.+]]: memref<4x1x512xf32>, %[[A2:.+]]: memref<4x64x512xf32>, %[[A3:.+]]: memref<4x1x512xf32>)
// CHECK: call @kernel_0_scan(%[[A0]], %[[A1]], %[[A2]])
// CHECK: call @kernel_1_scan(%[[A0]], %[[A3]], %[[A2]])
// CHECK: scf.for
// CHECK: memref.alloc
// CHECK: call @kernel_2_copy(%[[A3]],

// GPU-LABEL: func.func @train_step
// GPU-DAG: %[[C8:.+]] = arith.constant 8 : index
// GPU-DAG: %[[C64:.+]] = arith.constant 64 : index
// GPU-DAG: %[[C256:.+]] = arith.constant 256 : index
// GPU-DAG: %[[C1024:.+]] = arith.constant 1024 : index
// GPU-DAG: %[[C1:.+]] = arith.constant 1 : index
// GPU: gpu.launch_func @stepc_kernels::@kernel_0_scan blocks in (%[[C64]], %[[C1]], %[[C1]]) threads in (%[[C1024]], %[[C1]], %[[C1]])
// GPU: gpu.launch_func @stepc_kernels::@kernel_1_scan blocks in (%[[C8]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]])
// The block scan: lane = column of the block's 32, warp = segment of 2 steps.
// GPU-LABEL: gpu.func @kernel_0_scan
// GPU-SAME: workgroup(%[[TOT:.+]] : memref<32x33xf32, #gpu.address_space<workgroup>>)
// GPU-SAME: known_block_size = array<i32: 1024, 1, 1>
// GPU: %[[T:.+]] = gpu.thread_id x
// GPU: %[[LANE:.+]] = arith.remui %[[T]], %c32
// GPU: %[[WARP:.+]] = arith.divui %[[T]], %c32
// GPU: %[[FIRST:.+]] = arith.muli %[[WARP]], %c2
// 1. The segment's sum.
// GPU: scf.for %{{.+}} = %[[FIRST]] to %{{.+}} step %c1 iter_args
// GPU: arith.addf
// GPU: memref.store %{{.+}}, %[[TOT]][%[[WARP]], %[[LANE]]]
// GPU-NEXT: gpu.barrier
// 2. The warp's shuffle scan of its column's segment totals, the running sum in lane 0.
// GPU: memref.load %[[TOT]][%[[LANE]], %[[WARP]]]
// GPU-COUNT-5: gpu.shuffle up %{{.+}}, %c{{1|2|4|8|16}}_i32, %c32_i32 : f32
// GPU: gpu.shuffle up %{{.+}}, %c1_i32, %c32_i32 : f32
// GPU: memref.store %{{.+}}, %[[TOT]][%[[LANE]], %[[WARP]]]
// GPU-NEXT: gpu.barrier
// 3. The segment again from its prefix, writing y; the last segment keeps the total.
// GPU: memref.load %[[TOT]][%[[WARP]], %[[LANE]]]
// GPU: scf.for
// GPU: memref.store %{{.+}}, %arg2
// GPU: memref.store %{{.+}}, %arg1
// GPU: gpu.return
// GPU-LABEL: gpu.func @kernel_1_scan
// GPU: scf.for %[[S:.+]] = %c0 to %c64 step %c1 {
// GPU: %[[B:.+]] = gpu.block_id x
// GPU: %[[G:.+]] = gpu.grid_dim x
// GPU: %[[FIRST:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// GPU: %[[STRIDE:.+]] = arith.muli %[[G]], %{{.+}} : index
// GPU: scf.for %[[E:.+]] = %[[FIRST]] to %c2048 step %[[STRIDE]] {
// GPU: arith.mulf
// GPU: scf.for %[[E2:.+]] = %[[FIRST]] to %c2048 step %[[STRIDE]] {
// GPU: memref.store
// GPU: gpu.return
