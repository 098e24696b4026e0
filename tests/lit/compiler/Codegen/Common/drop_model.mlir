// Tests --step-drop-model: once the step program's functions are lowered, the step.model (with
// the step.func it holds) is erased and everything else is left as it was; a function that
// still holds a step op is a lowering gap and is refused with the op's location.
//
// RUN: %stepc-opt %s -split-input-file --step-drop-model -verify-diagnostics | FileCheck %s

// Tests that the model and its step.func are gone, the lowered function, the module's
// attributes and a non-step global op stay, and nothing of the step dialect is left.
// CHECK-LABEL: module attributes {step.program = "{}"}
// CHECK-NOT: {{step\.(model|func|input|param|matmul|gelu|return|call|cross_entropy|loss|relu|add)}}
// CHECK: memref.global "private" constant @table : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]>
// CHECK-NOT: {{step\.(model|func|input|param|matmul|gelu|return|call|cross_entropy|loss|relu|add)}}
// CHECK: func.func @train_step(%{{.+}}: tensor<4x8xf32> {step.name = "w", step.role = "param"}) -> tensor<4x8xf32>
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[R:.+]] = linalg.copy
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: {{step\.(model|func|input|param|matmul|gelu|return|call|cross_entropy|loss|relu|add)}}
module attributes {step.program = "{}"} {
  step.model @with_library dims(B = 4, D = 8) {
    step.func @dense_gelu(%x: [B, D] f32, %w: [D, D] f32) -> [B, D] f32 {
      %h = step.matmul %x, %w
      %y = step.gelu %h
      step.return %y
    }
    %x, %y = step.input "data" [B, D] f32 = classification(classes = 8)
    %w1 = step.param "w1" [D, D] f32 = orthogonal
    %a = step.call @dense_gelu(%x, %w1)
    %loss = step.cross_entropy %a, %y
    step.loss %loss
  }
  memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
  func.func @train_step(%w: tensor<4x8xf32> {step.name = "w", step.role = "param"}) -> tensor<4x8xf32> {
    %e = tensor.empty() : tensor<4x8xf32>
    %r = linalg.copy ins(%w : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    return %r : tensor<4x8xf32>
  }
}

// -----

// Tests that a step op left in a function is reported once, at the op, naming the function;
// the second leftover op gets no diagnostic (-verify-diagnostics would fail on it) and the
// model is not erased (the chunk prints nothing, so CHECK sees no @half_lowered).
// CHECK-NOT: @half_lowered
module {
  step.model @half_lowered {
    %x, %y = step.input "data" [4, 3] f32 = classification(classes = 2)
    %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
    %logits = step.matmul %x, %w
    %loss = step.cross_entropy %logits, %y
    step.loss %loss
  }
  func.func @train_step(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    // expected-error @+1 {{the CPU backend cannot lower 'step.relu' yet (in @train_step); it is missing from --step-lower-to-linalg}}
    %0 = step.relu %x : tensor<2x3xf32>
    %1 = step.relu %0 : tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
}

// -----

// Tests that a step op nested in a region (here an scf.for body) of a later function is found
// too, after a clean first function.
module {
  func.func @eval_loss(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    return %x : tensor<2x3xf32>
  }
  func.func @train_step(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %x) -> (tensor<2x3xf32>) {
      // expected-error @+1 {{the CPU backend cannot lower 'step.sigmoid' yet (in @train_step)}}
      %s = step.sigmoid %acc : tensor<2x3xf32>
      scf.yield %s : tensor<2x3xf32>
    }
    return %r : tensor<2x3xf32>
  }
}
