// RUN: %stepc-opt %s -split-input-file -verify-diagnostics

// Tests that calling a function before it is declared is a located error.
step.model @call_before_declaration {
  %x, %y = step.input "data" [4, 8] f32 = classification(classes = 8)
  // expected-error @+1 {{call of unknown function @later; declare it with step.func before its first call}}
  %a = step.call @later(%x)
  %loss = step.cross_entropy %a, %y
  step.loss %loss
}

// -----

// Tests that the argument count of a call is checked.
step.model @wrong_argument_count {
  step.func @id(%x: [4, 8] f32) -> [4, 8] f32 {
    step.return %x
  }
  %x, %y = step.input "data" [4, 8] f32 = classification(classes = 8)
  // expected-error @+1 {{@id takes 1 arguments, found 2}}
  %a = step.call @id(%x, %x)
  %loss = step.cross_entropy %a, %y
  step.loss %loss
}

// -----

// Tests that argument shapes must match the signature.
step.model @wrong_argument_shape {
  step.func @id(%x: [4, 9] f32) -> [4, 9] f32 {
    step.return %x
  }
  %x, %y = step.input "data" [4, 8] f32 = classification(classes = 8)
  // expected-error @+1 {{passes ('tensor<4x8xf32>') to @id, which takes ('tensor<4x9xf32>')}}
  %a = step.call @id(%x)
  %l = step.mean %x {axes = [0, 1]}
  step.loss %l
}

// -----

// Tests that the returned values must match the declared result types.
step.model @wrong_return {
  step.func @shrink(%x: [4, 8] f32) -> [4, 8] f32 {
    %s = step.sum %x {axes = [1]}
    // expected-error @+1 {{the signature of @shrink says ('tensor<4x8xf32>')}}
    step.return %s
  }
  %x, %y = step.input "data" [4, 8] f32 = classification(classes = 8)
  %l = step.mean %x {axes = [0, 1]}
  step.loss %l
}

// -----

// Tests that a function cannot declare parameters (they are passed in as arguments).
step.model @param_in_function {
  step.func @f(%x: [4, 8] f32) -> [4, 8] f32 {
    // expected-error @+1 {{must be in a step.model or step.repeat body}}
    %w = step.param "w" [8, 8] f32 = zeros
    %h = step.matmul %x, %w
    step.return %h
  }
  %x, %y = step.input "data" [4, 8] f32 = classification(classes = 8)
  %l = step.mean %x {axes = [0, 1]}
  step.loss %l
}

// -----

// Tests that step functions cannot recurse (calls are inlined when the step is built).
step.model @recursive_function {
  step.func @f(%x: [3] f32) -> [3] f32 {
    // expected-error @+1 {{'step.call' op makes the call cycle through @f recursive; step functions cannot recurse}}
    %y = step.call @f(%x)
    step.return %y
  }
  %w = step.param "w" [3] f32 = ones
  %a = step.call @f(%w)
  %l = step.sum %a {axes = [0]}
  step.loss %l
}
