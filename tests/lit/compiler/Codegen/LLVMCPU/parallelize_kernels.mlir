// Tests --step-parallelize-kernels: a tiled kernel becomes a function of a range [lo, hi) of
// its linearised forall iterations (two index arguments), marked with its iteration count;
// every call passes the whole range. Untiled kernels are unchanged. (--canonicalize only
// gathers the constants.)
//
// RUN: %stepc-opt %inputs/kernels_to_tile.mlir --step-tile-kernels --step-parallelize-kernels --canonicalize | FileCheck %s

// CHECK: func.func private @kernel_0_generic(%arg0: memref<64x1024xf32>, %arg1: memref<64xf32>, %[[LO:.+]]: index, %[[HI:.+]]: index) attributes {step.kernel, step.parallel_tasks = 64 : i64}
// CHECK: scf.for %[[I:.+]] = %[[LO]] to %[[HI]] step %{{.+}} {
// CHECK: memref.subview %arg0[%[[I]], 0] [1, 1024] [1, 1]
// CHECK-NOT: scf.forall
// Two forall dimensions (7, 8): the inner index is i mod 8, the outer i div 8.
// CHECK: func.func private @kernel_1_generic({{.*}}, %[[LO1:.+]]: index, %[[HI1:.+]]: index) attributes {step.kernel, step.parallel_tasks = 56 : i64}
// CHECK: scf.for %[[J:.+]] = %[[LO1]] to %[[HI1]]
// CHECK-DAG: arith.remui %[[J]], %{{.+}} : index
// CHECK-DAG: arith.divui %[[J]], %{{.+}} : index
// CHECK-LABEL: func.func private @kernel_2_generic(%arg0: memref<4x4xf32>, %arg1: memref<4x4xf32>) attributes {step.kernel} {
// CHECK-LABEL: func.func @host
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C56:.+]] = arith.constant 56 : index
// CHECK: call @kernel_0_generic(%arg0, %arg1, %[[C0]], %[[C64]])
// CHECK: call @kernel_1_generic(%arg2, %arg3, %[[C0]], %[[C56]])
// CHECK: call @kernel_0_generic(%arg0, %arg1, %[[C0]], %[[C64]])
