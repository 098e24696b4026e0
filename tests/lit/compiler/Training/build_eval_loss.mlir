// Tests --step-build-eval-loss: next to @train_step (the `train` stage) it adds @eval_loss,
// the forward pass and the loss of the params on a batch, with no gradient and no update; the
// arguments carry the roles and names of @train_step's. The error case is the file's own input.
//
// RUN: %stepc compile %models/mlp.mlir --config=tiny --emit=train -o %t
// RUN: %stepc-opt %t --step-build-eval-loss | FileCheck %s
// RUN: %stepc-opt %t --step-build-eval-loss | %stepc-opt --step-build-eval-loss | FileCheck %s --check-prefix=AGAIN
// RUN: %stepc-opt %s -split-input-file --step-build-eval-loss -verify-diagnostics
// Evaluation is inference: a model's dropout is in @train_step, not in @eval_loss.
// RUN: %stepc compile %inputs/dropout_model.mlir --emit=train -o %t.drop
// RUN: %stepc-opt %t.drop --step-build-eval-loss | FileCheck %s --check-prefix=DROPOUT
// DROPOUT: func.func @train_step(
// DROPOUT: step.dropout
// DROPOUT-LABEL: func.func @eval_loss(
// DROPOUT-NOT: step.dropout
// DROPOUT: return
// And so is gpt2_moe's router jitter (in a step.func the layers call).
// RUN: %stepc compile %models/gpt2_moe.mlir --config=tiny --emit=train -o %t.moe
// RUN: %stepc-opt %t.moe --step-build-eval-loss | FileCheck %s --check-prefix=JITTER
// JITTER: func.func @train_step(
// JITTER: step.jitter
// JITTER-LABEL: func.func @eval_loss(
// JITTER-NOT: step.jitter
// JITTER: return

// CHECK-LABEL: func.func @eval_loss(
// CHECK-SAME: %[[W1:arg[0-9]+]]: tensor<8x16xf32> {step.name = "w1", step.role = "param"}
// CHECK-SAME: %[[B3:arg[0-9]+]]: tensor<4xf32> {step.name = "b3", step.role = "param"}
// CHECK-SAME: %[[X:arg[0-9]+]]: tensor<8x8xf32> {step.index = 0 : i64, step.name = "data", step.role = "input"}
// CHECK-SAME: %[[Y:arg[0-9]+]]: tensor<8xi32> {step.index = 1 : i64, step.name = "data", step.role = "input"}) -> tensor<f32> {
// CHECK: step.matmul %[[X]], %[[W1]]
// CHECK-NOT: step.differentiate
// CHECK: %[[LOGITS:.+]] = step.add %{{.+}}, %[[B3]]
// CHECK: %[[LOSS:.+]] = step.cross_entropy %[[LOGITS]], %[[Y]]
// CHECK-NEXT: return %[[LOSS]] : tensor<f32>
// CHECK-NEXT: }

// An @eval_loss already there is kept: advancing a dump again adds no second one.
// AGAIN: func.func @eval_loss(
// AGAIN-NOT: func.func @eval_loss

// Tests that the pass needs the `train` stage: a model without its @train_step.
// expected-error @+1 {{expected one step.model and its func @train_step (the `train` stage)}}
module {
  step.model @no_train_step {
    %x, %y = step.input "data" [4, 3] f32 = classification(classes = 2)
    %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
    %logits = step.matmul %x, %w
    %loss = step.cross_entropy %logits, %y
    step.loss %loss
    step.config { optimizer = sgd(lr = 0.1) }
  }
}
