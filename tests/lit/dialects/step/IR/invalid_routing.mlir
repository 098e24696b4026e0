// Errors of the mixture-of-experts ops (top_k, route_tokens, route_experts, gather_rows): each
// case checks which error is reported and where.
//
// RUN: %stepc-opt %s -split-input-file -verify-diagnostics

// Tests that top_k refuses k beyond the last dimension.
func.func @top_k_too_many(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{k = 4 exceeds the last dimension's size 3}}
  %v, %i = step.top_k %x {k = 4} : tensor<4x3xf32>
  return
}

// -----

// Tests that route_tokens refuses more choices per token than there are experts.
func.func @route_tokens_k_over_experts(%e: tensor<8x3xi32>) {
  // expected-error @+1 {{each token chooses k = 3 experts but there are only 2}}
  %c, %s = step.route_tokens %e {num_experts = 2} : tensor<8x3xi32>
  return
}

// -----

// Tests that route_tokens refuses a capacity factor that is not positive.
func.func @route_tokens_zero_capacity(%e: tensor<8x2xi32>) {
  // expected-error @+1 {{expected a capacity_factor in (0, 1e6], found 0.000000e+00}}
  %c, %s = step.route_tokens %e {num_experts = 4, capacity_factor = 0.0} : tensor<8x2xi32>
  return
}

// -----

// Tests that route_tokens wants the experts as [T, k].
func.func @route_tokens_rank(%e: tensor<8xi32>) {
  // expected-error @+1 {{expected experts of shape [T, k], found [8]}}
  %c, %s = step.route_tokens %e {num_experts = 4} : tensor<8xi32>
  return
}

// -----

// Tests that route_experts wants the router's scores in f32.
func.func @route_experts_bf16(%p: tensor<8x4xbf16>) {
  // expected-error @+1 {{'step.route_experts' op operand #0 must be tensor of 32-bit float values}}
  %c, %s, %e = step.route_experts %p {k = 1} : tensor<8x4xbf16>
  return
}

// -----

// Tests that route_experts refuses more experts per token than there are.
func.func @route_experts_k_over_experts(%p: tensor<8x2xf32>) {
  // expected-error @+1 {{each token takes k = 3 experts but there are only 2}}
  %c, %s, %e = step.route_experts %p {k = 3} : tensor<8x2xf32>
  return
}

// -----

// Tests that gather_rows wants an inverse of N · group elements.
func.func @gather_rows_inverse_size(%x: tensor<6x3xf32>, %ids: tensor<4x2xi32>, %inv: tensor<6x1xi32>) {
  // expected-error @+1 {{expected an inverse of N · group = 6 · 2 = 12 elements, found [6, 1]}}
  %y = step.gather_rows %x, %ids, %inv {group = 2} : tensor<6x3xf32>, tensor<4x2xi32>, tensor<6x1xi32>
  return
}

// -----

// Tests that gather_rows wants a rank-2 source.
func.func @gather_rows_source_rank(%x: tensor<2x3x4xf32>, %ids: tensor<4xi32>, %inv: tensor<2xi32>) {
  // expected-error @+1 {{expected a rank-2 source [N, D], found [2, 3, 4]}}
  %y = step.gather_rows %x, %ids, %inv : tensor<2x3x4xf32>, tensor<4xi32>, tensor<2xi32>
  return
}
