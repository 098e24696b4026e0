// RUN: %stepc-opt %s -split-input-file --step-differentiate -verify-diagnostics

// Tests that a needed gradient through an op without a gradient rule is a located error.
func.func @strided_slice(%x: tensor<6xf32>) -> tensor<f32> attributes {step.differentiate} {
  // expected-error @+1 {{'step.slice' op has no gradient rule for strides other than 1}}
  %0 = step.slice %x {start = [0], limit = [6], strides = [2]} : tensor<6xf32>
  %1 = step.sum %0 {axes = [0]} : tensor<3xf32>
  return %1 : tensor<f32>
}

// -----

// Tests that the first result must be a scalar loss.
// expected-error @+1 {{step.differentiate needs a rank-0 float first result (the loss)}}
func.func @vector_loss(%x: tensor<6xf32>) -> tensor<6xf32> attributes {step.differentiate} {
  return %x : tensor<6xf32>
}
