// Tests --step-dispatch-parallel-kernels: on the LLVM dialect, each range kernel gets a task
// `@k_task(argv, lo, hi)` that loads its arguments from argv and calls it, and each call of
// the kernel stores its arguments into an array (allocated once, in the caller's entry block)
// and calls stepc_parallel_for(@k_task, argv, lo, hi) instead.
//
// RUN: %stepc-opt %inputs/kernels_to_tile.mlir --step-tile-kernels --step-parallelize-kernels \
// RUN:   --convert-linalg-to-loops --expand-strided-metadata --lower-affine --convert-scf-to-cf \
// RUN:   --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm \
// RUN:   --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   --step-dispatch-parallel-kernels | FileCheck %s

// CHECK: llvm.func @stepc_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)
// kernel_0's 2 memrefs expand to 10 values (2 pointers, offset, size and stride each ...).
// CHECK: llvm.func internal @kernel_0_generic_task(%[[ARGV:.+]]: !llvm.ptr, %[[LO:.+]]: i64, %[[HI:.+]]: i64)
// CHECK: llvm.getelementptr %[[ARGV]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.load %{{.+}} : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.getelementptr %[[ARGV]][9] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.load %{{.+}} : !llvm.ptr -> i64
// CHECK: llvm.call @kernel_0_generic({{.*}}, %[[LO]], %[[HI]])
// CHECK-LABEL: llvm.func @host(
// One argument array per call site, at the top of the entry block.
// CHECK-COUNT-3: llvm.alloca
// CHECK-NOT: llvm.call @kernel_
// CHECK: %[[T0:.+]] = llvm.mlir.addressof @kernel_0_generic_task : !llvm.ptr
// CHECK: llvm.call @stepc_parallel_for(%[[T0]], %{{.+}}, %{{.+}}, %{{.+}}) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
// CHECK: %[[T1:.+]] = llvm.mlir.addressof @kernel_1_generic_task : !llvm.ptr
// CHECK: llvm.call @stepc_parallel_for(%[[T1]],
// CHECK-NOT: llvm.call @kernel_
// CHECK: llvm.return
