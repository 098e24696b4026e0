// Tests --step-update-in-place: @train_step's new param and state are tied to the arguments
// they replace (materialize_in_destination), the kernel computing each gets a tensor.empty of
// its own (so --eliminate-empty-tensors can make the argument its output), a zero fill shared
// by two GEMMs becomes one fill per GEMM, and the description no longer binds the param and
// state results. The second run goes on through bufferization: the updates are written straight
// into the argument buffers and only the loss is left as a result.
//
// RUN: %stepc-opt %s --step-update-in-place | FileCheck %s
// RUN: %stepc-opt %s --step-update-in-place --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --drop-equivalent-buffer-results --canonicalize | FileCheck %s --check-prefix=BUF

// First, the module's description: its train entry keeps its three arguments and only the loss result.
// CHECK: module attributes {step.program = "{{.*}}\22train\22:{\22symbol\22:\22stepc_train_step\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0},{\22kind\22:\22state\22,\22index\22:0},{\22kind\22:\22batch\22,\22index\22:0}],\22results\22:[{\22kind\22:\22metric\22,\22metric\22:\22loss\22}]}
// CHECK-LABEL: func.func @train_step
// Two fills of zeros, one per GEMM (each placed before its user; here both come first).
// CHECK: %[[F1:.+]] = linalg.fill
// CHECK-NEXT: %[[F2:.+]] = linalg.fill
// CHECK-NEXT: linalg.matmul {{.*}}outs(%[[F2]]
// CHECK-NEXT: linalg.matmul {{.*}}outs(%[[F1]]
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[M:.+]] = linalg.generic {{.*}}outs(%[[E1]]
// CHECK: %[[E2:.+]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[W:.+]] = linalg.generic {{.*}}outs(%[[E2]]
// CHECK: %[[TW:.+]] = bufferization.materialize_in_destination %[[W]] in %arg0
// CHECK: %[[TM:.+]] = bufferization.materialize_in_destination %[[M]] in %arg1
// CHECK: return %[[TW]], %[[TM]], %{{.+}} :

// BUF-LABEL: func.func @train_step(%arg0: memref<4xf32>{{.*}}, %arg1: memref<4xf32>{{.*}}, %arg2: memref<4x4xf32>{{.*}}) -> (memref<f32>
// BUF-NOT: memref.copy
// The state update writes into %arg1, the param update into %arg0.
// BUF: linalg.generic {{.*}} ins(%arg1, {{.*}}) outs(%arg1 : memref<4xf32>)
// BUF: linalg.generic {{.*}} ins(%arg0, {{.*}}) outs(%arg0 : memref<4xf32>)
// BUF-NOT: memref.copy
// BUF: return %{{.+}} : memref<f32>

#id = affine_map<(d0) -> (d0)>
#red = affine_map<(d0) -> ()>
module attributes {step.program = "{\22name\22:\22toy\22,\22fingerprint\22:\22toy-0\22,\22target\22:\22\22,\22defaultSteps\22:0,\22flopsPerStep\22:0,\22plannedBytes\22:0,\22kernelCount\22:0,\22extraMetrics\22:[],\22params\22:[{\22name\22:\22w\22,\22shape\22:[4],\22dtype\22:\22F32\22,\22stackedDims\22:0,\22init\22:{\22kind\22:\22zeros\22,\22value\22:0,\22mean\22:0,\22std\22:1,\22a\22:0,\22b\22:1,\22gain\22:1}}],\22state\22:[{\22slot\22:\22m\22,\22param\22:\22w\22,\22shape\22:[4],\22dtype\22:\22F32\22}],\22inputs\22:[{\22name\22:\22data\22,\22source\22:\22classification\22,\22shape\22:[4,4],\22dtype\22:\22F32\22,\22classes\22:2}],\22train\22:{\22symbol\22:\22stepc_train_step\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0},{\22kind\22:\22state\22,\22index\22:0},{\22kind\22:\22batch\22,\22index\22:0}],\22results\22:[{\22kind\22:\22param\22,\22index\22:0},{\22kind\22:\22state\22,\22index\22:0},{\22kind\22:\22metric\22,\22metric\22:\22loss\22}]},\22eval\22:{\22symbol\22:\22stepc_eval_loss\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0},{\22kind\22:\22batch\22,\22index\22:0}],\22results\22:[{\22kind\22:\22metric\22,\22metric\22:\22loss\22}]}}"} {
  func.func @train_step(%w: tensor<4xf32> {step.name = "w", step.role = "param"},
                        %m: tensor<4xf32> {step.name = "w", step.role = "state", step.slot = "m"},
                        %x: tensor<4x4xf32> {step.name = "data", step.role = "input", step.index = 0 : i64})
      -> (tensor<4xf32> {step.name = "w", step.role = "param"},
          tensor<4xf32> {step.name = "w", step.role = "state", step.slot = "m"},
          tensor<f32> {step.name = "loss", step.role = "metric"}) {
    %zero = arith.constant 0.0 : f32
    %e44 = tensor.empty() : tensor<4x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e44 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %a = linalg.matmul ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
    %b = linalg.matmul ins(%a, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
    %g = tensor.extract_slice %b[0, 0] [1, 4] [1, 1] : tensor<4x4xf32> to tensor<4xf32>
    %e = tensor.empty() : tensor<4xf32>
    %m2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%m, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %w2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%w, %m2 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %s = arith.subf %p, %q : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %e0 = tensor.empty() : tensor<f32>
    %l0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction"]}
        ins(%g : tensor<4xf32>) outs(%l0 : tensor<f32>) {
    ^bb0(%p: f32, %o: f32):
      %s = arith.addf %p, %o : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %w2, %m2, %loss : tensor<4xf32>, tensor<4xf32>, tensor<f32>
  }
}
