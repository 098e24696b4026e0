// RUN: %stepc-opt %s -split-input-file -verify-diagnostics

// Tests that a reversible layer must be an additive coupling: here the carried value is
// multiplied, which no closed form inverts (a y = x * g(x) layer).
func.func @not_additive(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is reversible, but its layer cannot be inverted: carried value #0 is not an additive coupling: the layer must yield x + g(...) or x * c + g(...)}}
  %y = step.repeat "cell" 3 (%h = %x : tensor<4xf32>) reversible {
    %t = step.tanh %h : tensor<4xf32> -> tensor<4xf32>
    %n = step.mul %h, %t : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    step.yield %n : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// Tests that a coupling term may not read the input it would recover (y = x + f(x) has no
// closed-form inverse: that is a residual layer, not a reversible one).
func.func @residual(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{carried value #0: its coupling term depends on the input it would recover}}
  %y = step.repeat "cell" 3 (%h = %x : tensor<4xf32>) reversible {
    %t = step.tanh %h : tensor<4xf32> -> tensor<4xf32>
    %n = step.add %h, %t : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    step.yield %n : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// Tests that two streams whose terms read each other's inputs cannot be solved one after the
// other.
func.func @circular(%x: tensor<4xf32>, %z: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{carried value #0: its coupling term depends on the input it would recover (or on another that cannot be recovered first)}}
  %y:2 = step.repeat "cell" 3 (%a = %x : tensor<4xf32>, %b = %z : tensor<4xf32>) reversible {
    %fb = step.tanh %b : tensor<4xf32> -> tensor<4xf32>
    %fa = step.tanh %a : tensor<4xf32> -> tensor<4xf32>
    %a1 = step.add %a, %fb : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %b1 = step.add %b, %fa : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    step.yield %a1, %b1 : tensor<4xf32>, tensor<4xf32>
  }
  return %y#0, %y#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a scale must be a nonzero constant (dividing by a computed value could divide by 0).
func.func @computed_scale(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{carried value #0 is not an additive coupling}}
  %y = step.repeat "cell" 3 (%h = %x : tensor<4xf32>) reversible {
    %k = step.mul %h, %s : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    %one = step.constant {value = dense<1.0> : tensor<4xf32>}
    %n = step.add %k, %one : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    step.yield %n : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// Tests that `streams` must be a float type.
func.func @streams_not_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{takes `streams` (the float type its carried streams and their coupling are held in) as a float type, found i64}}
  %y = step.repeat "cell" 3 (%h = %x : tensor<4xf32>) attributes {streams = i64} {
    %t = step.tanh %h : tensor<4xf32> -> tensor<4xf32>
    step.yield %t : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// Tests that `streams` may not be narrower than the carried values.
func.func @streams_narrower(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{holds its carried streams in 'f32', which must be a float type at least as wide as each of them, found a carried 'tensor<4xf64>'}}
  %y = step.repeat "cell" 3 (%h = %x : tensor<4xf64>) attributes {streams = f32} {
    %t = step.tanh %h : tensor<4xf64> -> tensor<4xf64>
    step.yield %t : tensor<4xf64>
  }
  return %y : tensor<4xf64>
}

// -----

// Tests that wide streams need a coupling even when the repeat is not reversible (a stored
// twin computes the same function): here the layer yields tanh(h).
func.func @streams_no_coupling(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{holds its streams in 'f64', which needs each carried output to be a coupling x + g or x * c + g, but: carried value #0 is not an additive coupling}}
  %y = step.repeat "cell" 3 (%h = %x : tensor<4xf32>) attributes {streams = f64} {
    %t = step.tanh %h : tensor<4xf32> -> tensor<4xf32>
    step.yield %t : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
