// Tests --step-cuda-host (CudaHost.cpp): the gpu-stage host plan readied for device memory. The
// arena global becomes a call to the runtime's stepc_cuda_arena(bytes), the GEMM interface calls
// go to their CUDA implementations (stepc_cuda_*), host-side memref.copy becomes
// stepc_cuda_copy(dst, src, bytes) on device addresses, and the profile calls are dropped.
//
// RUN: %stepc-opt %s -split-input-file --step-cuda-host | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-cuda-host | %stepc-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: %stepc compile %models/mlp.mlir --config=tiny --emit=gpu -o %t.gpu.mlir
// RUN: %stepc-opt %t.gpu.mlir --step-cuda-host | FileCheck %s --check-prefix=MLP

// Tests that the arena global is replaced by a declared runtime call taking the arena's size in
// bytes, one call per function that used the global, and that the views now view its result.
module {
  memref.global "private" @stepc_arena : memref<6080xi8> {alignment = 64 : i64}
  func.func @arena_from_runtime() -> memref<8x16xf32> {
    %c1024 = arith.constant 1024 : index
    %0 = memref.get_global @stepc_arena : memref<6080xi8>
    %view = memref.view %0[%c1024][] : memref<6080xi8> to memref<8x16xf32>
    return %view : memref<8x16xf32>
  }
  func.func @arena_second_user() -> memref<4xf32> {
    %c0 = arith.constant 0 : index
    %0 = memref.get_global @stepc_arena : memref<6080xi8>
    %view = memref.view %0[%c0][] : memref<6080xi8> to memref<4xf32>
    return %view : memref<4xf32>
  }
}
// CHECK-NOT: memref.global
// CHECK: func.func private @stepc_cuda_arena(i64) -> memref<6080xi8> attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @arena_from_runtime
// CHECK-NOT: memref.get_global
// CHECK: %[[BYTES:.+]] = arith.constant 6080 : i64
// CHECK: %[[ARENA:.+]] = call @stepc_cuda_arena(%[[BYTES]]) : (i64) -> memref<6080xi8>
// CHECK: memref.view %[[ARENA]][%{{.+}}][] : memref<6080xi8> to memref<8x16xf32>
// CHECK-LABEL: func.func @arena_second_user
// CHECK-NOT: memref.get_global
// CHECK: %[[ARENA2:.+]] = call @stepc_cuda_arena(%{{.+}}) : (i64) -> memref<6080xi8>
// CHECK: memref.view %[[ARENA2]][%{{.+}}][] : memref<6080xi8> to memref<4xf32>
// ROUNDTRIP: call @stepc_cuda_arena

// -----

// Tests that the GEMM interface's declarations and calls are renamed to the CUDA ones, that
// a runtime function outside the GEMM interface keeps its name, and that without an arena or a
// copy neither stepc_cuda_arena nor stepc_cuda_copy is declared.
module {
  func.func private @stepc_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func private @stepc_batch_matmul_bf16(memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func private @stepc_softmax_f32(memref<?xf32>)
  func.func @gemms_to_cuda(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>, %b: memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>, %c: memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, %d: memref<?xf32>) {
    %c0_i64 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    call @stepc_matmul_f32(%a, %a, %a, %c0_i64, %c1_i64, %c0_i64) : (memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) -> ()
    call @stepc_batch_matmul_bf16(%b, %b, %c, %c0_i64, %c0_i64, %c0_i64) : (memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64, i64) -> ()
    call @stepc_softmax_f32(%d) : (memref<?xf32>) -> ()
    return
  }
}
// CHECK-NOT: @stepc_cuda_arena
// CHECK-NOT: @stepc_cuda_copy
// CHECK: func.func private @stepc_cuda_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, {{.*}} attributes {llvm.emit_c_interface}
// CHECK: func.func private @stepc_cuda_batch_matmul_bf16(memref<?x?x?xbf16, strided<[?, ?, ?], offset: ?>>, {{.*}} attributes {llvm.emit_c_interface}
// CHECK: func.func private @stepc_softmax_f32(memref<?xf32>)
// CHECK-LABEL: func.func @gemms_to_cuda
// CHECK: call @stepc_cuda_matmul_f32(%arg0, %arg0, %arg0, %c0_i64, %c1_i64, %c0_i64)
// CHECK: call @stepc_cuda_batch_matmul_bf16(%arg1, %arg1, %arg2, %c0_i64, %c0_i64, %c0_i64)
// CHECK: call @stepc_softmax_f32(%arg3)
// ROUNDTRIP: call @stepc_cuda_matmul_f32

// -----

// Tests that a data-parallel step's all-reduce goes to NCCL's implementation
// (stepc_cuda_all_reduce_sum_f32, runtime/hal/cuda/Nccl.h) with its arguments unchanged.
module {
  func.func private @stepc_all_reduce_sum_f32(memref<*xf32>, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
  func.func @all_reduce_to_nccl(%g: memref<*xf32>, %s: memref<*xf32>) {
    %c3_i64 = arith.constant 3 : i64
    call @stepc_all_reduce_sum_f32(%g, %s, %c3_i64) : (memref<*xf32>, memref<*xf32>, i64) -> ()
    return
  }
}
// CHECK: func.func private @stepc_cuda_all_reduce_sum_f32(memref<*xf32>, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @all_reduce_to_nccl
// CHECK-NOT: @stepc_all_reduce_sum_f32
// CHECK: call @stepc_cuda_all_reduce_sum_f32(%arg0, %arg1, %c3_i64)
// ROUNDTRIP: call @stepc_cuda_all_reduce_sum_f32

// -----

// Tests that --shard-optimizer's reduce-scatter, its wait and the all-gather go to NCCL's
// implementations (runtime/hal/cuda/Nccl.h) with their arguments unchanged.
module {
  func.func private @stepc_reduce_scatter_start_f32(memref<*xf32>, memref<*xf32>, i64, i64, i64) attributes {llvm.emit_c_interface}
  func.func private @stepc_all_reduce_wait_f32(memref<*xf32>, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
  func.func private @stepc_all_gather_f32(memref<*xf32>, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
  func.func @zero_one_to_nccl(%g: memref<*xf32>, %s: memref<*xf32>, %p: memref<*xf32>) {
    %c0_i64 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    call @stepc_reduce_scatter_start_f32(%g, %s, %c0_i64, %c64_i64, %c1_i64) : (memref<*xf32>, memref<*xf32>, i64, i64, i64) -> ()
    call @stepc_all_reduce_wait_f32(%s, %s, %c1_i64) : (memref<*xf32>, memref<*xf32>, i64) -> ()
    call @stepc_all_gather_f32(%s, %p, %c1_i64) : (memref<*xf32>, memref<*xf32>, i64) -> ()
    return
  }
}
// CHECK-LABEL: func.func @zero_one_to_nccl
// CHECK-NOT: call @stepc_reduce_scatter_start_f32
// CHECK: call @stepc_cuda_reduce_scatter_start_f32(%arg0, %arg1, %c0_i64, %c64_i64, %c1_i64)
// CHECK-NEXT: call @stepc_cuda_all_reduce_wait_f32(%arg1, %arg1, %c1_i64)
// CHECK-NEXT: call @stepc_cuda_all_gather_f32(%arg1, %arg2, %c1_i64)
// ROUNDTRIP-LABEL: func.func @zero_one_to_nccl
// ROUNDTRIP: call @stepc_cuda_reduce_scatter_start_f32

// -----

// Tests that the profile calls around a launch are erased, the launch and declarations kept.
module attributes {gpu.container_module} {
  func.func private @stepc_profile_exit(i64)
  func.func private @stepc_profile_enter(i64)
  gpu.module @stepc_kernels {
    gpu.func @kernel_0_fill(%v: f32, %out: memref<8xf32>) kernel { gpu.return }
  }
  func.func @profile_calls_dropped(%out: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c2_i64 = arith.constant 2 : i64
    %cst = arith.constant 0.0 : f32
    call @stepc_profile_enter(%c2_i64) : (i64) -> ()
    gpu.launch_func @stepc_kernels::@kernel_0_fill blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%cst : f32, %out : memref<8xf32>)
    call @stepc_profile_exit(%c2_i64) : (i64) -> ()
    return
  }
}
// CHECK: func.func private @stepc_profile_exit(i64)
// CHECK-NEXT: func.func private @stepc_profile_enter(i64)
// CHECK-LABEL: func.func @profile_calls_dropped
// CHECK-NOT: call @stepc_profile_
// CHECK: gpu.launch_func @stepc_kernels::@kernel_0_fill blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%cst : f32, %arg0 : memref<8xf32>)
// CHECK-NOT: call @stepc_profile_
// CHECK: return

// -----

// Tests that host-side contiguous copies become stepc_cuda_copy(dst, src, bytes) on the buffers'
// aligned pointers plus their offsets in bytes (4 for f32, 2 for bf16), with the function
// declared once, while a copy inside a kernel is left alone.
module attributes {gpu.container_module} {
  gpu.module @stepc_kernels {
    gpu.func @kernel_0_copy(%a: memref<4xf32>, %b: memref<4xf32>) kernel {
      memref.copy %a, %b : memref<4xf32> to memref<4xf32>
      gpu.return
    }
  }
  func.func @copies_to_device_copies(%src: memref<2x16xf32>, %dst: memref<4x2x16xf32>, %i: index, %h: memref<8xbf16>, %g: memref<8xbf16>, %a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %sub = memref.subview %dst[%i, 0, 0] [1, 2, 16] [1, 1, 1] : memref<4x2x16xf32> to memref<2x16xf32, strided<[16, 1], offset: ?>>
    memref.copy %src, %sub : memref<2x16xf32> to memref<2x16xf32, strided<[16, 1], offset: ?>>
    memref.copy %h, %g : memref<8xbf16> to memref<8xbf16>
    gpu.launch_func @stepc_kernels::@kernel_0_copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>, %a : memref<4xf32>)
    return
  }
}
// CHECK: func.func private @stepc_cuda_copy(i64, i64, i64)
// CHECK-NOT: func.func private @stepc_cuda_copy
// CHECK: gpu.func @kernel_0_copy
// CHECK-NEXT: memref.copy %arg0, %arg1 : memref<4xf32> to memref<4xf32>
// CHECK-LABEL: func.func @copies_to_device_copies
// CHECK: %[[SUB:.+]] = memref.subview %arg1
// CHECK: %[[BYTES:.+]] = arith.constant 128 : i64
// CHECK: %[[DPTR:.+]] = memref.extract_aligned_pointer_as_index %[[SUB]]
// CHECK: %{{[^,]+}}, %[[DOFF:[^,]+]], %{{.+}} = memref.extract_strided_metadata %[[SUB]]
// CHECK: %[[C4:.+]] = arith.constant 4 : index
// CHECK: %[[DOFFB:.+]] = arith.muli %[[DOFF]], %[[C4]] : index
// CHECK: %[[DADDR:.+]] = arith.addi %[[DPTR]], %[[DOFFB]] : index
// CHECK: %[[DST:.+]] = arith.index_cast %[[DADDR]] : index to i64
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[SRC:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK: call @stepc_cuda_copy(%[[DST]], %[[SRC]], %[[BYTES]]) : (i64, i64, i64) -> ()
// CHECK: %[[BYTES16:.+]] = arith.constant 16 : i64
// CHECK: memref.extract_aligned_pointer_as_index %arg4
// CHECK: arith.constant 2 : index
// CHECK: call @stepc_cuda_copy(%{{.+}}, %{{.+}}, %[[BYTES16]])
// CHECK-NOT: memref.copy
// CHECK: gpu.launch_func @stepc_kernels::@kernel_0_copy
// ROUNDTRIP: call @stepc_cuda_copy

// The MLP's real gpu-stage plan (RUN lines 3-4): no arena global, get_global or profile call
// left; the arena, of the same size, comes from the runtime; the GEMMs are the CUDA ones.
// MLP-NOT: memref.global
// MLP: func.func private @stepc_cuda_arena(i64) -> memref<[[SIZE:[0-9]+]]xi8> attributes {llvm.emit_c_interface}
// MLP-LABEL: func.func @train_step
// MLP-NOT: memref.get_global
// MLP: %[[N:.+]] = arith.constant [[SIZE]] : i64
// MLP-NEXT: %{{.+}} = call @stepc_cuda_arena(%[[N]]) : (i64) -> memref<[[SIZE]]xi8>
// MLP-NOT: call @stepc_profile_
// MLP: call @stepc_cuda_matmul_f32(
// MLP-NOT: call @stepc_matmul_f32(
// MLP-NOT: call @stepc_profile_
// MLP-LABEL: func.func @eval_loss
// MLP-NOT: memref.get_global
// MLP: call @stepc_cuda_arena(
// MLP-NOT: call @stepc_profile_
