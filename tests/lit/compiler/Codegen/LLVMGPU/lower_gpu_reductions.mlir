// Tests --step-lower-gpu-reductions (LowerGpuReductions.cpp) on its own: a block-wide
// gpu.all_reduce in a gpu.func launched with whole warps becomes a butterfly of gpu.shuffle xor
// (offsets 1, 2, 4, 8, 16, width 32) per warp, lane 0 storing the warp's total to a workgroup
// buffer of 32 floats, a barrier, a second butterfly over the loaded totals (the neutral element
// past the last warp), and a barrier; all in scf form, with no cf branch. block_reduction.mlir
// covers it after --step-kernels-to-gpu, invalid_lower_gpu_reductions.mlir its refusals.
//
// RUN: %stepc-opt %s -split-input-file --step-lower-gpu-reductions \
// RUN:   | FileCheck %s --implicit-check-not=gpu.all_reduce --implicit-check-not=cf.br --implicit-check-not=cf.cond_br
// RUN: %stepc-opt %s -split-input-file --step-lower-gpu-reductions | %stepc-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP

// Tests that an add reduction becomes the two butterflies around the workgroup buffer, each
// step's shuffle feeding on the previous step's sum, and the total replaces the all_reduce.
module attributes {gpu.container_module} {
  gpu.module @stepc_kernels {
    gpu.func @block_sum(%x: memref<128xf32>, %y: memref<f32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<128xf32>
      %s = gpu.all_reduce add %v uniform {} : (f32) -> f32
      memref.store %s, %y[] : memref<f32>
      gpu.return
    }
  }
  func.func @launch_sum(%x: memref<128xf32>, %y: memref<f32>) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @stepc_kernels::@block_sum blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) args(%x : memref<128xf32>, %y : memref<f32>)
    return
  }
}
// CHECK-LABEL: gpu.func @block_sum(%arg0: memref<128xf32>, %arg1: memref<f32>)
// CHECK-SAME: workgroup(%[[BUF:.+]] : memref<32xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-NOT: gpu.all_reduce
// CHECK: %[[X:.+]] = memref.load %arg0
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[NT:.+]] = gpu.block_dim x
// CHECK: %[[C32:.+]] = arith.constant 32 : index
// CHECK: %[[LANE:.+]] = arith.remui %[[TID]], %[[C32]] : index
// CHECK: %[[WARP:.+]] = arith.divui %[[TID]], %[[C32]] : index
// CHECK: %[[UP:.+]] = arith.addi %[[NT]], %{{.+}} : index
// CHECK: %[[WARPS:.+]] = arith.divui %[[UP]], %[[C32]] : index
// CHECK: %[[S1:[^,]+]], %{{.+}} = gpu.shuffle xor %[[X]], %c1_i32, %c32_i32 : f32
// CHECK: %[[A1:.+]] = arith.addf %[[X]], %[[S1]] : f32
// CHECK: %[[S2:[^,]+]], %{{.+}} = gpu.shuffle xor %[[A1]], %c2_i32, %c32_i32{{.*}} : f32
// CHECK: %[[A2:.+]] = arith.addf %[[A1]], %[[S2]] : f32
// CHECK: %[[S4:[^,]+]], %{{.+}} = gpu.shuffle xor %[[A2]], %c4_i32, %c32_i32{{.*}} : f32
// CHECK: %[[A4:.+]] = arith.addf %[[A2]], %[[S4]] : f32
// CHECK: %[[S8:[^,]+]], %{{.+}} = gpu.shuffle xor %[[A4]], %c8_i32, %c32_i32{{.*}} : f32
// CHECK: %[[A8:.+]] = arith.addf %[[A4]], %[[S8]] : f32
// CHECK: %[[S16:[^,]+]], %{{.+}} = gpu.shuffle xor %[[A8]], %c16_i32, %c32_i32{{.*}} : f32
// CHECK: %[[WTOT:.+]] = arith.addf %[[A8]], %[[S16]] : f32
// Lane 0 stores the warp's total at the warp's index; barrier.
// CHECK: %[[LEAD:.+]] = arith.cmpi eq, %[[LANE]], %{{.+}} : index
// CHECK: scf.if %[[LEAD]] {
// CHECK-NEXT: memref.store %[[WTOT]], %[[BUF]][%[[WARP]]] : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// Lanes below the warp count load a total, the rest take 0 (-0.0, the neutral of add).
// CHECK-NEXT: %[[PRESENT:.+]] = arith.cmpi ult, %[[LANE]], %[[WARPS]] : index
// CHECK-NEXT: %[[P:.+]] = scf.if %[[PRESENT]] -> (f32) {
// CHECK-NEXT: %[[L:.+]] = memref.load %[[BUF]][%[[LANE]]] : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: scf.yield %[[L]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant -0.000000e+00 : f32
// CHECK-NEXT: scf.yield %[[ZERO]] : f32
// CHECK: gpu.shuffle xor %[[P]], %c1_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c2_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c4_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c8_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK: %[[S16B:[^,]+]], %{{.+}} = gpu.shuffle xor %[[V8:.+]], %c16_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK-NEXT: %[[TOTAL:.+]] = arith.addf %[[V8]], %[[S16B]] : f32
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.store %[[TOTAL]], %arg1[] : memref<f32>
// CHECK-NOT: gpu.all_reduce
// CHECK: gpu.return
// ROUNDTRIP: gpu.func @block_sum(%arg0: memref<128xf32>, %arg1: memref<f32>) workgroup(%arg2 : memref<32xf32, #gpu.address_space<workgroup>>) kernel
// ROUNDTRIP: gpu.shuffle xor

// -----

// Tests that a max reduction inside a row loop is lowered in place, in the loop body (scf, no
// cf branches): maximumf butterflies, -inf past the last warp, both barriers inside the loop;
// a kernel without a reduction gets no workgroup buffer.
module attributes {gpu.container_module} {
  gpu.module @stepc_kernels {
    gpu.func @row_max_loop(%x: memref<8x256xf32>, %y: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %t = gpu.thread_id x
      scf.for %r = %c0 to %c8 step %c1 {
        %v = memref.load %x[%r, %t] : memref<8x256xf32>
        %m = gpu.all_reduce maximumf %v uniform {} : (f32) -> f32
        memref.store %m, %y[%r] : memref<8xf32>
      }
      gpu.return
    }
    gpu.func @no_reduction(%x: memref<32xf32>) kernel {
      gpu.return
    }
  }
  func.func @launch_max(%a: memref<8x256xf32>, %b: memref<8xf32>, %c: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c256 = arith.constant 256 : index
    gpu.launch_func @stepc_kernels::@row_max_loop blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%a : memref<8x256xf32>, %b : memref<8xf32>)
    gpu.launch_func @stepc_kernels::@no_reduction blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%c : memref<32xf32>)
    return
  }
}
// CHECK-LABEL: gpu.func @row_max_loop
// CHECK-SAME: workgroup(%[[MBUF:.+]] : memref<32xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: scf.for %[[R:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[XM:.+]] = memref.load %arg0[%[[R]], %{{.+}}] : memref<8x256xf32>
// CHECK: %[[M1:[^,]+]], %{{.+}} = gpu.shuffle xor %[[XM]], %c1_i32, %c32_i32 : f32
// CHECK-NEXT: arith.maximumf %[[XM]], %[[M1]] : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c2_i32, %c32_i32{{.*}} : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c4_i32, %c32_i32{{.*}} : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c8_i32, %c32_i32{{.*}} : f32
// CHECK: gpu.shuffle xor %{{.+}}, %c16_i32, %c32_i32{{.*}} : f32
// CHECK: memref.store %{{.+}}, %[[MBUF]][%{{.+}}] : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.load %[[MBUF]][%{{.+}}] : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK: } else {
// CHECK-NEXT: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: scf.yield %[[NEGINF]] : f32
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-NEXT: %[[MTOT:.+]] = arith.maximumf
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.store %[[MTOT]], %arg1[%[[R]]] : memref<8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
// CHECK-LABEL: gpu.func @no_reduction(%arg0: memref<32xf32>) kernel {
// CHECK-NEXT: gpu.return
// CHECK-NOT: gpu.all_reduce
// ROUNDTRIP: gpu.func @row_max_loop({{.*}}) workgroup(
