// Tests --step-outline-kernels: every bufferized linalg op of a step function moves into a
// private function @kernel_N_<op> (step.kernel, noinline, internal linkage) called in its
// place; constants its body uses are cloned in, other captured values become arguments; the
// number of kernel calls goes into `step.kernels` and the description's kernelCount.
//
// RUN: %stepc-opt %s -split-input-file --step-outline-kernels -verify-diagnostics | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-outline-kernels -verify-diagnostics --mlir-print-local-scope | FileCheck %s --check-prefix=DEDUP
//
// The two mulf kernels below are structurally identical (same body, same buffer types) and
// share one function (also checked without any flag in outline_kernels_dedup.mlir).

// CHECK: module attributes {step.kernels = {calls = 3 : i64, distinct = {{[0-9]+}} : i64}, step.program = "{{.*}}\22kernelCount\22:3,
// Already-kernel and external functions are not touched.
// CHECK: func.func private @external(memref<4xf32>)
// CHECK: func.func private @kernel_old(%{{.+}}: memref<4xf32>) attributes {step.kernel}
// CHECK-NEXT: arith.constant
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: return
// Kernels are inserted before their host. The first kernel: the constant 2.0 it uses is cloned in, the buffers are its arguments.
// CHECK: func.func private @kernel_0_generic(%[[IN:.+]]: memref<4xf32>, %[[OUT:.+]]: memref<4xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"], step.kernel} {
// CHECK-NEXT: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[IN]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK: arith.mulf %{{.+}}, %[[TWO]] : f32
// CHECK: return
// The addf kernel captures a non-constant scalar, which becomes a third argument.
// CHECK: func.func private @kernel_{{[0-9]+}}_generic(%[[X:.+]]: memref<4xf32>, %[[Y:.+]]: memref<4xf32>, %[[S:.+]]: f32) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"], step.kernel} {
// CHECK-NOT: arith.constant
// CHECK: arith.addf %{{.+}}, %[[S]] : f32
// The host keeps only calls, in the original order around the existing call; every kernel
// call is bracketed by stepc_profile_enter/exit with its kernel's profile id.
// CHECK: func.func @train_step(%[[A:.+]]: memref<4xf32>, %[[B:.+]]: memref<4xf32>, %[[C:.+]]: memref<4xf32>, %[[SS:.+]]: f32)
// CHECK-NOT: linalg.
// CHECK: %[[ID0:.+]] = arith.constant 0 : i64
// CHECK-NEXT: call @stepc_profile_enter(%[[ID0]])
// CHECK-NEXT: call @kernel_0_generic(%[[A]], %[[B]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT: call @stepc_profile_exit(%[[ID0]])
// CHECK-NEXT: call @external(%[[B]])
// CHECK: call @kernel_{{[0-9]+}}_generic(%[[C]], %[[A]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK: call @kernel_{{[0-9]+}}_generic(%[[A]], %[[C]], %[[SS]]) : (memref<4xf32>, memref<4xf32>, f32) -> ()
// CHECK-NEXT: call @stepc_profile_exit
// CHECK-NEXT: return

// With sharing: two distinct kernels for three calls, both mulf calls go to kernel 0.
// DEDUP: module attributes {step.kernels = {calls = 3 : i64, distinct = 2 : i64}
// DEDUP: func.func private @kernel_0_generic(
// DEDUP: func.func private @kernel_1_generic(%{{.+}}: memref<4xf32>, %{{.+}}: memref<4xf32>, %{{.+}}: f32)
// DEDUP-NOT: func.func private @kernel_2
// DEDUP-LABEL: func.func @train_step(
// DEDUP: call @kernel_0_generic(%arg0, %arg1)
// DEDUP: call @kernel_0_generic(%arg2, %arg0)
// DEDUP: call @kernel_1_generic(%arg0, %arg2, %arg3)
#id = affine_map<(d0) -> (d0)>
module attributes {step.program = "{\22name\22:\22toy\22,\22fingerprint\22:\22toy-0\22,\22target\22:\22\22,\22defaultSteps\22:0,\22flopsPerStep\22:0,\22plannedBytes\22:0,\22kernelCount\22:0,\22extraMetrics\22:[],\22params\22:[],\22state\22:[],\22inputs\22:[],\22train\22:{\22symbol\22:\22stepc_train_step\22,\22args\22:[],\22results\22:[]},\22eval\22:{\22symbol\22:\22stepc_eval_loss\22,\22args\22:[],\22results\22:[]}}"} {
  func.func private @external(memref<4xf32>)
  // Already a kernel: left alone, its linalg op is not outlined again.
  func.func private @kernel_old(%x: memref<4xf32>) attributes {step.kernel} {
    %z = arith.constant 0.0 : f32
    linalg.fill ins(%z : f32) outs(%x : memref<4xf32>)
    return
  }
  func.func @train_step(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>, %s: f32) {
    %two = arith.constant 2.0 : f32
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %two : f32
      linalg.yield %m : f32
    }
    call @external(%b) : (memref<4xf32>) -> ()
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%c : memref<4xf32>) outs(%a : memref<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.mulf %in, %two : f32
      linalg.yield %m : f32
    }
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%c : memref<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.addf %in, %s : f32
      linalg.yield %m : f32
    }
    return
  }
}

// -----

// Tests that a linalg op still on tensors is refused (the pass runs after bufferization).
func.func @train_step(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected a bufferized linalg op (run after one-shot-bufferize)}}
  %r = linalg.copy ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
