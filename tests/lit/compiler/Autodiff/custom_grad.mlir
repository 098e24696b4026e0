// RUN: %stepc-opt %s -split-input-file | %stepc-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: %stepc-opt %s -split-input-file --step-differentiate | FileCheck %s

// Tests that autodiff applies the given backward instead of differentiating the forward: a
// straight-through round (the forward's sign would have zero gradient) passes the adjoint on.
// ROUNDTRIP-LABEL: func.func @straight_through
// ROUNDTRIP: step.custom_grad (%{{.+}} = %arg0 : tensor<4xf32>) {
// ROUNDTRIP: } backward (%{{.+}}, %{{.+}}) {
// CHECK-LABEL: func.func @straight_through
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32>)
// CHECK: } backward
// CHECK: step.yield
// CHECK-NEXT: }
// CHECK-NOT: step.select
// CHECK: %[[DY:.+]] = step.broadcast
// CHECK: %[[DX:.+]] = step.mul %[[DY]], %{{.+}} : tensor<4xf32>, tensor<f32>
// CHECK: return %{{.+}}, %[[DX]]
func.func @straight_through(%x: tensor<4xf32>) -> tensor<f32> attributes {step.differentiate} {
  %y = step.custom_grad (%a = %x : tensor<4xf32>) {
    %zero = step.constant {value = dense<0.0> : tensor<f32>}
    %one = step.constant {value = dense<1.0> : tensor<4xf32>}
    %pos = step.compare %a, %zero {predicate = "gt"} : tensor<4xf32>, tensor<f32>
    %neg = step.neg %one : tensor<4xf32>
    %s = step.select %pos, %one, %neg : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>
    step.yield %s : tensor<4xf32>
  } backward (%a2, %dy) {
    %two = step.constant {value = dense<2.0> : tensor<f32>}
    %d = step.mul %dy, %two : tensor<4xf32>, tensor<f32>
    step.yield %d : tensor<4xf32>
  }
  %s = step.sum %y {axes = [0]} : tensor<4xf32>
  return %s : tensor<f32>
}

// -----

// Tests that a custom gradient inside a model needs no types.
// ROUNDTRIP-LABEL: step.model @custom_in_model
// ROUNDTRIP: step.custom_grad (%{{.+}} = %{{.+}}) {
step.model @custom_in_model {
  %w = step.param "w" [3] f32 = ones
  %y = step.custom_grad (%a = %w) {
    %t = step.tanh %a
    step.yield %t
  } backward (%a2, %dy) {
    step.yield %dy
  }
  %l = step.sum %y {axes = [0]}
  step.loss %l
}
