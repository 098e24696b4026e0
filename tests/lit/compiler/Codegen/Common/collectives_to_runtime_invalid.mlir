// Tests --step-collectives-to-runtime's errors: a collective it does not know, a buffer the
// f32 all-reduce or all-gather cannot take, a reduce-scatter start without its owner call.
//
// RUN: %stepc-opt %s -split-input-file -verify-diagnostics --step-collectives-to-runtime

func.func @unknown(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{unknown collective 'all_to_all'}}
  linalg.copy {step.collective = "all_to_all"} ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}

// -----

func.func @f64(%a: memref<4xf64>, %b: memref<4xf64>) {
  // expected-error @+1 {{the all-reduce expects a static f32 buffer, found 'memref<4xf64>'}}
  linalg.copy {step.collective = "all_reduce_sum"} ins(%a : memref<4xf64>) outs(%b : memref<4xf64>)
  return
}

// -----

func.func @gather_f64(%a: memref<4xf64>, %b: memref<4xf64>) {
  // expected-error @+1 {{the all-gather expects a static f32 buffer, found 'memref<4xf64>'}}
  linalg.copy {step.collective = "all_gather"} ins(%a : memref<4xf64>) outs(%b : memref<4xf64>)
  return
}

// -----

// A reduce-scatter's start needs the owner call the lowering puts before it.
func.func @orphan(%g: memref<4x3xf32>, %s: memref<4x3xf32>) {
  // expected-error @+1 {{a reduce-scatter's start without its owner call before it (a compiler bug)}}
  linalg.copy {step.collective = "reduce_scatter_start"} ins(%g : memref<4x3xf32>) outs(%s : memref<4x3xf32>)
  return
}
