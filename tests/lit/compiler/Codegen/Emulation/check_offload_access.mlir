// Tests --step-check-offload-access: in a plan with offload transfers, every launch, runtime
// call and host copy is preceded by one @stepc_offload_access_<element type>(view, element
// bytes, writes, name) per memref operand: the operand cast to an unranked memref (the runtime
// reads its bytes from the descriptor), writes = 1 for what the command may write (the kernel's
// stored argument, a GEMM's third operand, a copy's target), and the command's name as a
// constant string. The transfer calls themselves are not checked. A plan without transfers is
// unchanged.
//
// RUN: %stepc-opt %s --split-input-file --step-check-offload-access --canonicalize | FileCheck %s

// "kernel @scale in @host", "call of @stepc_matmul_f32 in @host", "host copy in @host":
// CHECK-DAG: memref.global "private" constant @[[C:__stepc_access_[0-9]+]] : memref<19xi8> = dense<[104, 111, 115, 116, 32, 99, 111, 112, 121, 32, 105, 110, 32, 64, 104, 111, 115, 116, 0]>
// CHECK-DAG: memref.global "private" constant @[[G:__stepc_access_[0-9]+]] : memref<35xi8> = dense<[99, 97, 108, 108, 32, 111, 102, 32, 64, 115, 116, 101, 112, 99, 95, 109, 97, 116, 109, 117, 108, 95, 102, 51, 50, 32, 105, 110, 32, 64, 104, 111, 115, 116, 0]>
// CHECK-DAG: memref.global "private" constant @[[K:__stepc_access_[0-9]+]] : memref<23xi8> = dense<[107, 101, 114, 110, 101, 108, 32, 64, 115, 99, 97, 108, 101, 32, 105, 110, 32, 64, 104, 111, 115, 116, 0]>
// CHECK-DAG: func.func private @stepc_offload_access_bf16(memref<*xbf16>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @stepc_offload_access_f32(memref<*xf32>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @host(
// CHECK-SAME: %[[X:[^:]+]]: memref<64xf32>, %[[Y:[^:]+]]: memref<8x16xbf16>, %[[A:[^:]+]]: memref<4x4xf32>, %[[B:[^:]+]]: memref<4x4xf32>, %[[CC:[^:]+]]: memref<4x4xf32>
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : i64
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : i64
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : i64
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : i64
// CHECK: call @stepc_offload_fetch
// CHECK-NOT: stepc_offload_access
// CHECK: %[[V:.+]] = memref.subview %[[Y]][2, 0] [2, 16]
// The kernel reads %x and writes the view of %y (bf16: 2 bytes an element).
// CHECK: %[[KN:.+]] = memref.get_global @[[K]]
// CHECK: %[[KP:.+]] = memref.extract_aligned_pointer_as_index %[[KN]]
// CHECK: %[[KW:.+]] = arith.index_cast %[[KP]] : index to i64
// CHECK: %[[UX:.+]] = memref.cast %[[X]] : memref<64xf32> to memref<*xf32>
// CHECK: call @stepc_offload_access_f32(%[[UX]], %[[C4]], %[[C0]], %[[KW]])
// CHECK: %[[UV:.+]] = memref.cast %[[V]] : memref<2x16xbf16, strided<[16, 1], offset: 32>> to memref<*xbf16>
// CHECK: call @stepc_offload_access_bf16(%[[UV]], %[[C2]], %[[C1]], %[[KW]])
// CHECK: gpu.launch_func @k::@scale
// A GEMM call: operands 0 and 1 read, 2 written (through the casts to unranked).
// CHECK: memref.get_global @[[G]]
// CHECK: %[[UA:.+]] = memref.cast %[[A]]
// CHECK: call @stepc_offload_access_f32(%[[UA]], %[[C4]], %[[C0]],
// CHECK: %[[UB:.+]] = memref.cast %[[B]]
// CHECK: call @stepc_offload_access_f32(%[[UB]], %[[C4]], %[[C0]],
// CHECK: %[[UC:.+]] = memref.cast %[[CC]]
// CHECK: call @stepc_offload_access_f32(%[[UC]], %[[C4]], %[[C1]],
// CHECK: call @stepc_matmul_f32
// CHECK: memref.get_global @[[C]]
// CHECK: call @stepc_offload_access_f32(%{{.+}}, %[[C4]], %[[C0]],
// CHECK: call @stepc_offload_access_f32(%{{.+}}, %[[C4]], %[[C1]],
// CHECK: memref.copy
// CHECK-NOT: call @stepc_offload_access
// CHECK: call @stepc_offload_wait
module attributes {gpu.container_module} {
  func.func private @stepc_offload_fetch(i64, i64, memref<*xf32>) attributes {llvm.emit_c_interface}
  func.func private @stepc_offload_wait(i64, i64)
  func.func private @stepc_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
  func.func @host(%x: memref<64xf32>, %y: memref<8x16xbf16>, %a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %ux = memref.cast %x : memref<64xf32> to memref<*xf32>
    call @stepc_offload_fetch(%c0, %c0, %ux) : (i64, i64, memref<*xf32>) -> ()
    %v = memref.subview %y[2, 0] [2, 16] [1, 1] : memref<8x16xbf16> to memref<2x16xbf16, strided<[16, 1], offset: 32>>
    gpu.launch_func @k::@scale blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%x : memref<64xf32>, %v : memref<2x16xbf16, strided<[16, 1], offset: 32>>)
    %ua = memref.cast %a : memref<4x4xf32> to memref<*xf32>
    %ub = memref.cast %b : memref<4x4xf32> to memref<*xf32>
    %uc = memref.cast %c : memref<4x4xf32> to memref<*xf32>
    call @stepc_matmul_f32(%ua, %ub, %uc) : (memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
    memref.copy %a, %b : memref<4x4xf32> to memref<4x4xf32>
    call @stepc_offload_wait(%c0, %c0) : (i64, i64) -> ()
    return
  }
  gpu.module @k {
    gpu.func @scale(%a: memref<64xf32>, %o: memref<2x16xbf16, strided<[16, 1], offset: 32>>) kernel {
      %t = gpu.thread_id x
      %c16 = arith.constant 16 : index
      %r = arith.divui %t, %c16 : index
      %col = arith.remui %t, %c16 : index
      %v = memref.load %a[%t] : memref<64xf32>
      %w = arith.truncf %v : f32 to bf16
      memref.store %w, %o[%r, %col] : memref<2x16xbf16, strided<[16, 1], offset: 32>>
      gpu.return
    }
  }
}

// -----

// No transfers: nothing inserted.
// CHECK-LABEL: func.func @plain(
// CHECK-NOT: stepc_offload_access
// CHECK: gpu.launch_func
module attributes {gpu.container_module} {
  func.func @plain(%x: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @k::@scale blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%x : memref<64xf32>)
    return
  }
  gpu.module @k {
    gpu.func @scale(%a: memref<64xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %a[%t] : memref<64xf32>
      memref.store %v, %a[%t] : memref<64xf32>
      gpu.return
    }
  }
}
