// Tests the block reductions of --step-kernels-to-gpu (BlockReduction.h) and their lowering,
// --step-lower-gpu-reductions: a reduction along the innermost loop is shared by the block's
// threads (strided partials, then gpu.all_reduce, then thread 0 folds the total into the
// output); a short one (under a warp) and a column reduction keep a thread per output element.
// The lowering is two xor-shuffle butterflies around a 32-float workgroup buffer, with
// barriers (invalid_lower_gpu_reductions.mlir: it refuses launches that are not whole warps).
//
// RUN: %stepc-opt %s --step-kernels-to-gpu --canonicalize | FileCheck %s
// RUN: %stepc-opt %s --step-kernels-to-gpu --step-lower-gpu-reductions --canonicalize | FileCheck %s --check-prefix=LOWER
// RUN: %stepc-opt %s --step-kernels-to-gpu --step-lower-gpu-reductions | %stepc-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: %stepc-opt %s --step-kernels-to-gpu --step-emulate-gpu --canonicalize | FileCheck %s --check-prefix=EMULATE

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0, d1) -> ()>
module {
  // Softmax's row max over 4x8 rows of 100: one block takes the 32 rows in turn.
  func.func private @kernel_0_generic(%x: memref<4x8x100xf32>, %y: memref<4x8xf32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [#id3, #rows3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : memref<4x8x100xf32>) outs(%y : memref<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %o : f32
      linalg.yield %m : f32
    }
    return
  }
  // A gradient norm's sum of squares, to one value, with the element's index in the body.
  func.func private @kernel_1_generic(%x: memref<300x70xf32>, %y: memref<f32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [#id2, #all], iterator_types = ["reduction", "reduction"]}
        ins(%x : memref<300x70xf32>) outs(%y : memref<f32>) {
    ^bb0(%a: f32, %o: f32):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i32
      %jf = arith.sitofp %ji : i32 to f32
      %w = arith.mulf %a, %jf : f32
      %sq = arith.mulf %w, %w : f32
      %s = arith.addf %sq, %o : f32
      linalg.yield %s : f32
    }
    return
  }
  // Rows of 16: shorter than a warp, a thread per row.
  func.func private @kernel_2_generic(%x: memref<64x16xf32>, %y: memref<64xf32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<64x16xf32>) outs(%y : memref<64xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    }
    return
  }
  // Column sums (a bias gradient): the innermost loop is parallel, a thread per column.
  func.func private @kernel_3_generic(%x: memref<1024x64xf32>, %y: memref<64xf32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
        ins(%x : memref<1024x64xf32>) outs(%y : memref<64xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    }
    return
  }
  func.func @host(%a: memref<4x8x100xf32>, %b: memref<4x8xf32>, %c: memref<300x70xf32>, %d: memref<f32>,
                  %e: memref<64x16xf32>, %f: memref<64xf32>, %g: memref<1024x64xf32>, %h: memref<64xf32>) {
    call @kernel_0_generic(%a, %b) : (memref<4x8x100xf32>, memref<4x8xf32>) -> ()
    call @kernel_1_generic(%c, %d) : (memref<300x70xf32>, memref<f32>) -> ()
    call @kernel_2_generic(%e, %f) : (memref<64x16xf32>, memref<64xf32>) -> ()
    call @kernel_3_generic(%g, %h) : (memref<1024x64xf32>, memref<64xf32>) -> ()
    return
  }
}

// Rows of 100: 128 threads (100 rounded up to warps), the 32 rows over 32 blocks (untiled
// kernels spread their rows over the grid); 21000 elements in one row: one block of 256.
// CHECK-LABEL: func.func @host
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C32R:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: gpu.launch_func @stepc_kernels::@kernel_0_generic blocks in (%[[C32R]], %[[C1]], %[[C1]]) threads in (%[[C128]], %[[C1]], %[[C1]])
// CHECK: gpu.launch_func @stepc_kernels::@kernel_1_generic blocks in (%[[C1]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]])
// CHECK: gpu.launch_func @stepc_kernels::@kernel_2_generic blocks in (%[[C1]], %[[C1]], %[[C1]]) threads in (%[[C64]], %[[C1]], %[[C1]])
// CHECK: gpu.launch_func @stepc_kernels::@kernel_3_generic blocks in (%[[C1]], %[[C1]], %[[C1]]) threads in (%[[C64]], %[[C1]], %[[C1]])

// CHECK-LABEL: gpu.func @kernel_0_generic
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[T:.+]] = gpu.thread_id x
// CHECK: %[[N:.+]] = gpu.block_dim x
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[T]], %[[C0]]
// The rows, block b taking b, b + gridDim, ... (every thread of the block runs each):
// CHECK: %[[BID:.+]] = gpu.block_id x
// CHECK: %[[GRID:.+]] = gpu.grid_dim x
// CHECK: scf.for %[[ROW:.+]] = %[[BID]] to %[[C32]] step %[[GRID]]
// CHECK-DAG: %[[R1:.+]] = arith.remui %[[ROW]], %[[C8]]
// CHECK-DAG: %[[R0:.+]] = arith.divui %[[ROW]], %[[C8]]
// CHECK: %[[P:.+]] = scf.for %[[E:.+]] = %[[T]] to %{{.+}} step %[[N]] iter_args(%[[ACC:.+]] = %[[NEGINF]]) -> (f32)
// CHECK: %[[X:.+]] = memref.load %arg0[%[[R0]], %[[R1]], %[[E]]]
// CHECK: arith.maximumf %[[X]], %[[ACC]]
// CHECK: %[[TOT:.+]] = gpu.all_reduce maximumf %[[P]] uniform
// CHECK: scf.if %[[FIRST]] {
// CHECK: %[[OLD:.+]] = memref.load %arg1[%[[R0]], %[[R1]]]
// CHECK: %[[NEW:.+]] = arith.maximumf %[[TOT]], %[[OLD]]
// CHECK: memref.store %[[NEW]], %arg1[%[[R0]], %[[R1]]]
// CHECK: } {step.block_owner}

// The whole matrix is one row: elements split into (row, column), the column is linalg.index 1.
// CHECK-LABEL: gpu.func @kernel_1_generic
// CHECK: scf.for %[[E1:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK-DAG: %[[J:.+]] = arith.remui %[[E1]], %{{.+}}
// CHECK-DAG: %[[I:.+]] = arith.divui %[[E1]], %{{.+}}
// CHECK: memref.load %arg0[%[[I]], %[[J]]]
// CHECK: arith.index_cast %[[J]]
// CHECK: gpu.all_reduce add
// CHECK: memref.load %arg1[]

// CHECK-LABEL: gpu.func @kernel_2_generic
// CHECK-NOT: gpu.all_reduce
// CHECK-LABEL: gpu.func @kernel_3_generic
// CHECK-NOT: gpu.all_reduce
// CHECK: gpu.return

// LOWER-LABEL: gpu.func @kernel_0_generic
// LOWER-SAME: workgroup(%[[BUF:.+]] : memref<32xf32, #gpu.address_space<workgroup>>)
// LOWER-NOT: gpu.all_reduce
// LOWER: gpu.shuffle xor %{{.+}}, %c1_i32, %c32_i32 : f32
// LOWER: gpu.shuffle xor %{{.+}}, %c2_i32, %c32_i32 : f32
// LOWER: gpu.shuffle xor %{{.+}}, %c4_i32, %c32_i32 : f32
// LOWER: gpu.shuffle xor %{{.+}}, %c8_i32, %c32_i32 : f32
// LOWER: %[[S16:.+]], %{{.+}} = gpu.shuffle xor %[[V8:.+]], %c16_i32, %c32_i32 : f32
// LOWER: %[[WARP:.+]] = arith.maximumf %[[V8]], %[[S16]]
// LOWER: scf.if
// LOWER-NEXT: memref.store %[[WARP]], %[[BUF]]
// LOWER: gpu.barrier
// LOWER: scf.if %{{.+}} -> (f32) {
// LOWER-NEXT: memref.load %[[BUF]]
// LOWER: } else {
// LOWER-NEXT: scf.yield %cst
// LOWER: gpu.shuffle xor
// LOWER: gpu.shuffle xor
// LOWER: gpu.shuffle xor
// LOWER: gpu.shuffle xor
// LOWER: gpu.shuffle xor
// LOWER: gpu.barrier
// LOWER: } {step.block_owner}

// ROUNDTRIP: gpu.module @stepc_kernels
// ROUNDTRIP: workgroup(

// Emulated, every thread folds its own partial: no all_reduce, no guard, no barrier.
// EMULATE-LABEL: func.func private @kernel_0_generic_emulated
// EMULATE-NOT: gpu.
// EMULATE-NOT: scf.if
// EMULATE: scf.for
// EMULATE: arith.maximumf
// EMULATE: memref.store
// EMULATE-LABEL: func.func private @kernel_1_generic_emulated
