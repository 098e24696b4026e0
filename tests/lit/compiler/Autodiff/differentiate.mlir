// RUN: %stepc-opt %s -split-input-file --step-differentiate | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-differentiate | %stepc-opt -split-input-file | FileCheck %s

// Tests that a broadcast operand's gradient is summed back to its shape and that fan-out
// accumulates: %x is used twice.
// CHECK-LABEL: func.func @broadcast_and_fanout
// CHECK-SAME: -> (tensor<f32>, tensor<4x3xf32>, tensor<3xf32>)
// CHECK: step.broadcast
// CHECK-DAG: %[[DB:.+]] = step.sum %{{.+}} {axes = [0]} : tensor<4x3xf32> -> tensor<3xf32>
// CHECK-DAG: %[[DX:.+]] = step.add %{{.+}}, %{{.+}} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %{{.+}}, %[[DX]], %[[DB]]
func.func @broadcast_and_fanout(%x: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<f32> attributes {step.differentiate} {
  %0 = step.add %x, %b : tensor<4x3xf32>, tensor<3xf32>
  %1 = step.mul %0, %x : tensor<4x3xf32>, tensor<4x3xf32>
  %2 = step.sum %1 {axes = [0, 1]} : tensor<4x3xf32>
  return %2 : tensor<f32>
}

// -----

// Tests that integer operands get no gradient and that an embedding's gradient is a
// scatter-add into the table.
// CHECK-LABEL: func.func @embedding_table_only
// CHECK-SAME: -> (tensor<f32>, tensor<5x2xf32>)
// CHECK: step.embedding_grad %{{.+}}, %arg1 {vocab = 5 : i64} : tensor<3x2xf32>, tensor<3xi32> -> tensor<5x2xf32>
func.func @embedding_table_only(%table: tensor<5x2xf32>, %ids: tensor<3xi32>) -> tensor<f32> attributes {step.differentiate} {
  %0 = step.embedding %table, %ids : tensor<5x2xf32>, tensor<3xi32>
  %1 = step.sum %0 {axes = [0, 1]} : tensor<3x2xf32>
  return %1 : tensor<f32>
}

// -----

// Tests that gradients nobody needs are pruned: %unused does not reach the loss and gets a
// zero constant, and no backward matmul is built for a value that does not depend on an
// argument (the constant's would be a matmul with transpose_rhs).
// CHECK-LABEL: func.func @pruned
// CHECK-NOT: transpose_rhs
// CHECK: %[[Z:.+]] = step.constant {value = dense<0.000000e+00> : tensor<2xf32>}
// CHECK: return %{{.+}}, %{{.+}}, %[[Z]]
func.func @pruned(%w: tensor<2x2xf32>, %unused: tensor<2xf32>) -> tensor<f32> attributes {step.differentiate} {
  %c = step.constant {value = dense<1.0> : tensor<3x2xf32>}
  %0 = step.matmul %c, %w : tensor<3x2xf32>, tensor<2x2xf32>
  %1 = step.sum %0 {axes = [0, 1]} : tensor<3x2xf32>
  return %1 : tensor<f32>
}

// -----

// Tests that a repeat's backward is one reverse repeat over the saved per-layer inputs, the
// saved matmul outputs and the stacked weights, yielding stacked weight gradients (the IR does
// not grow with depth). The forward stacks each layer's input and its matmul's output; the
// backward recomputes the tanh from the saved output, not the matmul (a 128-long reduction is
// worth saving; the next test's 4-long one is not).
// CHECK-LABEL: func.func @repeat_scan
// CHECK: %[[FWD:.+]]:3 = step.repeat "layer" 3 (%{{.+}} = %arg0 : tensor<2x128xf32>) over (%{{.+}} = %arg1 : tensor<3x128x128xf32>)
// CHECK: %[[MM:.+]] = step.matmul
// CHECK: step.yield %{{.+}}, %{{.+}}, %[[MM]] :
// CHECK: %[[BWD:.+]]:2 = step.repeat "layer_grad" 3 (%{{.+}} = %{{.+}} : tensor<2x128xf32>) over (%{{.+}} = %[[FWD]]#1 : tensor<3x2x128xf32>, %[[SAVED:.+]] = %[[FWD]]#2 : tensor<3x2x128xf32>, %{{.+}} = %arg1 : tensor<3x128x128xf32>) reverse
// CHECK-NEXT: step.tanh %[[SAVED]]
// Only the two backward matmuls (grad input, grad weight) remain.
// CHECK-NOT: step.matmul %{{[^,]+}}, %{{[^ ]+}} :
// CHECK: step.matmul {{.*}}{transpose_rhs}
// CHECK: step.matmul {{.*}}{transpose_lhs}
// CHECK: step.yield %{{.+}}, %{{.+}} : tensor<2x128xf32>, tensor<128x128xf32>
// CHECK: return %{{.+}}, %[[BWD]]#0, %[[BWD]]#1 : tensor<f32>, tensor<2x128xf32>, tensor<3x128x128xf32>
func.func @repeat_scan(%x: tensor<2x128xf32>, %ws: tensor<3x128x128xf32>) -> tensor<f32> attributes {step.differentiate} {
  %h = step.repeat "layer" 3 (%a = %x : tensor<2x128xf32>) over (%w = %ws : tensor<3x128x128xf32>) {
    %0 = step.matmul %a, %w : tensor<2x128xf32>, tensor<128x128xf32>
    %1 = step.tanh %0 : tensor<2x128xf32>
    step.yield %1 : tensor<2x128xf32>
  }
  %s = step.sum %h {axes = [0, 1]} : tensor<2x128xf32>
  return %s : tensor<f32>
}

// -----

// Tests that a matmul with a short reduction (4) is recomputed rather than saved: the forward
// stacks only the layer input, and the backward redoes the matmul.
// CHECK-LABEL: func.func @repeat_short_reduction
// CHECK: %[[FWD:.+]]:2 = step.repeat "layer" 3
// CHECK: step.repeat "layer_grad" 3 (%{{.+}} = %{{.+}} : tensor<2x4xf32>) over (%[[IN:.+]] = %[[FWD]]#1 : tensor<3x2x4xf32>, %[[W:.+]] = %arg1 : tensor<3x4x4xf32>) reverse
// CHECK-NEXT: step.matmul %[[IN]], %[[W]] :
func.func @repeat_short_reduction(%x: tensor<2x4xf32>, %ws: tensor<3x4x4xf32>) -> tensor<f32> attributes {step.differentiate} {
  %h = step.repeat "layer" 3 (%a = %x : tensor<2x4xf32>) over (%w = %ws : tensor<3x4x4xf32>) {
    %0 = step.matmul %a, %w : tensor<2x4xf32>, tensor<4x4xf32>
    %1 = step.tanh %0 : tensor<2x4xf32>
    step.yield %1 : tensor<2x4xf32>
  }
  %s = step.sum %h {axes = [0, 1]} : tensor<2x4xf32>
  return %s : tensor<f32>
}

// -----

// Tests that a data-only path through a repeat is not differentiated: the `over` input %d (a
// constant, so nothing to differentiate) feeds exp() inside the layer, and the backward repeat
// yields only the carried adjoint, no stacked gradient for %d.
// CHECK-LABEL: func.func @repeat_data_path
// CHECK: step.repeat "layer_grad" 2 (%{{.+}} = %{{.+}} : tensor<3xf32>) over (%{{.+}} = %{{.+}} : tensor<2x3xf32>, %{{.+}} = %{{.+}} : tensor<2x3xf32>) reverse
// CHECK: step.yield %{{[0-9]+}} : tensor<3xf32>{{$}}
// CHECK-NEXT: }
func.func @repeat_data_path(%w: tensor<3xf32>) -> tensor<f32> attributes {step.differentiate} {
  %d = step.constant {value = dense<0.5> : tensor<2x3xf32>}
  %h = step.repeat "layer" 2 (%c = %w : tensor<3xf32>) over (%x = %d : tensor<2x3xf32>) {
    %e = step.exp %x : tensor<3xf32>
    %m = step.mul %c, %e : tensor<3xf32>, tensor<3xf32>
    step.yield %m : tensor<3xf32>
  }
  %s = step.sum %h {axes = [0]} : tensor<3xf32>
  return %s : tensor<f32>
}
