// Malformed model files: syntax errors, structure errors (loss, names, values, shapes), bad
// declarations, bad training configs and misplaced structure ops. Each case checks which error
// is reported (a distinctive part of its message), where, and any note pointing elsewhere.
//
// RUN: %stepc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Syntax
//===----------------------------------------------------------------------===//

// Tests that a missing '=' before the initialiser is a syntax error at the initialiser.
step.model @param_missing_equals {
  // expected-error @+1 {{expected '='}}
  %w = step.param "w" [4] f32 zeros
}

// -----

// Tests that an unclosed shape is a syntax error.
step.model @param_unclosed_shape {
  // expected-error @+1 {{expected ']'}}
  %w = step.param "w" [4 f32 = zeros
}

// -----

// Tests that a declaration without an initialiser lists the initialisers.
step.model @param_missing_initialiser {
  %w = step.param "w" [4] f32 =
// expected-error @+1 {{initialiser (one of zeros, ones, constant, normal, uniform, orthogonal)}}
}

// -----

// Tests that a model needs a symbol name.
// expected-error @+1 {{expected valid '@'-identifier for symbol name}}
step.model {
}

// -----

// Tests that dims entries need '='.
// expected-error @+1 {{expected '='}}
step.model @dims_missing_equals dims(B 4) {
}

// -----

// Tests that an unknown op is reported by name.
step.model @unknown_op {
  %w = step.param "w" [] f32 = zeros
  // expected-error @+1 {{custom op 'step.frobnicate' is unknown}}
  %x = step.frobnicate %w
  step.loss %x
}

// -----

// Tests that a model body holds only step ops.
step.model @foreign_op_in_model {
  %w = step.param "w" [] f32 = zeros
  // expected-error @+1 {{'builtin.unrealized_conversion_cast' op is not a step op; a model body holds only step ops}}
  %c = builtin.unrealized_conversion_cast %w : tensor<f32> to tensor<f32>
  step.loss %w
}

// -----

// Tests that outside a model an op without written operand types is an error that says to
// write them.
func.func @untyped_op_outside_model(%x: tensor<4xf32>) {
  // expected-error @+1 {{use of undefined value '%x'}}
  %0 = step.neg %x
  return
}

//===----------------------------------------------------------------------===//
// The loss
//===----------------------------------------------------------------------===//

// -----

// Tests that an empty model is rejected for having no loss.
// expected-error @+1 {{'step.model' op has no loss; mark the scalar training loss with `step.loss %value`}}
step.model @empty_model {
}

// -----

// Tests that a model computing a scalar but not marking it is rejected for having no loss.
// expected-error @+1 {{'step.model' op has no loss}}
step.model @missing_loss dims(B = 2, D = 4) {
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 4)
  %l = step.cross_entropy %x, %y
}

// -----

// Tests that a second loss is rejected, with a note at the first.
step.model @two_losses {
  %w = step.param "w" [] f32 = zeros
  %v = step.param "v" [] f32 = zeros
  // expected-note @+1 {{the first step.loss is here}}
  step.loss %w
  // expected-error @+1 {{'step.loss' op marks a second loss; a model has exactly one}}
  step.loss %v
}

// -----

// Tests that the loss must be a scalar.
step.model @non_scalar_loss dims(B = 4, C = 3) {
  %x, %y = step.input "data" [B, C] f32 = classification(classes = 3)
  %per = step.cross_entropy %x, %y {reduction = "none"}
  // expected-error @+1 {{'step.loss' op expected a scalar float loss (rank 0, e.g. tensor<f32>), found 'tensor<4xf32>'; reduce it with step.mean or step.sum over all axes}}
  step.loss %per
}

// -----

// Tests that the loss must be a float.
step.model @integer_loss {
  %t, %g = step.input "bytes" [2, 3] i32 = token_stream(vocab = 8)
  %s = step.sum %t {axes = [0, 1]}
  // expected-error @+1 {{expected a scalar float loss (rank 0, e.g. tensor<f32>), found 'tensor<i32>'}}
  step.loss %s
}

// -----

// Tests that step.loss needs exactly one operand.
step.model @loss_without_operand {
  %w = step.param "w" [] f32 = zeros
  // expected-error @+1 {{'step.loss' op requires a single operand}}
  step.loss
}

// -----

// Tests that step.loss takes one operand, not two.
step.model @loss_two_operands {
  %w = step.param "w" [] f32 = zeros
  // expected-error @+1 {{'step.loss' op requires a single operand}}
  step.loss %w, %w
}

// -----

// Tests that step.loss belongs directly in a model, not in a repeat body.
step.model @loss_in_repeat {
  %w = step.param "w" [] f32 = zeros
  %r = step.repeat "cell" 2 (%h = %w) {
    // expected-error @+1 {{'step.loss' op expects parent op 'step.model'}}
    step.loss %h
    step.yield %h
  }
  step.loss %r
}

// -----

// Tests that step.loss outside a model is rejected.
func.func @loss_outside_model(%x: tensor<f32>) {
  // expected-error @+1 {{'step.loss' op expects parent op 'step.model'}}
  step.loss %x : tensor<f32>
  return
}

//===----------------------------------------------------------------------===//
// Declaration names
//===----------------------------------------------------------------------===//

// -----

// Tests that two parameters with one name are rejected, with a note at the first.
step.model @duplicate_params {
  // expected-note @+1 {{the first declaration of 'w' is here}}
  %w = step.param "w" [] f32 = zeros
  // expected-error @+1 {{'step.param' op declares 'w' again; names must be unique}}
  %v = step.param "w" [] f32 = ones
  %s = step.add %w, %v
  step.loss %s
}

// -----

// Tests that two parameters with one name in the same repeat body are rejected under their full
// name `<repeat>.<name>`.
step.model @duplicate_params_in_repeat {
  %w = step.param "w" [] f32 = zeros
  %r = step.repeat "cell" 2 (%h = %w) {
    // expected-note @+1 {{the first declaration of 'cell.a' is here}}
    %a = step.param "a" [] f32 = zeros
    // expected-error @+1 {{'step.param' op declares 'cell.a' again; names must be unique}}
    %b = step.param "a" [] f32 = zeros
    %s = step.add %h, %a
    %t = step.add %s, %b
    step.yield %t
  }
  step.loss %r
}

// -----

// Tests that two repeats with one name cannot both declare a parameter of one name.
step.model @duplicate_params_across_repeats {
  %w = step.param "w" [] f32 = zeros
  %r1 = step.repeat "cell" 2 (%h = %w) {
    // expected-note @+1 {{the first declaration of 'cell.a' is here}}
    %a = step.param "a" [] f32 = zeros
    %s = step.add %h, %a
    step.yield %s
  }
  %r2 = step.repeat "cell" 3 (%h = %r1) {
    // expected-error @+1 {{'step.param' op declares 'cell.a' again; names must be unique}}
    %a = step.param "a" [] f32 = zeros
    %s = step.add %h, %a
    step.yield %s
  }
  step.loss %r2
}

// -----

// Tests that a top-level parameter cannot take the full name of a per-layer parameter.
step.model @param_name_shadows_repeat_param {
  // expected-note @+1 {{the first declaration of 'cell.a' is here}}
  %w = step.param "cell.a" [] f32 = zeros
  %r = step.repeat "cell" 2 (%h = %w) {
    // expected-error @+1 {{declares 'cell.a' again; names must be unique}}
    %a = step.param "a" [] f32 = zeros
    %s = step.add %h, %a
    step.yield %s
  }
  step.loss %r
}

// -----

// Tests that two inputs with one name are rejected, with a note at the first.
step.model @duplicate_inputs {
  // expected-note @+1 {{the first declaration of 'data' is here}}
  %x, %y = step.input "data" [2, 3] f32 = classification(classes = 3)
  // expected-error @+1 {{'step.input' op declares 'data' again; names must be unique}}
  %a, %b = step.input "data" [2, 3] f32 = classification(classes = 3)
  %l = step.cross_entropy %x, %y
  step.loss %l
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

// -----

// Tests that a use of a value that is never defined is reported at the use.
step.model @undefined_value {
  %w = step.param "w" [] f32 = zeros
  // expected-error @+1 {{use of undefined value '%z'}}
  %x = step.add %w, %z
  step.loss %x
}

// -----

// Tests that a value cannot be used before the op defining it.
step.model @use_before_definition {
  %w = step.param "w" [] f32 = zeros
  // expected-error @+1 {{use of undefined value '%later'}}
  %a = step.add %w, %later
  %later = step.neg %w
  step.loss %a
}

// -----

// Tests that a value defined in a repeat body is not visible after the repeat.
step.model @repeat_body_value_outside {
  %w = step.param "w" [] f32 = zeros
  %r = step.repeat "cell" 2 (%h = %w) {
    %inner = step.neg %h
    step.yield %inner
  }
  // expected-error @+1 {{use of undefined value '%inner'}}
  step.loss %inner
}

// -----

// Tests that a repeat's initial value must be defined.
step.model @repeat_undefined_init {
  %w = step.param "w" [] f32 = zeros
  // expected-error @+1 {{use of undefined value '%q'}}
  %r = step.repeat "cell" 2 (%h = %q) {
    step.yield %h
  }
  step.loss %r
}

//===----------------------------------------------------------------------===//
// Dims and shapes
//===----------------------------------------------------------------------===//

// -----

// Tests that an unknown dim in a shape is reported with the dims the model declares.
step.model @unknown_dim dims(D = 2, B = 3) {
  // expected-error @+1 {{unknown dim 'Q'; the model declares D, B}}
  %w = step.param "w" [B, Q] f32 = zeros
}

// -----

// Tests that a named dim in a model without dims says that none are declared.
step.model @dim_without_dims {
  // expected-error @+1 {{unknown dim 'B'; the model declares none}}
  %x, %y = step.input "data" [B, 4] f32 = classification(classes = 4)
}

// -----

// Tests that a shape entry must be an integer or a named dim.
step.model @bad_shape_entry dims(B = 2) {
  // expected-error @+1 {{expected a dimension: an integer or a named dim (B)}}
  %w = step.param "w" [B, ?] f32 = zeros
}

// -----

// Tests that a dim cannot be declared twice.
// expected-error @+1 {{dim 'B' is declared twice}}
step.model @dim_declared_twice dims(B = 2, B = 3) {
}

// -----

// Tests that a declared dim must be positive.
// expected-error @+1 {{dim 'B' must be positive, found 0}}
step.model @zero_dim dims(B = 0) {
}

// -----

// Tests that a configuration sets only dims the model declares.
// expected-error @+1 {{configuration 'tiny' sets dim 'H', which the model does not declare; it declares B, D}}
step.model @config_unknown_dim dims(B = 8, D = 4) configs(tiny = (B = 2, H = 3)) {
}

// -----

// Tests that a configuration name is declared once.
// expected-error @+1 {{configuration 'tiny' is declared twice}}
step.model @config_twice dims(B = 8) configs(tiny = (B = 2), tiny = (B = 1)) {
}

// -----

// Tests that a shape size must be positive.
step.model @zero_size {
  // expected-error @+1 {{expected a positive dimension size, found 0}}
  %w = step.param "w" [4, 0] f32 = zeros
}

// -----

// Tests that a negative shape size is rejected.
step.model @negative_size {
  // expected-error @+1 {{expected a positive dimension size, found -3}}
  %w = step.param "w" [-3] f32 = zeros
}

// -----

// Tests that a dim expression evaluating to zero is rejected.
step.model @zero_dim_expression dims(B = 2) {
  // expected-error @+1 {{expected a positive dimension size, found 0}}
  %x, %y = step.input "data" [B * 0, 4] f32 = classification(classes = 4)
}

// -----

// Tests that a declaration needs one of the step dtypes.
step.model @param_i8 {
  // expected-error @+1 {{expected a dtype (f32, bf16, f16, f64, i32 or i64), found 'i8'}}
  %w = step.param "w" [2] i8 = zeros
}

//===----------------------------------------------------------------------===//
// Parameters and initialisers
//===----------------------------------------------------------------------===//

// -----

// Tests that an unknown initialiser is reported with the known ones.
step.model @unknown_initialiser {
  // expected-error @+1 {{unknown initialiser 'xavier'; expected one of zeros, ones, constant, normal, uniform, orthogonal}}
  %w = step.param "w" [2, 2] f32 = xavier
}

// -----

// Tests that an unknown initialiser parameter is reported with the known ones.
step.model @unknown_init_parameter {
  // expected-error @+1 {{'normal' has no parameter 'sigma'; expected one of: std, mean, gain}}
  %w = step.param "w" [2] f32 = normal(sigma = 1.0)
}

// -----

// Tests that initialisers without parameters other than gain reject others.
step.model @zeros_with_value {
  // expected-error @+1 {{'zeros' has no parameter 'value'; expected one of: gain}}
  %w = step.param "w" [2] f32 = zeros(value = 1.0)
}

// -----

// Tests that normal requires std.
step.model @normal_missing_std {
  // expected-error @+1 {{'normal' requires parameter 'std' (a number)}}
  %w = step.param "w" [2] f32 = normal(mean = 1.0)
}

// -----

// Tests that uniform requires both bounds.
step.model @uniform_missing_bound {
  // expected-error @+1 {{'uniform' requires parameter 'b' (a number)}}
  %w = step.param "w" [2] f32 = uniform(a = -1.0)
}

// -----

// Tests that constant requires its value.
step.model @constant_missing_value {
  // expected-error @+1 {{'constant' requires parameter 'value' (a number)}}
  %w = step.param "w" [2] f32 = constant
}

// -----

// Tests that an initialiser parameter needs a number, not a string.
step.model @init_parameter_string {
  // expected-error @+1 {{'normal' parameter 'std' expects a number, found "big"}}
  %w = step.param "w" [2] f32 = normal(std = "big")
}

// -----

// Tests that a gain needs a number, not a boolean.
step.model @init_gain_boolean {
  // expected-error @+1 {{'zeros' parameter 'gain' expects a number, found true}}
  %w = step.param "w" [2] f32 = zeros(gain = true)
}

// -----

// Tests that an initialiser parameter cannot be given twice.
step.model @init_parameter_twice {
  // expected-error @+1 {{parameter 'std' given twice}}
  %w = step.param "w" [4] f32 = normal(std = 1.0, std = 2.0)
}

// -----

// Tests that an orthogonal initialiser needs a matrix (rank >= 2).
step.model @orthogonal_vector {
  // expected-error @+1 {{'step.param' op orthogonal initialisation needs a parameter of rank >= 2, found 'tensor<4xf32>'}}
  %w = step.param "w" [4] f32 = orthogonal
  %l = step.sum %w {axes = [0]}
  step.loss %l
}

// -----

// Tests that a parameter must be a float.
step.model @integer_param {
  // expected-error @+1 {{'step.param' op expected a float parameter, found 'tensor<2xi32>'}}
  %w = step.param "w" [2] i32 = zeros
  %l = step.sum %w {axes = [0]}
  step.loss %l
}

// -----

// Tests that a parameter outside a model is rejected.
func.func @param_outside_model() {
  // expected-error @+1 {{'step.param' op must be in a step.model or step.repeat body}}
  %w = step.param "w" [2] f32 = zeros
  return
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

// -----

// Tests that classification needs two result names (features and labels).
step.model @classification_one_result {
  // expected-error @+1 {{'classification' gives 2 results (features, labels), found 1 result names}}
  %x = step.input "data" [2, 3] f32 = classification(classes = 3)
}

// -----

// Tests that token_stream needs two result names (tokens and targets).
step.model @token_stream_three_results {
  // expected-error @+1 {{'token_stream' gives 2 results (tokens, targets), found 3 result names}}
  %t, %g, %h = step.input "bytes" [2, 3] i32 = token_stream(vocab = 3)
}

// -----

// Tests that token_stream needs an integer dtype.
step.model @token_stream_float {
  // expected-error @+1 {{token_stream gives integer tokens: declare i32 or i64, found 'f32'}}
  %t, %g = step.input "bytes" [2, 3] f32 = token_stream(vocab = 3)
}

// -----

// Tests that token_stream needs a rank-2 [B, S] shape.
step.model @token_stream_rank3 {
  // expected-error @+1 {{token_stream gives windows [B, S]: declare rank 2, found rank 3}}
  %t, %g = step.input "bytes" [2, 3, 4] i32 = token_stream(vocab = 3)
}

// -----

// Tests that classification needs a float dtype.
step.model @classification_integer {
  // expected-error @+1 {{classification gives float features: declare a float dtype, found 'i32'}}
  %x, %y = step.input "data" [2, 3] i32 = classification(classes = 3)
}

// -----

// Tests that classification needs features of rank >= 2.
step.model @classification_rank1 {
  // expected-error @+1 {{classification gives features [B, ...]: declare rank >= 2, found rank 1}}
  %x, %y = step.input "data" [2] f32 = classification(classes = 3)
}

// -----

// Tests that an unknown data source is reported with the known ones.
step.model @unknown_source {
  // expected-error @+1 {{unknown data source 'images'; expected one of token_stream, classification}}
  %x, %y = step.input "data" [2, 3] f32 = images(classes = 3)
}

// -----

// Tests that a source parameter needs an integer.
step.model @classes_float {
  // expected-error @+1 {{'classification' parameter 'classes' expects an integer, found 2.500000e+00 : f64}}
  %x, %y = step.input "data" [2, 3] f32 = classification(classes = 2.5)
}

// -----

// Tests that token_stream requires its vocabulary size.
step.model @token_stream_missing_vocab {
  // expected-error @+1 {{'token_stream' requires parameter 'vocab' (an integer)}}
  %t, %g = step.input "bytes" [2, 3] i32 = token_stream
}

// -----

// Tests that an input outside a model is rejected.
func.func @input_outside_model() {
  // expected-error @+1 {{'step.input' op must be directly in a step.model body}}
  %x, %y = step.input "data" [2, 3] f32 = classification(classes = 3)
  return
}

// -----

// Tests that an input cannot be declared in a repeat body.
step.model @input_in_repeat {
  %w = step.param "w" [] f32 = zeros
  %r = step.repeat "cell" 2 (%h = %w) {
    // expected-error @+1 {{'step.input' op must be directly in a step.model body}}
    %x, %y = step.input "data" [2, 3] f32 = classification(classes = 3)
    step.yield %h
  }
  step.loss %r
}

//===----------------------------------------------------------------------===//
// Repeats
//===----------------------------------------------------------------------===//

// -----

// Tests that a repeated layer must keep the shape of what it carries.
step.model @repeat_changes_shape dims(B = 2, F = 4) {
  %x = step.param "x" [B, F] f32 = normal(std = 1.0)
  %out = step.repeat "cell" 3 (%h = %x) {
    %s = step.sum %h {axes = [1]}
    // expected-error @+1 {{'step.yield' op yields 'tensor<2xf32>' for carried value #0, which enters the layer as 'tensor<2x4xf32>'; a repeated layer must keep the shape}}
    step.yield %s
  }
  %m = step.mean %out {axes = [0, 1]}
  step.loss %m
}

// -----

// Tests that a repeated layer must keep the dtype of what it carries.
step.model @repeat_changes_dtype {
  %x = step.param "x" [2, 4] f32 = zeros
  %out = step.repeat "cell" 2 (%h = %x) {
    %c = step.cast %h {to = bf16}
    // expected-error @+1 {{yields 'tensor<2x4xbf16>' for carried value #0, which enters the layer as 'tensor<2x4xf32>'}}
    step.yield %c
  }
  %m = step.mean %out {axes = [0, 1]}
  step.loss %m
}

// -----

// Tests that a repeat body yields one value per carried value.
step.model @repeat_yield_count {
  %w = step.param "w" [] f32 = zeros
  %r = step.repeat "cell" 2 (%h = %w) {
    // expected-error @+1 {{'step.yield' op yields 0 values; the repeat carries 1}}
    step.yield
  }
  step.loss %r
}

// -----

// Tests that a repeat count must be at least 1.
step.model @repeat_zero_count {
  %w = step.param "w" [] f32 = zeros
  // expected-error @+1 {{repeat count must be >= 1, found 0}}
  %r = step.repeat "cell" 0 (%h = %w) {
    step.yield %h
  }
  step.loss %r
}

// -----

// Tests that step.yield belongs in a repeat body.
step.model @yield_outside_repeat {
  %w = step.param "w" [] f32 = zeros
  // expected-error @+1 {{'step.yield' op expects parent op to be one of 'step.repeat, step.custom_grad'}}
  step.yield %w
  step.loss %w
}

//===----------------------------------------------------------------------===//
// Training config
//===----------------------------------------------------------------------===//

// -----

// Tests that an unknown config entry is reported with the known ones.
step.model @unknown_config_entry {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{unknown config entry 'lr'; expected optimizer, schedule, clip, sam, micro_batches or precision}}
  step.config { lr = 1.0 }
}

// -----

// Tests that a config entry cannot be given twice.
step.model @config_entry_twice {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{config entry 'sam' given twice}}
  step.config { sam = none, sam = none }
}

// -----

// Tests that micro_batches must be at least 1.
step.model @zero_micro_batches {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{micro_batches must be >= 1, found 0}}
  step.config { micro_batches = 0 }
}

// -----

// Tests that a negative micro_batches is rejected.
step.model @negative_micro_batches {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{micro_batches must be >= 1, found -2}}
  step.config { micro_batches = -2 }
}

// -----

// Tests that micro_batches must be an integer.
step.model @fractional_micro_batches {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{expected integer value}}
  step.config { micro_batches = 1.5 }
}

// -----

// Tests that the training precision is f32, bf16 or f16.
step.model @precision_f64 {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{precision must be f32, bf16 or f16, found 'f64'}}
  step.config { precision = f64 }
}

// -----

// Tests that an integer training precision is rejected.
step.model @precision_integer {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{precision must be f32, bf16 or f16, found 'i32'}}
  step.config { precision = i32 }
}

// -----

// Tests that an unknown optimizer is reported with the known ones.
step.model @unknown_optimizer {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{unknown optimizer 'lion'; expected one of sgd, adam, adamw}}
  step.config { optimizer = lion(lr = 1.0) }
}

// -----

// Tests that an optimizer requires its learning rate.
step.model @optimizer_missing_lr {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{'sgd' requires parameter 'lr' (a number)}}
  step.config { optimizer = sgd }
}

// -----

// Tests that an optimizer parameter of another optimizer is rejected.
step.model @adam_with_momentum {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{'adam' has no parameter 'momentum'; expected one of: lr, beta1, beta2, eps}}
  step.config { optimizer = adam(lr = 1.0, momentum = 0.9) }
}

// -----

// Tests that no_decay needs a list of strings.
step.model @no_decay_not_list {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{'adamw' parameter 'no_decay' expects a list of strings, found "b*"}}
  step.config { optimizer = adamw(lr = 1.0, no_decay = "b*") }
}

// -----

// Tests that an unknown LR schedule is reported with the known ones.
step.model @unknown_schedule {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{unknown LR schedule 'cosine'; expected one of constant, warmup_cosine, one_cycle}}
  step.config { schedule = cosine }
}

// -----

// Tests that one_cycle requires all of its parameters.
step.model @one_cycle_missing_final_lr {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{'one_cycle' requires parameter 'final_lr' (a number)}}
  step.config { schedule = one_cycle(warmup = 1, total = 10, start_lr = 0.1) }
}

// -----

// Tests that a step count needs an integer.
step.model @warmup_fractional {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{'warmup_cosine' parameter 'warmup' expects an integer, found 1.500000e+00 : f64}}
  step.config { schedule = warmup_cosine(warmup = 1.5, total = 10) }
}

// -----

// Tests that an unknown clipping kind is reported with the known ones.
step.model @unknown_clip {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{unknown gradient clipping 'value'; expected one of none, global_norm, agc}}
  step.config { clip = value(max = 1.0) }
}

// -----

// Tests that global_norm requires max_norm.
step.model @global_norm_missing_max_norm {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{'global_norm' requires parameter 'max_norm' (a number)}}
  step.config { clip = global_norm }
}

// -----

// Tests that an unknown SAM setting is reported with the known ones.
step.model @unknown_sam {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{unknown SAM setting 'asam'; expected one of none, sam}}
  step.config { sam = asam }
}

// -----

// Tests that a SAM flag needs true or false.
step.model @sam_adaptive_integer {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-error @+1 {{'sam' parameter 'adaptive' expects true or false, found 1 : i64}}
  step.config { sam = sam(adaptive = 1) }
}

// -----

// Tests that a model has at most one config, with a note at the first.
step.model @two_configs {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
  // expected-note @+1 {{the first step.config is here}}
  step.config {}
  // expected-error @+1 {{'step.config' op is a second training config; a model has at most one}}
  step.config {}
}

// -----

// Tests that a config outside a model is rejected.
func.func @config_outside_model() {
  // expected-error @+1 {{'step.config' op expects parent op 'step.model'}}
  step.config {}
  return
}

// -----

// Tests that a model cannot be nested in a model.
step.model @nested_model {
  %w = step.param "w" [] f32 = zeros
  // expected-error @+1 {{'step.model' op expects parent op 'builtin.module'}}
  step.model @inner {
    %v = step.param "v" [] f32 = zeros
    step.loss %v
  }
  step.loss %w
}

// -----

// Tests that an overflowing dim expression is an error, not a wrapped size.
step.model @dim_expression_overflow {
  // expected-error @+1 {{dimension expression exceeds 2^48}}
  %w = step.param "w" [4294967297 * 4294967297] f32 = zeros
}

// -----

// Tests that a shape whose element count overflows is an error.
step.model @element_count_overflow {
  // expected-error @+1 {{the shape has more than 2^48 elements}}
  %w = step.param "w" [4294967296, 4294967296, 4] f32 = zeros
}

// -----

// Tests that dim names must be identifiers (a quoted name could never be used in a shape).
// expected-error @+1 {{expected a dim name (an identifier such as B or depth)}}
step.model @quoted_dim_name dims("my dim" = 4) {
  %w = step.param "w" [] f32 = zeros
  step.loss %w
}

// -----

// Tests that the missing-initialiser error uses the right article.
step.model @initialiser_article {
  // expected-error @+2 {{expected an initialiser (one of zeros, ones, constant, normal, uniform, orthogonal)}}
  %w = step.param "w" [4] f32 = 
}

// -----

// Tests that ids whose range the model fixes must fit what they index (compiled code clamps
// ids; these it need not): a token input's vocabulary against an embedding table's rows...
step.model @embedding_ids_past_table {
  %tokens, %targets = step.input "tokens" [2, 4] i32 = token_stream(vocab = 300)
  %table = step.param "table" [256, 8] f32 = zeros
  // expected-error @+1 {{the table has 256 rows but the ids come from token_stream(vocab = 300) (values up to 299): they would index past it}}
  %e = step.embedding %table, %tokens
}

// -----

// ...positions (an iota over 16) against a position table of 8 rows...
step.model @positions_past_table {
  %tokens, %targets = step.input "tokens" [2, 16] i32 = token_stream(vocab = 64)
  %wpe = step.param "wpe" [8, 4] f32 = zeros
  %positions = step.iota %tokens {axis = 1, dtype = i32}
  // expected-error @+1 {{the table has 8 rows but the ids come from an iota along an axis of 16 (values up to 15): they would index past it}}
  %p = step.embedding %wpe, %positions
}

// -----

// ...and labels of 10 classes against logits of 4.
step.model @labels_past_logits {
  %x, %labels = step.input "data" [8, 4] f32 = classification(classes = 10)
  // expected-error @+1 {{the logits have 4 classes but the targets come from classification(classes = 10) (values up to 9): they would index past it}}
  %loss = step.cross_entropy %x, %labels
}
