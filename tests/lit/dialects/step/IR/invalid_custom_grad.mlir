// RUN: %stepc-opt %s -split-input-file -verify-diagnostics

// Tests that backward takes the inputs and the result adjoints.
func.func @backward_arity(%x: tensor<4xf32>) {
  // expected-error @+3 {{backward takes the 1 inputs and the 1 result adjoints, found 1 arguments}}
  %y = step.custom_grad (%a = %x : tensor<4xf32>) {
    step.yield %a : tensor<4xf32>
  } backward (%dy) {
    step.yield %dy : tensor<4xf32>
  }
  return
}

// -----

// Tests that backward yields one adjoint per input, of the input's type.
func.func @backward_types(%x: tensor<4xf32>) {
  %y = step.custom_grad (%a = %x : tensor<4xf32>) {
    %s = step.sum %a {axes = [0]} : tensor<4xf32>
    step.yield %s : tensor<f32>
  } backward (%a2, %dy) {
    // expected-error @+1 {{the backward region must yield one adjoint per input ('tensor<4xf32>')}}
    step.yield %dy : tensor<f32>
  }
  return
}
