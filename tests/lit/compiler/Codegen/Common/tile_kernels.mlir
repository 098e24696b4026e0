// Tests --step-tile-kernels: a kernel's leading parallel dimensions become an scf.forall of
// static tiles (about target-tiles of them); kernels below min-work, kernels whose first loop
// is a reduction and functions that are not kernels stay as they are. A smaller min-work
// splits the 4x4 kernel too.
//
// RUN: %stepc-opt %inputs/kernels_to_tile.mlir --step-tile-kernels | FileCheck %s
// RUN: %stepc-opt %inputs/kernels_to_tile.mlir --step-tile-kernels="min-work=16 target-tiles=2" | FileCheck %s --check-prefix=SMALL
//
// The GPU's tiling (GpuTargets.h): target-tiles is a floor (at-least: 7 x 64 x 96 for 200
// tiles takes chunks of 2, 224 tiles, where the CPU's rounding up gave 56), bounded by
// min-tile-work iterations per tile (for 1024 per tile, at most 42 of the 43008: 7 x 8).
// RUN: %stepc-opt %inputs/kernels_to_tile.mlir --step-tile-kernels="target-tiles=200 min-tile-work=256 at-least" | FileCheck %s --check-prefix=GPU
// RUN: %stepc-opt %inputs/kernels_to_tile.mlir --step-tile-kernels="target-tiles=4096 min-tile-work=1024 at-least" | FileCheck %s --check-prefix=BOUND
// GPU-LABEL: func.func private @kernel_0_generic
// GPU: scf.forall (%{{.+}}) in (64) {
// GPU-LABEL: func.func private @kernel_1_generic
// GPU: scf.forall (%{{.+}}, %{{.+}}) in (7, 32) {
// GPU: memref.subview %arg0[{{.+}}] [1, 2, 96] [1, 1, 1]
// BOUND-LABEL: func.func private @kernel_1_generic
// BOUND: scf.forall (%{{.+}}, %{{.+}}) in (7, 8) {

// Row sums: one row per iteration, the whole reduction inside.
// CHECK-LABEL: func.func private @kernel_0_generic
// CHECK: scf.forall (%[[R:.+]]) in (64) {
// CHECK: memref.subview %arg0[%[[R]], 0] [1, 1024] [1, 1]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// 7 x 64 x 96: tile size 1 over the 7, then chunks of 8 (a divisor of 64): 56 tiles.
// CHECK-LABEL: func.func private @kernel_1_generic
// CHECK: scf.forall (%{{.+}}, %{{.+}}) in (7, 8) {
// CHECK: memref.subview %arg0[{{.+}}] [1, 8, 96] [1, 1, 1]
// CHECK-LABEL: func.func private @kernel_2_generic
// CHECK-NOT: scf.forall
// CHECK-LABEL: func.func private @kernel_3_generic
// CHECK-NOT: scf.forall
// CHECK-LABEL: func.func private @kernel_4_generic
// CHECK-NOT: scf.forall
// CHECK-LABEL: func.func private @kernel_5_generic
// CHECK-NOT: scf.forall
// CHECK-LABEL: func.func @host
// CHECK-NOT: scf.forall

// SMALL-LABEL: func.func private @kernel_2_generic
// SMALL: scf.forall (%{{.+}}) in (2) {
// SMALL: memref.subview %arg0[{{.+}}, 0] [2, 4] [1, 1]
