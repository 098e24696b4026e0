// Errors of the data-parallel ops (rank_shard, all_gather, last_micro_batch,
// all_reduce_start, reduce_scatter_start and _wait): each case checks which error is reported
// and where.
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

// -----

// Tests that last_micro_batch refuses a scalar (it has no micro-batch axis).
func.func @last_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{expected a first axis of micro-batches, found shape []}}
  %b = step.last_micro_batch %x : tensor<f32>
  return
}

// -----

// Tests that the reduction's start takes f32 only, as step.all_reduce does.
func.func @start_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{must be tensor of 32-bit float values}}
  %b = step.all_reduce_start %x : tensor<4xi32>
  return
}

// -----

// Tests that a reduce-scatter's owners table is one per row or one for all, 1 elsewhere.
func.func @owners_shape(%x: tensor<4x3xf32>, %o: tensor<4x3xi64>) {
  // expected-error @+1 {{expected owners of the input's rank, 1 along every axis but the first and along the first 1 or the input's 4, found shape [4, 3] for input [4, 3]}}
  %b = step.reduce_scatter_start %x, %o {parts = 2} : tensor<4x3xf32>, tensor<4x3xi64>
  return
}

// -----

// Tests that the reduce-scatter's wait needs rows its parts divide.
func.func @wait_rows(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{expected a first axis that parts = 2 divides, found shape [3, 2]}}
  %b = step.reduce_scatter_wait %x {parts = 2} : tensor<3x2xf32>
  return
}
