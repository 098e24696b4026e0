// Tests --step-kernels-to-gpu: each kernel becomes a gpu.func in @stepc_kernels and each call
// a gpu.launch_func. A tiled kernel's tiles are blocks (the block id, delinearised, indexes the
// tile); inside, the outermost parallel loop is spread over the threads (thread t takes
// elements t, t + blockDim, ...) and column reductions run within a thread, so no two threads
// write one element; row reductions are shared by the block. Blocks have the tile's element
// count of threads, rounded up to a warp, at most 256. The CPU kernel functions are gone.
//
// RUN: %stepc-opt %inputs/kernels_to_tile.mlir --step-tile-kernels --step-kernels-to-gpu --canonicalize | FileCheck %s
// RUN: %stepc-opt %inputs/kernels_to_tile.mlir --step-tile-kernels --step-kernels-to-gpu | %stepc-opt | FileCheck %s --check-prefix=ROUNDTRIP

// CHECK: module attributes {gpu.container_module}
// CHECK-NOT: step.kernel
// CHECK-LABEL: func.func @host
// 64 row tiles of one row sum each: 64 blocks of 256 threads sharing the row.
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C56:.+]] = arith.constant 56 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: gpu.launch_func @stepc_kernels::@kernel_0_generic blocks in (%[[C64]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]]) args(%arg0 : memref<64x1024xf32>, %arg1 : memref<64xf32>)
// 7 x 8 tiles of 8 x 96 elements: 56 blocks of 256 threads.
// CHECK: gpu.launch_func @stepc_kernels::@kernel_1_generic blocks in (%[[C56]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]])
// CHECK: gpu.launch_func @stepc_kernels::@kernel_0_generic
// CHECK-NOT: call @kernel_
// CHECK-LABEL: gpu.module @stepc_kernels
// The row sum (a block reduction, block_reduction.mlir has the details): thread t sums the
// elements t, t + blockDim, ... of the block's row, then gpu.all_reduce.
// CHECK-LABEL: gpu.func @kernel_0_generic(%arg0: memref<64x1024xf32>, %arg1: memref<64xf32>) kernel
// CHECK: %[[B:.+]] = gpu.block_id x
// CHECK: memref.subview %arg0[%[[B]], 0] [1, 1024] [1, 1]
// CHECK: %[[T:.+]] = gpu.thread_id x
// CHECK: %[[N:.+]] = gpu.block_dim x
// CHECK: scf.for %[[E:.+]] = %[[T]] to %{{.+}} step %[[N]] iter_args
// CHECK: gpu.all_reduce add
// CHECK-LABEL: gpu.func @kernel_1_generic
// CHECK: %[[B1:.+]] = gpu.block_id x
// CHECK-DAG: arith.remui %[[B1]], %{{.+}} : index
// CHECK-DAG: arith.divui %[[B1]], %{{.+}} : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} {
// Column sums: the reduction loop outside, each thread its own columns inside.
// CHECK-LABEL: gpu.func @kernel_3_generic
// CHECK: scf.for %[[R:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: gpu.thread_id x
// CHECK: scf.for %[[COL:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: memref.load %arg0[%[[R]], %[[COL]]]

// ROUNDTRIP: gpu.module @stepc_kernels
