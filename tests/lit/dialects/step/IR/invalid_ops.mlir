// Errors of the `step` tensor ops: bad ranks, dtypes, shapes and attributes. Each case checks
// which error is reported (a distinctive part of its message) and where.
//
// RUN: %stepc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

// Tests that neg rejects an operand with a dynamic dimension.
func.func @neg_dynamic_shape(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{expected the operand to be a static-shaped ranked tensor, found 'tensor<?x4xf32>'}}
  %0 = step.neg %x : tensor<?x4xf32>
  return
}

// -----

// Tests that neg rejects an i1 operand (it is numeric, not a mask op).
func.func @neg_mask_operand(%x: tensor<4xi1>) {
  // expected-error @+1 {{'step.neg' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float or 64-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = step.neg %x : tensor<4xi1>
  return
}

// -----

// Tests that abs rejects an unranked operand.
func.func @abs_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{expected the operand to be a static-shaped ranked tensor, found 'tensor<*xf32>'}}
  %0 = step.abs %x : tensor<*xf32>
  return
}

// -----

// Tests that exp needs a float operand.
func.func @exp_integer_operand(%x: tensor<4xi32>) {
  // expected-error @+1 {{'step.exp' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = step.exp %x : tensor<4xi32>
  return
}

// -----

// Tests that log on integer tokens is rejected inside a model, at the op.
step.model @log_of_tokens_in_model {
  %t, %g = step.input "bytes" [2, 4] i32 = token_stream(vocab = 16)
  // expected-error @+1 {{'step.log' op operand #0 must be ranked tensor of 32-bit float}}
  %l = step.log %t
  %s = step.sum %l {axes = [0, 1]}
  step.loss %s
}

// -----

// Tests that sqrt needs a float operand.
func.func @sqrt_integer_operand(%x: tensor<3xi64>) {
  // expected-error @+1 {{'step.sqrt' op operand #0 must be ranked tensor of 32-bit float}}
  %0 = step.sqrt %x : tensor<3xi64>
  return
}

// -----

// Tests that a written result type that differs from the inferred one is rejected.
func.func @rsqrt_wrong_result_type(%x: tensor<4xf32>) {
  // expected-error @+2 {{'step.rsqrt' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<5xf32>'}}
  // expected-error @+1 {{'step.rsqrt' op failed to infer returned types}}
  %0 = step.rsqrt %x : tensor<4xf32> -> tensor<5xf32>
  return
}

// -----

// Tests that tanh rejects a written result element type other than the operand's.
func.func @tanh_wrong_result_dtype(%x: tensor<4xf32>) {
  // expected-error @+2 {{'step.tanh' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4xbf16>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = step.tanh %x : tensor<4xf32> -> tensor<4xbf16>
  return
}

// -----

// Tests that a unary op with two operands is rejected.
func.func @sigmoid_two_operands(%x: tensor<4xf32>) {
  // expected-error @+1 {{expects 1 operand, found 2}}
  %0 = step.sigmoid %x, %x : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// Tests that the number of written operand types must match the operands.
func.func @relu_operand_type_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected 1 operand types, found 2}}
  %0 = step.relu %x : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// Tests that silu on integer tokens is rejected inside a model.
step.model @silu_of_tokens_in_model {
  %t, %g = step.input "bytes" [2, 4] i64 = token_stream(vocab = 16)
  // expected-error @+1 {{'step.silu' op operand #0 must be ranked tensor of 32-bit float}}
  %l = step.silu %t
  %s = step.sum %l {axes = [0, 1]}
  step.loss %s
}

// -----

// Tests that gelu accepts only "tanh" and "erf" approximations.
func.func @gelu_bad_approximation(%x: tensor<4xf32>) {
  // expected-error @+1 {{'step.gelu' op attribute 'approximate' failed to satisfy constraint: string attribute one of "tanh", "erf"}}
  %0 = step.gelu %x {approximate = "fast"} : tensor<4xf32>
  return
}

// -----

// Tests that gelu's approximation must be a string.
func.func @gelu_approximation_not_string(%x: tensor<4xf32>) {
  // expected-error @+1 {{'step.gelu' op attribute 'approximate' failed to satisfy constraint}}
  %0 = step.gelu %x {approximate = 1 : i64} : tensor<4xf32>
  return
}

// -----

// Tests that leaky_relu's alpha must be a float, not an integer.
func.func @leaky_relu_integer_alpha(%x: tensor<4xf32>) {
  // expected-error @+1 {{'step.leaky_relu' op attribute 'alpha' failed to satisfy constraint: 64-bit float attribute}}
  %0 = step.leaky_relu %x {alpha = 1} : tensor<4xf32>
  return
}

// -----

// Tests that pow needs its exponent.
func.func @pow_missing_exponent(%x: tensor<4xf32>) {
  // expected-error @+1 {{'step.pow' op requires attribute 'exponent'}}
  %0 = step.pow %x : tensor<4xf32>
  return
}

// -----

// Tests that pow's exponent must be a float, inside a model.
step.model @pow_string_exponent_in_model {
  %w = step.param "w" [4] f32 = ones
  // expected-error @+1 {{'step.pow' op attribute 'exponent' failed to satisfy constraint: 64-bit float attribute}}
  %p = step.pow %w {exponent = "two"}
  %s = step.sum %p {axes = [0]}
  step.loss %s
}

// -----

// Tests that pow on integers is rejected.
func.func @pow_integer_operand(%x: tensor<4xi32>) {
  // expected-error @+1 {{'step.pow' op operand #0 must be ranked tensor of 32-bit float}}
  %0 = step.pow %x {exponent = 2.0} : tensor<4xi32>
  return
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops, compare, select
//===----------------------------------------------------------------------===//

// -----

// Tests that add reports shapes that do not broadcast, listing both.
func.func @add_no_broadcast(%a: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes do not broadcast: [4, 8] [4] (trailing dimensions must be equal or 1)}}
  %0 = step.add %a, %b : tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

// Tests that sub needs operands of one element type.
func.func @sub_mixed_dtypes(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{expected both operands to have the same element type, found 'f32' and 'bf16'}}
  %0 = step.sub %a, %b : tensor<4xf32>, tensor<4xbf16>
  return
}

// -----

// Tests that mul rejects i1 masks.
func.func @mul_masks(%a: tensor<4xi1>) {
  // expected-error @+1 {{'step.mul' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float or 64-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = step.mul %a, %a : tensor<4xi1>, tensor<4xi1>
  return
}

// -----

// Tests that a broadcast failure inside a model is reported at the op while parsing.
step.model @div_no_broadcast_in_model dims(B = 4, D = 8) {
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 8)
  %w = step.param "w" [B] f32 = ones
  // expected-error @+1 {{operand shapes do not broadcast: [4, 8] [4]}}
  %q = step.div %x, %w
  %s = step.sum %q {axes = [0, 1]}
  step.loss %s
}

// -----

// Tests that max rejects transposed shapes (no dimension is 1).
func.func @max_transposed_shapes(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) {
  // expected-error @+1 {{operand shapes do not broadcast: [2, 3] [3, 2]}}
  %0 = step.max %a, %b : tensor<2x3xf32>, tensor<3x2xf32>
  return
}

// -----

// Tests that min rejects i32 against i64.
func.func @min_mixed_integers(%a: tensor<4xi32>, %b: tensor<4xi64>) {
  // expected-error @+1 {{expected both operands to have the same element type, found 'i32' and 'i64'}}
  %0 = step.min %a, %b : tensor<4xi32>, tensor<4xi64>
  return
}

// -----

// Tests that compare accepts only the six predicates.
func.func @compare_bad_predicate(%a: tensor<4xf32>) {
  // expected-error @+1 {{'step.compare' op attribute 'predicate' failed to satisfy constraint: string attribute one of "lt", "le", "gt", "ge", "eq", "ne"}}
  %0 = step.compare %a, %a {predicate = "lte"} : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// Tests that compare needs a predicate.
func.func @compare_missing_predicate(%a: tensor<4xf32>) {
  // expected-error @+1 {{'step.compare' op requires attribute 'predicate'}}
  %0 = step.compare %a, %a : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// Tests that compare checks broadcasting like the binary ops.
func.func @compare_no_broadcast(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{operand shapes do not broadcast: [4] [5]}}
  %0 = step.compare %a, %b {predicate = "eq"} : tensor<4xf32>, tensor<5xf32>
  return
}

// -----

// Tests that select needs an i1 condition.
func.func @select_float_condition(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{expected an i1 condition, found 'f32'}}
  %0 = step.select %c, %a, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// Tests that select's two choices need one element type.
func.func @select_mixed_choices(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{expected both choices to have the same element type, found 'f32' and 'i32'}}
  %0 = step.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xi32>
  return
}

// -----

// Tests that select broadcasts the condition with the choices and reports all three shapes.
func.func @select_no_broadcast(%c: tensor<3xi1>, %a: tensor<2x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes do not broadcast: [3] [2, 4] [4]}}
  %0 = step.select %c, %a, %b : tensor<3xi1>, tensor<2x4xf32>, tensor<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// -----

// Tests that sum rejects an axis beyond the rank.
func.func @sum_axis_out_of_range(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{axis 3 is out of range for a rank-3 operand}}
  %0 = step.sum %x {axes = [3]} : tensor<2x3x4xf32>
  return
}

// -----

// Tests that sum rejects a negative axis beyond the rank, inside a model.
step.model @sum_negative_axis_in_model {
  %w = step.param "w" [2, 3] f32 = ones
  // expected-error @+1 {{axis -3 is out of range for a rank-2 operand}}
  %s = step.sum %w {axes = [-3]}
  step.loss %s
}

// -----

// Tests that sum needs at least one axis.
func.func @sum_no_axes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{expected at least one axis to reduce}}
  %0 = step.sum %x {axes = []} : tensor<2x3xf32>
  return
}

// -----

// Tests that sum needs its axes attribute.
func.func @sum_missing_axes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'step.sum' op requires attribute 'axes'}}
  %0 = step.sum %x : tensor<2x3xf32>
  return
}

// -----

// Tests that mean rejects an axis listed twice, also through a negative alias.
func.func @mean_axis_twice(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{axis -2 is listed twice}}
  %0 = step.mean %x {axes = [1, -2]} : tensor<2x3x4xf32>
  return
}

// -----

// Tests that mean rejects i1 operands.
func.func @mean_of_mask(%x: tensor<4x4xi1>) {
  // expected-error @+1 {{'step.mean' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float or 64-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4x4xi1>'}}
  %0 = step.mean %x {axes = [0]} : tensor<4x4xi1>
  return
}

// -----

// Tests that reduce_max's axes must be a list of integers.
func.func @reduce_max_axes_not_list(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'step.reduce_max' op attribute 'axes' failed to satisfy constraint: list of axes, e.g. [1, 2]}}
  %0 = step.reduce_max %x {axes = 1} : tensor<2x3xf32>
  return
}

// -----

// Tests that reduce_max's keepdim must be a unit attribute.
func.func @reduce_max_keepdim_not_unit(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'step.reduce_max' op attribute 'keepdim' failed to satisfy constraint: unit attribute}}
  %0 = step.reduce_max %x {axes = [1], keepdim = 1 : i64} : tensor<2x3xf32>
  return
}

//===----------------------------------------------------------------------===//
// Contractions and convolution
//===----------------------------------------------------------------------===//

// -----

// Tests that matmul needs a left operand of rank >= 2.
func.func @matmul_vector_lhs(%a: tensor<8xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{expected the left operand to have rank >= 2, found rank 1}}
  %0 = step.matmul %a, %w : tensor<8xf32>, tensor<8x4xf32>
  return
}

// -----

// Tests that matmul needs a rank-2 right operand and points to batch_matmul.
func.func @matmul_batched_rhs(%a: tensor<2x4x8xf32>, %w: tensor<2x8x4xf32>) {
  // expected-error @+1 {{expected a rank-2 right operand [K, N], found rank 3 (use step.batch_matmul for batched right operands)}}
  %0 = step.matmul %a, %w : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  return
}

// -----

// Tests that transpose_lhs needs a rank-2 left operand.
func.func @matmul_transpose_lhs_rank3(%a: tensor<2x8x4xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{transpose_lhs needs a rank-2 left operand, found rank 3}}
  %0 = step.matmul %a, %w {transpose_lhs} : tensor<2x8x4xf32>, tensor<8x4xf32>
  return
}

// -----

// Tests that matmul reports differing contraction sizes.
func.func @matmul_contraction_mismatch(%a: tensor<4x8xf32>, %w: tensor<4x16xf32>) {
  // expected-error @+1 {{contraction sizes differ: the left operand gives K = 8, the right operand gives K = 4}}
  %0 = step.matmul %a, %w : tensor<4x8xf32>, tensor<4x16xf32>
  return
}

// -----

// Tests that transpose_rhs changes which dimension of the right operand is contracted.
func.func @matmul_transpose_rhs_mismatch(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>) {
  // expected-error @+1 {{contraction sizes differ: the left operand gives K = 8, the right operand gives K = 16}}
  %0 = step.matmul %a, %w {transpose_rhs} : tensor<4x8xf32>, tensor<8x16xf32>
  return
}

// -----

// Tests that matmul needs operands of one element type.
func.func @matmul_mixed_dtypes(%a: tensor<4x8xf32>, %w: tensor<8x16xbf16>) {
  // expected-error @+1 {{expected both operands to have the same element type, found 'f32' and 'bf16'}}
  %0 = step.matmul %a, %w : tensor<4x8xf32>, tensor<8x16xbf16>
  return
}

// -----

// Tests that matmul needs float operands.
func.func @matmul_integer_operands(%a: tensor<4x8xi32>, %w: tensor<8x16xi32>) {
  // expected-error @+1 {{'step.matmul' op operand #0 must be ranked tensor of 32-bit float}}
  %0 = step.matmul %a, %w : tensor<4x8xi32>, tensor<8x16xi32>
  return
}

// -----

// Tests that a contraction mismatch inside a model (a weight declared with swapped dims) is
// reported at the matmul.
step.model @matmul_swapped_weight_in_model dims(B = 2, D = 8, H = 16) {
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 16)
  %w = step.param "w" [H, D] f32 = normal(std = 0.02)
  // expected-error @+1 {{contraction sizes differ: the left operand gives K = 8, the right operand gives K = 16}}
  %h = step.matmul %x, %w
  %l = step.cross_entropy %h, %y
  step.loss %l
}

// -----

// Tests that batch_matmul needs rank >= 3.
func.func @batch_matmul_rank2(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{expected operands of equal rank >= 3, found ranks 2 and 2}}
  %0 = step.batch_matmul %a, %b : tensor<4x8xf32>, tensor<8x4xf32>
  return
}

// -----

// Tests that batch_matmul needs operands of equal rank.
func.func @batch_matmul_unequal_ranks(%a: tensor<2x3x4x8xf32>, %b: tensor<2x8x4xf32>) {
  // expected-error @+1 {{expected operands of equal rank >= 3, found ranks 4 and 3}}
  %0 = step.batch_matmul %a, %b : tensor<2x3x4x8xf32>, tensor<2x8x4xf32>
  return
}

// -----

// Tests that batch_matmul needs equal batch dimensions (no broadcasting).
func.func @batch_matmul_batch_mismatch(%a: tensor<2x4x8xf32>, %b: tensor<1x8x4xf32>) {
  // expected-error @+1 {{batch dimensions differ: [2] and [1]}}
  %0 = step.batch_matmul %a, %b : tensor<2x4x8xf32>, tensor<1x8x4xf32>
  return
}

// -----

// Tests that batch_matmul reports differing contraction sizes under transpose_lhs.
func.func @batch_matmul_contraction_mismatch(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>) {
  // expected-error @+1 {{contraction sizes differ: the left operand gives K = 4, the right operand gives K = 8}}
  %0 = step.batch_matmul %a, %b {transpose_lhs} : tensor<2x4x8xf32>, tensor<2x8x4xf32>
  return
}

// -----

// Tests that embedding needs a rank-2 table.
func.func @embedding_rank1_table(%t: tensor<16xf32>, %ids: tensor<4xi32>) {
  // expected-error @+1 {{expected a rank-2 table [V, D], found [16]}}
  %0 = step.embedding %t, %ids : tensor<16xf32>, tensor<4xi32>
  return
}

// -----

// Tests that embedding needs i32 or i64 ids.
func.func @embedding_float_ids(%t: tensor<16x4xf32>, %ids: tensor<4xf32>) {
  // expected-error @+1 {{expected i32 or i64 ids, found 'f32'}}
  %0 = step.embedding %t, %ids : tensor<16x4xf32>, tensor<4xf32>
  return
}

// -----

// Tests that embedding rejects float features used as ids inside a model.
step.model @embedding_of_features_in_model {
  %x, %y = step.input "data" [2, 4] f32 = classification(classes = 3)
  %t = step.param "t" [16, 4] f32 = zeros
  // expected-error @+1 {{expected i32 or i64 ids, found 'f32'}}
  %e = step.embedding %t, %x
  %s = step.sum %e {axes = [0, 1, 2]}
  step.loss %s
}

// -----

// Tests that embedding needs a float table.
func.func @embedding_integer_table(%t: tensor<16x4xi32>, %ids: tensor<4xi32>) {
  // expected-error @+1 {{'step.embedding' op operand #0 must be ranked tensor of 32-bit float}}
  %0 = step.embedding %t, %ids : tensor<16x4xi32>, tensor<4xi32>
  return
}

// -----

// Tests that conv1d needs a rank-3 input.
func.func @conv1d_rank2_input(%x: tensor<10x4xf32>, %w: tensor<3x4x6xf32>) {
  // expected-error @+1 {{expected a rank-3 input [B, S, Cin], found [10, 4]}}
  %0 = step.conv1d %x, %w : tensor<10x4xf32>, tensor<3x4x6xf32>
  return
}

// -----

// Tests that conv1d needs a rank-3 weight.
func.func @conv1d_rank2_weight(%x: tensor<2x10x4xf32>, %w: tensor<4x6xf32>) {
  // expected-error @+1 {{expected a rank-3 weight [K, Cin/groups, Cout], found [4, 6]}}
  %0 = step.conv1d %x, %w : tensor<2x10x4xf32>, tensor<4x6xf32>
  return
}

// -----

// Tests that groups must divide both channel counts.
func.func @conv1d_groups_not_dividing(%x: tensor<2x10x4xf32>, %w: tensor<3x1x6xf32>) {
  // expected-error @+1 {{groups = 3 must divide both Cin = 4 and Cout = 6}}
  %0 = step.conv1d %x, %w {groups = 3} : tensor<2x10x4xf32>, tensor<3x1x6xf32>
  return
}

// -----

// Tests that the weight's channel dimension must be Cin / groups.
func.func @conv1d_weight_channels(%x: tensor<2x10x4xf32>, %w: tensor<3x4x6xf32>) {
  // expected-error @+1 {{expected weight dimension 1 to be Cin/groups = 2, found 4}}
  %0 = step.conv1d %x, %w {groups = 2} : tensor<2x10x4xf32>, tensor<3x4x6xf32>
  return
}

// -----

// Tests that a valid convolution needs a kernel no longer than the sequence.
func.func @conv1d_valid_kernel_too_long(%x: tensor<2x10x4xf32>, %w: tensor<11x4x6xf32>) {
  // expected-error @+1 {{kernel size 11 exceeds the sequence length 10 with valid padding}}
  %0 = step.conv1d %x, %w {padding = "valid"} : tensor<2x10x4xf32>, tensor<11x4x6xf32>
  return
}

// -----

// Tests that conv1d accepts only "causal" and "valid" padding.
func.func @conv1d_bad_padding(%x: tensor<2x10x4xf32>, %w: tensor<3x4x6xf32>) {
  // expected-error @+1 {{'step.conv1d' op attribute 'padding' failed to satisfy constraint: string attribute one of "causal", "valid"}}
  %0 = step.conv1d %x, %w {padding = "same"} : tensor<2x10x4xf32>, tensor<3x4x6xf32>
  return
}

// -----

// Tests that groups must be positive (and is checked before it divides anything).
func.func @conv1d_zero_groups(%x: tensor<2x10x4xf32>, %w: tensor<3x4x6xf32>) {
  // expected-error @+1 {{'step.conv1d' op attribute 'groups' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = step.conv1d %x, %w {groups = 0} : tensor<2x10x4xf32>, tensor<3x4x6xf32>
  return
}

// -----

// Tests that conv1d needs one element type for input and weight.
func.func @conv1d_mixed_dtypes(%x: tensor<2x10x4xf32>, %w: tensor<3x4x6xf16>) {
  // expected-error @+1 {{expected input and weight to have the same element type, found 'f32' and 'f16'}}
  %0 = step.conv1d %x, %w : tensor<2x10x4xf32>, tensor<3x4x6xf16>
  return
}

//===----------------------------------------------------------------------===//
// Scans, normalisation, losses
//===----------------------------------------------------------------------===//

// -----

// Tests that cumsum rejects an axis beyond the rank.
func.func @cumsum_axis_out_of_range(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 operand}}
  %0 = step.cumsum %x {axis = 2} : tensor<2x8xf32>
  return
}

// -----

// Tests that cumsum needs its axis.
func.func @cumsum_missing_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'step.cumsum' op requires attribute 'axis'}}
  %0 = step.cumsum %x {reverse} : tensor<2x8xf32>
  return
}

// -----

// Tests that cumsum rejects i1 operands.
func.func @cumsum_of_mask(%x: tensor<2x8xi1>) {
  // expected-error @+1 {{'step.cumsum' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float or 64-bit float or 32-bit signless integer or 64-bit signless integer values}}
  %0 = step.cumsum %x {axis = 0} : tensor<2x8xi1>
  return
}

// -----

// Tests that softmax rejects an axis beyond the rank.
func.func @softmax_axis_out_of_range(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 operand}}
  %0 = step.softmax %x {axis = 2} : tensor<2x8xf32>
  return
}

// -----

// Tests that softmax's default axis (-1) is out of range for a scalar.
func.func @softmax_of_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{axis -1 is out of range for a rank-0 operand}}
  %0 = step.softmax %x : tensor<f32>
  return
}

// -----

// Tests that softmax needs a float operand.
func.func @softmax_integer_operand(%x: tensor<2x8xi32>) {
  // expected-error @+1 {{'step.softmax' op operand #0 must be ranked tensor of 32-bit float}}
  %0 = step.softmax %x : tensor<2x8xi32>
  return
}

// -----

// Tests that log_softmax rejects a negative axis beyond the rank, inside a model.
step.model @log_softmax_axis_in_model {
  %w = step.param "w" [2, 8] f32 = ones
  // expected-error @+1 {{axis -3 is out of range for a rank-2 operand}}
  %p = step.log_softmax %w {axis = -3}
  %s = step.sum %p {axes = [0, 1]}
  step.loss %s
}

// -----

// Tests that layer_norm's gamma must match the last dimension.
func.func @layer_norm_gamma_shape(%x: tensor<2x16xf32>, %g: tensor<8xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{expected gamma of shape [16] (the last dimension), found [8]}}
  %0 = step.layer_norm %x, %g, %b : tensor<2x16xf32>, tensor<8xf32>, tensor<16xf32>
  return
}

// -----

// Tests that layer_norm's beta must have the input's element type.
func.func @layer_norm_beta_dtype(%x: tensor<2x16xf32>, %g: tensor<16xf32>, %b: tensor<16xbf16>) {
  // expected-error @+1 {{expected the input and beta to have the same element type, found 'f32' and 'bf16'}}
  %0 = step.layer_norm %x, %g, %b : tensor<2x16xf32>, tensor<16xf32>, tensor<16xbf16>
  return
}

// -----

// Tests that layer_norm rejects a scalar input.
func.func @layer_norm_scalar(%x: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error @+1 {{expected an input of rank >= 1, found a scalar}}
  %0 = step.layer_norm %x, %g, %g : tensor<f32>, tensor<1xf32>, tensor<1xf32>
  return
}

// -----

// Tests that layer_norm's beta must have the last dimension's shape, inside a model.
step.model @layer_norm_beta_in_model dims(B = 2, D = 8) {
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 8)
  %g = step.param "gamma" [D] f32 = ones
  %b = step.param "beta" [B, D] f32 = zeros
  // expected-error @+1 {{expected beta of shape [8] (the last dimension), found [2, 8]}}
  %n = step.layer_norm %x, %g, %b
  %l = step.cross_entropy %n, %y
  step.loss %l
}

// -----

// Tests that rms_norm's gamma must be a vector over the last dimension.
func.func @rms_norm_gamma_rank2(%x: tensor<2x8xf32>, %g: tensor<1x8xf32>) {
  // expected-error @+1 {{expected gamma of shape [8] (the last dimension), found [1, 8]}}
  %0 = step.rms_norm %x, %g : tensor<2x8xf32>, tensor<1x8xf32>
  return
}

// -----

// Tests that rms_norm's eps must be a float.
func.func @rms_norm_integer_eps(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'step.rms_norm' op attribute 'eps' failed to satisfy constraint: 64-bit float attribute}}
  %0 = step.rms_norm %x, %g {eps = 0} : tensor<2x8xf32>, tensor<8xf32>
  return
}

// -----

// Tests that cross_entropy needs integer targets.
func.func @cross_entropy_float_targets(%l: tensor<4x10xf32>, %t: tensor<4xf32>) {
  // expected-error @+1 {{expected i32 or i64 targets, found 'f32'}}
  %0 = step.cross_entropy %l, %t : tensor<4x10xf32>, tensor<4xf32>
  return
}

// -----

// Tests that cross_entropy needs targets shaped like the logits without the class dimension.
func.func @cross_entropy_target_shape(%l: tensor<2x8x256xf32>, %t: tensor<2xi32>) {
  // expected-error @+1 {{expected targets of shape [2, 8] (the logits without the class dimension), found [2]}}
  %0 = step.cross_entropy %l, %t : tensor<2x8x256xf32>, tensor<2xi32>
  return
}

// -----

// Tests that cross_entropy accepts only mean, sum and none reductions.
func.func @cross_entropy_bad_reduction(%l: tensor<4x10xf32>, %t: tensor<4xi32>) {
  // expected-error @+1 {{'step.cross_entropy' op attribute 'reduction' failed to satisfy constraint: string attribute one of "mean", "sum", "none"}}
  %0 = step.cross_entropy %l, %t {reduction = "avg"} : tensor<4x10xf32>, tensor<4xi32>
  return
}

// -----

// Tests that cross_entropy rejects scalar logits.
func.func @cross_entropy_scalar_logits(%l: tensor<f32>, %t: tensor<i32>) {
  // expected-error @+1 {{expected logits [..., V], found a scalar}}
  %0 = step.cross_entropy %l, %t : tensor<f32>, tensor<i32>
  return
}

// -----

// Tests that cross_entropy against classification labels checks the batch, inside a model.
step.model @cross_entropy_labels_in_model dims(B = 4, D = 8) {
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 8)
  %xt = step.transpose %x {perm = [1, 0]}
  // expected-error @+1 {{expected targets of shape [8] (the logits without the class dimension), found [4]}}
  %l = step.cross_entropy %xt, %y
  step.loss %l
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

// -----

// Tests that reshape keeps the element count.
func.func @reshape_element_count(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{reshape must keep the element count: the operand has 24 elements, the shape [5, 5] has 25}}
  %0 = step.reshape %x {shape = [5, 5]} : tensor<2x3x4xf32>
  return
}

// -----

// Tests that reshape allows at most one -1.
func.func @reshape_two_inferred(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{at most one dimension of the shape may be -1}}
  %0 = step.reshape %x {shape = [-1, -1]} : tensor<2x3x4xf32>
  return
}

// -----

// Tests that reshape reports a -1 that cannot be inferred.
func.func @reshape_not_divisible(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{cannot infer -1: 24 elements are not divisible by 5}}
  %0 = step.reshape %x {shape = [5, -1]} : tensor<2x3x4xf32>
  return
}

// -----

// Tests that reshape rejects negative sizes other than -1.
func.func @reshape_negative_size(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{expected positive sizes (or one -1, or 0 to copy), found -2}}
  %0 = step.reshape %x {shape = [-2, -12]} : tensor<2x3x4xf32>
  return
}

// -----

// Tests that a 0 (copy the operand's size) needs a dimension to copy.
func.func @reshape_copy_beyond_rank(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{shape entry 2 is 0 (copy the operand's size) but the operand has rank 2}}
  %0 = step.reshape %x {shape = [0, 0, 0]} : tensor<4x6xf32>
  return
}

// -----

// Tests that reshape needs its shape, inside a model.
step.model @reshape_missing_shape_in_model {
  %w = step.param "w" [2, 3] f32 = ones
  // expected-error @+1 {{'step.reshape' op requires attribute 'shape'}}
  %r = step.reshape %w
  %s = step.sum %r {axes = [0]}
  step.loss %s
}

// -----

// Tests that transpose needs one entry per axis.
func.func @transpose_wrong_length(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{expected a permutation of 3 axes, found 2}}
  %0 = step.transpose %x {perm = [1, 0]} : tensor<2x3x4xf32>
  return
}

// -----

// Tests that transpose rejects a repeated axis.
func.func @transpose_not_a_permutation(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{perm [0, 0, 1] is not a permutation of 0..2}}
  %0 = step.transpose %x {perm = [0, 0, 1]} : tensor<2x3x4xf32>
  return
}

// -----

// Tests that transpose rejects an axis out of range (negative axes are not allowed in a perm).
func.func @transpose_negative_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{perm [-1, 0] is not a permutation of 0..1}}
  %0 = step.transpose %x {perm = [-1, 0]} : tensor<2x3xf32>
  return
}

// -----

// Tests that broadcast stretches only size-1 dimensions.
func.func @broadcast_incompatible(%x: tensor<3xf32>) {
  // expected-error @+1 {{cannot broadcast [3] to [2, 4]}}
  %0 = step.broadcast %x {shape = [2, 4]} : tensor<3xf32>
  return
}

// -----

// Tests that broadcast cannot drop dimensions.
func.func @broadcast_to_lower_rank(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot broadcast [2, 3] to [3]}}
  %0 = step.broadcast %x {shape = [3]} : tensor<2x3xf32>
  return
}

// -----

// Tests that slice needs start, limit and strides of the operand's rank.
func.func @slice_wrong_length(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{expected start, limit and strides of length 2 (the operand's rank)}}
  %0 = step.slice %x {start = [0], limit = [8]} : tensor<8x16xf32>
  return
}

// -----

// Tests that slice's strides must have the operand's rank too.
func.func @slice_wrong_strides_length(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{expected start, limit and strides of length 2 (the operand's rank)}}
  %0 = step.slice %x {start = [0, 0], limit = [8, 16], strides = [1]} : tensor<8x16xf32>
  return
}

// -----

// Tests that slice's limit must not pass the dimension size.
func.func @slice_limit_out_of_bounds(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{dimension 1: expected 0 <= start < limit <= 16, found start = 4, limit = 20}}
  %0 = step.slice %x {start = [0, 4], limit = [8, 20]} : tensor<8x16xf32>
  return
}

// -----

// Tests that slice needs start < limit (an empty slice is an error).
func.func @slice_empty(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{dimension 0: expected 0 <= start < limit <= 8, found start = 3, limit = 3}}
  %0 = step.slice %x {start = [3, 0], limit = [3, 16]} : tensor<8x16xf32>
  return
}

// -----

// Tests that slice rejects a negative start.
func.func @slice_negative_start(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{dimension 0: expected 0 <= start < limit <= 8, found start = -1, limit = 8}}
  %0 = step.slice %x {start = [-1, 0], limit = [8, 16]} : tensor<8x16xf32>
  return
}

// -----

// Tests that slice needs positive strides.
func.func @slice_zero_stride(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{dimension 1: expected a stride >= 1, found 0}}
  %0 = step.slice %x {start = [0, 0], limit = [8, 16], strides = [1, 0]} : tensor<8x16xf32>
  return
}

// -----

// Tests that split needs a size divisible by the number of parts.
func.func @split_not_divisible(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{cannot split dimension 1 of size 10 into 3 equal parts}}
  %0:3 = step.split %x {axis = -1, parts = 3} : tensor<4x10xf32>
  return
}

// -----

// Tests that split rejects an axis beyond the rank.
func.func @split_axis_out_of_range(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 operand}}
  %0:2 = step.split %x {axis = 2, parts = 2} : tensor<4x10xf32>
  return
}

// -----

// Tests that split needs a positive number of parts.
func.func @split_zero_parts(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'step.split' op attribute 'parts' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = step.split %x {axis = 0, parts = 0} : tensor<4x10xf32>
  return
}

// -----

// Tests that split's results must all be named, inside a model.
step.model @split_too_few_results_in_model {
  %w = step.param "w" [4, 6] f32 = ones
  // expected-error @+1 {{operation defines 3 results but was provided 2 to bind}}
  %a, %b = step.split %w {axis = 1, parts = 3}
  %s = step.sum %a {axes = [0, 1]}
  step.loss %s
}

// -----

// Tests that concat needs one element type.
func.func @concat_mixed_dtypes(%a: tensor<2x3xf32>, %b: tensor<2x3xbf16>) {
  // expected-error @+1 {{expected all operands to have the same element type, found 'f32' and 'bf16'}}
  %0 = step.concat %a, %b {axis = 0} : tensor<2x3xf32>, tensor<2x3xbf16>
  return
}

// -----

// Tests that concat needs operands of one rank.
func.func @concat_mixed_ranks(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{expected operands of equal rank, found 2 and 1}}
  %0 = step.concat %a, %b {axis = 0} : tensor<2x3xf32>, tensor<3xf32>
  return
}

// -----

// Tests that concat needs equal sizes off the concat axis.
func.func @concat_off_axis_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{operands differ in dimension 1 (not the concat axis): 3 and 4}}
  %0 = step.concat %a, %b {axis = 0} : tensor<2x3xf32>, tensor<2x4xf32>
  return
}

// -----

// Tests that concat rejects an axis beyond the rank.
func.func @concat_axis_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank-2 operands}}
  %0 = step.concat %a, %a {axis = 2} : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

// Tests that concat needs at least one operand.
func.func @concat_no_operands() {
  // expected-error @+1 {{expected at least one operand}}
  %0 = step.concat {axis = 0}
  return
}

// -----

// Tests that pad needs low and high of the operand's rank.
func.func @pad_wrong_length(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{expected low and high of length 2 (the operand's rank)}}
  %0 = step.pad %x {low = [1, 1], high = [1]} : tensor<2x3xf32>
  return
}

// -----

// Tests that pad rejects negative padding.
func.func @pad_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{dimension 0: expected non-negative padding, found low = -1, high = 0}}
  %0 = step.pad %x {low = [-1, 0], high = [0, 0]} : tensor<2x3xf32>
  return
}

// -----

// Tests that pad's value must be a float.
func.func @pad_integer_value(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'step.pad' op attribute 'value' failed to satisfy constraint: 64-bit float attribute}}
  %0 = step.pad %x {low = [0, 0], high = [0, 0], value = 0} : tensor<2x3xf32>
  return
}

//===----------------------------------------------------------------------===//
// Casts, constants, iota, dropout
//===----------------------------------------------------------------------===//

// -----

// Tests that cast accepts only the step element types.
func.func @cast_to_i8(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'step.cast' op attribute 'to' failed to satisfy constraint: type attribute of 32-bit float or bfloat16 type or 16-bit float or 64-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer}}
  %0 = step.cast %x {to = i8} : tensor<2x3xf32>
  return
}

// -----

// Tests that cast needs its target type.
func.func @cast_missing_to(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'step.cast' op requires attribute 'to'}}
  %0 = step.cast %x : tensor<2x3xf32>
  return
}

// -----

// Tests that a constant must be a tensor.
func.func @constant_vector() {
  // expected-error @+1 {{expected a static-shaped tensor value, found 'vector<4xf32>'}}
  %0 = step.constant {value = dense<1.0> : vector<4xf32>}
  return
}

// -----

// Tests that a constant must have a step element type.
func.func @constant_i8() {
  // expected-error @+1 {{'step.constant' op result #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float or 64-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<4xi8>'}}
  %0 = step.constant {value = dense<1> : tensor<4xi8>}
  return
}

// -----

// Tests that a constant needs a value, inside a model.
step.model @constant_missing_value_in_model {
  // expected-error @+1 {{'step.constant' op requires attribute 'value'}}
  %c = step.constant
  step.loss %c
}

// -----

// Tests that iota needs positive sizes.
func.func @iota_zero_size() {
  // expected-error @+1 {{expected positive sizes with at most 2^48 elements in all, found [2, 0]}}
  %0 = step.iota {shape = [2, 0], dtype = f32}
  return
}

// -----

// Tests that iota's axis must be in range of its shape.
func.func @iota_axis_out_of_range() {
  // expected-error @+1 {{axis 2 is out of range for shape [2, 3]}}
  %0 = step.iota {shape = [2, 3], axis = 2, dtype = i32}
  return
}

// -----

// Tests that iota takes a shape or an operand, not both.
func.func @iota_shape_and_operand(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{expected either a shape attribute or a tensor operand to take the shape of}}
  %0 = step.iota %x {shape = [4, 4], dtype = f32} : tensor<4x4xf32>
  return
}

// -----

// Tests that iota needs a shape or an operand.
func.func @iota_no_shape() {
  // expected-error @+1 {{expected either a shape attribute or a tensor operand to take the shape of}}
  %0 = step.iota {dtype = f32}
  return
}

// -----

// Tests that iota needs its dtype.
func.func @iota_missing_dtype() {
  // expected-error @+1 {{'step.iota' op requires attribute 'dtype'}}
  %0 = step.iota {shape = [2]}
  return
}

// -----

// Tests that iota's axis is checked against the operand's rank, inside a model.
step.model @iota_like_axis_in_model {
  %w = step.param "w" [2, 3] f32 = ones
  // expected-error @+1 {{axis 2 is out of range for shape [2, 3]}}
  %p = step.iota %w {axis = 2, dtype = f32}
  %s = step.sum %p {axes = [0, 1]}
  step.loss %s
}

// -----

// Tests that dropout's rate must be below 1.
func.func @dropout_rate_one(%x: tensor<4xf32>) {
  // expected-error @+1 {{'step.dropout' op expected 0 <= rate < 1, found 1.000000e+00}}
  %0 = step.dropout %x {rate = 1.0, seed = 1} : tensor<4xf32>
  return
}

// -----

// Tests that dropout's rate must not be negative, inside a model.
step.model @dropout_negative_rate_in_model {
  %w = step.param "w" [4] f32 = ones
  // expected-error @+1 {{'step.dropout' op expected 0 <= rate < 1, found -1.000000e-01}}
  %d = step.dropout %w {rate = -0.1, seed = 1}
  %s = step.sum %d {axes = [0]}
  step.loss %s
}

// -----

// Tests that dropout needs a seed.
func.func @dropout_missing_seed(%x: tensor<4xf32>) {
  // expected-error @+1 {{'step.dropout' op requires attribute 'seed'}}
  %0 = step.dropout %x {rate = 0.5} : tensor<4xf32>
  return
}

// -----

// Tests that dropout needs a float operand.
func.func @dropout_integer_operand(%x: tensor<4xi32>) {
  // expected-error @+1 {{'step.dropout' op operand #0 must be ranked tensor of 32-bit float}}
  %0 = step.dropout %x {rate = 0.5, seed = 1} : tensor<4xi32>
  return
}

// -----

// Tests that broadcast rejects a negative target size.
func.func @broadcast_negative_size(%x: tensor<1xf32>) {
  // expected-error @+1 {{expected positive sizes with at most 2^48 elements in all, found [-1]}}
  %0 = step.broadcast %x {shape = [-1]} : tensor<1xf32>
  return
}

// -----

// Tests that broadcast rejects a zero target size.
func.func @broadcast_zero_size(%x: tensor<1x3xf32>) {
  // expected-error @+1 {{expected positive sizes with at most 2^48 elements in all, found [0, 3]}}
  %0 = step.broadcast %x {shape = [0, 3]} : tensor<1x3xf32>
  return
}

// -----

// Tests that jitter's eps must be below 1 (a factor 1 - eps could reach zero).
func.func @jitter_eps_one(%x: tensor<4xf32>) {
  // expected-error @+1 {{'step.jitter' op expected 0 <= eps < 1, found 1.000000e+00}}
  %0 = step.jitter %x {eps = 1.0, seed = 1} : tensor<4xf32>
  return
}

// -----

// Tests that jitter's eps must not be negative, inside a model.
step.model @jitter_negative_eps_in_model {
  %w = step.param "w" [4] f32 = ones
  // expected-error @+1 {{'step.jitter' op expected 0 <= eps < 1, found -1.000000e-02}}
  %d = step.jitter %w {eps = -0.01, seed = 1}
  %s = step.sum %d {axes = [0]}
  step.loss %s
}

// -----

// Tests that jitter needs a float operand and a seed.
func.func @jitter_integer_operand(%x: tensor<4xi32>) {
  // expected-error @+1 {{'step.jitter' op operand #0 must be ranked tensor of 32-bit float}}
  %0 = step.jitter %x {eps = 0.5, seed = 1} : tensor<4xi32>
  return
}

// -----

func.func @jitter_missing_seed(%x: tensor<4xf32>) {
  // expected-error @+1 {{'step.jitter' op requires attribute 'seed'}}
  %0 = step.jitter %x {eps = 0.5} : tensor<4xf32>
  return
}

// -----

// Tests that dropout rejects a NaN rate.
func.func @dropout_nan_rate(%x: tensor<4xf32>) {
  // expected-error @+1 {{'step.dropout' op expected 0 <= rate < 1, found nan}}
  %0 = step.dropout %x {rate = 0x7FF8000000000000 : f64, seed = 1} : tensor<4xf32>
  return
}

// -----

// Tests that a parameter in a repeat outside any model is rejected.
func.func @param_in_repeat_outside_model(%x: tensor<2x4xf32>) {
  %0 = step.repeat "cell" 3 (%h = %x : tensor<2x4xf32>) {
    // expected-error @+1 {{'step.param' op must be in a step.model or step.repeat body}}
    %w = step.param "w" [4, 4] f32 = orthogonal
    %1 = step.matmul %h, %w : tensor<2x4xf32>, tensor<4x4xf32>
    step.yield %1 : tensor<2x4xf32>
  }
  return
}

// -----

// Tests that conv1d_grad_input needs groups to divide the output channels.
func.func @conv1d_grad_input_uneven_groups(%g: tensor<1x4x3xf32>, %w: tensor<2x1x3xf32>) {
  // expected-error @+1 {{groups = 2 must divide Cout = 3}}
  %0 = step.conv1d_grad_input %g, %w {groups = 2} : tensor<1x4x3xf32>, tensor<2x1x3xf32>
  return
}

// -----

// Tests that a missing operand list is an error, not a read past the operands.
step.model @missing_operands {
  %w = step.param "w" [3] f32 = zeros
  // expected-error @+1 {{expects 2 operands, found 0}}
  %y = step.add
  step.loss %w
}

// -----

// Tests that exact_scale refuses a buffer of another shape than its stream.
func.func @exact_scale_buffer_shape(%x: tensor<4xf64>, %b: tensor<3xi64>) {
  // expected-error @+1 {{expected the buffer to have the operand's shape [4], found [3]}}
  %y, %b1 = step.exact_scale %x, %b {num = 9, den = 10, bits = 32} : tensor<4xf64>, tensor<3xi64>
  return
}

// -----

// Tests that quantize refuses a grid finer than f64 can hold.
func.func @quantize_bits(%x: tensor<4xf64>) {
  // expected-error @+1 {{bits}}
  %q = step.quantize %x {bits = 60} : tensor<4xf64>
  return
}
