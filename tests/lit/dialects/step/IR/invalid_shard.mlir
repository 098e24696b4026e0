// Errors of --shard-optimizer's ops (rank_shard, all_gather): each case checks which error is
// reported and where.
//
// RUN: %stepc-opt %s -split-input-file -verify-diagnostics

// Tests that rank_shard refuses a first axis its parts do not divide.
func.func @shard_uneven(%x: tensor<6x3xf32>) {
  // expected-error @+1 {{expected a first axis that parts = 4 divides, found shape [6, 3]}}
  %b = step.rank_shard %x {parts = 4} : tensor<6x3xf32>
  return
}

// -----

// Tests that rank_shard refuses a scalar (it has no rows).
func.func @shard_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{expected a first axis that parts = 2 divides, found shape []}}
  %b = step.rank_shard %x {parts = 2} : tensor<f32>
  return
}

// -----

// Tests that all_gather refuses zero parts.
func.func @gather_zero(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'parts'}}
  %g = step.all_gather %x {parts = 0} : tensor<2x3xf32>
  return
}

// -----

// Tests that the gathered type is checked against the inferred one.
func.func @gather_wrong_type(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %g = step.all_gather %x {parts = 2} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}
