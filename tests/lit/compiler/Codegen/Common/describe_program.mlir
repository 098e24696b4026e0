// Tests --step-describe-program: on the `train` stage of a real model, with @eval_loss next to
// @train_step (--step-build-eval-loss, compiler/Training), it marks both for the bare-pointer
// calling convention, and writes the `step.program` JSON (params, optimizer state, inputs and the binding of every argument and
// result) that the runtime reads. The error cases below are the file's own input.
//
// RUN: %stepc compile %models/mlp.mlir --config=tiny --emit=train -o %t
// RUN: %stepc-opt %t --step-build-eval-loss --step-describe-program | FileCheck %s
// RUN: %stepc-opt %t --step-build-eval-loss --step-describe-program | %stepc-opt --step-build-eval-loss --step-describe-program | FileCheck %s --check-prefix=AGAIN
// RUN: %stepc-opt %s -split-input-file --step-build-eval-loss --step-describe-program -verify-diagnostics

// The description (MLIR prints its quotes as \22). mlp_tiny has six f32 params in declaration
// order with their init, AdamW's m and v slots (twelve state buffers), one classification
// input; 500 total steps come from the warmup_cosine schedule.
// CHECK: module attributes {step.program = "{\22name\22:\22mlp_tiny\22,\22fingerprint\22:\22mlp_tiny-{{[0-9a-f]+}}\22
// CHECK-SAME: \22defaultSteps\22:500,
// CHECK-SAME: \22params\22:[{\22name\22:\22w1\22,\22shape\22:[8,16],\22dtype\22:\22F32\22,\22stackedDims\22:0,\22init\22:{\22kind\22:\22normal\22
// CHECK-SAME: {\22name\22:\22b1\22,\22shape\22:[16],\22dtype\22:\22F32\22,\22stackedDims\22:0,\22init\22:{\22kind\22:\22zeros\22
// CHECK-SAME: {\22name\22:\22b3\22,\22shape\22:[4],
// CHECK-SAME: \22state\22:[{\22slot\22:\22m\22,\22param\22:\22w1\22,\22shape\22:[8,16],\22dtype\22:\22F32\22}
// CHECK-SAME: {\22slot\22:\22v\22,\22param\22:\22b3\22,\22shape\22:[4],\22dtype\22:\22F32\22}],
// CHECK-SAME: \22inputs\22:[{\22name\22:\22data\22,\22source\22:\22classification\22,\22shape\22:[8,8],\22dtype\22:\22F32\22,\22classes\22:4}],
// @train_step's bindings, in argument order: params 0-5, state 0-11, the batch's two buffers
// (features = 2*input+0, labels = 2*input+1), the step counter; results: params, state, then
// the metrics by name.
// CHECK-SAME: \22train\22:{\22symbol\22:\22stepc_train_step\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0},{\22kind\22:\22param\22,\22index\22:1},{\22kind\22:\22param\22,\22index\22:2},{\22kind\22:\22param\22,\22index\22:3},{\22kind\22:\22param\22,\22index\22:4},{\22kind\22:\22param\22,\22index\22:5},{\22kind\22:\22state\22,\22index\22:0},
// CHECK-SAME: {\22kind\22:\22state\22,\22index\22:11},{\22kind\22:\22batch\22,\22index\22:0},{\22kind\22:\22batch\22,\22index\22:1},{\22kind\22:\22step\22}],
// CHECK-SAME: \22results\22:[{\22kind\22:\22param\22,\22index\22:0},
// CHECK-SAME: {\22kind\22:\22state\22,\22index\22:11},{\22kind\22:\22metric\22,\22metric\22:\22loss\22},{\22kind\22:\22metric\22,\22metric\22:\22grad_norm\22},{\22kind\22:\22metric\22,\22metric\22:\22lr\22}]},
// @eval_loss takes the params and the batch only, and its one unnamed result is the loss.
// CHECK-SAME: \22eval\22:{\22symbol\22:\22stepc_eval_loss\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0},{\22kind\22:\22param\22,\22index\22:1},{\22kind\22:\22param\22,\22index\22:2},{\22kind\22:\22param\22,\22index\22:3},{\22kind\22:\22param\22,\22index\22:4},{\22kind\22:\22param\22,\22index\22:5},{\22kind\22:\22batch\22,\22index\22:0},{\22kind\22:\22batch\22,\22index\22:1}],\22results\22:[{\22kind\22:\22metric\22,\22metric\22:\22loss\22}]}}"}
// Both entry points take plain pointers once lowered.
// CHECK: func.func @train_step(
// CHECK-SAME: attributes {llvm.bareptr}
// @eval_loss's arguments are read-only for bufferization: `eval` runs it batch after batch on
// the same parameters.
// CHECK: func.func @eval_loss(%{{.+}}: tensor<8x16xf32> {bufferization.writable = false, step.name = "w1", step.role = "param"},
// CHECK-SAME: %{{.+}}: tensor<8x8xf32> {bufferization.writable = false, step.index = 0 : i64, step.name = "data", step.role = "input"}, %{{.+}}: tensor<8xi32> {bufferization.writable = false, step.index = 1 : i64, step.name = "data", step.role = "input"}) -> tensor<f32> attributes {llvm.bareptr}
// CHECK: step.cross_entropy
// CHECK: return

// Running the passes again keeps the existing @eval_loss instead of adding a second one.
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

// -----

// Tests that a @train_step without any step.model is refused the same way.
// expected-error @+1 {{expected one step.model and its func @train_step (the `train` stage)}}
module {
  func.func @train_step(%w: tensor<3x2xf32> {step.name = "w", step.role = "param"}) -> tensor<3x2xf32> {
    return %w : tensor<3x2xf32>
  }
}

// -----

// Tests that an argument naming a parameter the model does not declare is reported on
// @train_step.
module {
  step.model @unknown_param {
    %x, %y = step.input "data" [4, 3] f32 = classification(classes = 2)
    %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
    %logits = step.matmul %x, %w
    %loss = step.cross_entropy %logits, %y
    step.loss %loss
    step.config { optimizer = sgd(lr = 0.1) }
  }
  // expected-error @+1 {{argument 0 is parameter 'v', which the model does not declare}}
  func.func @train_step(%v: tensor<3x2xf32> {step.name = "v", step.role = "param"}) -> tensor<3x2xf32> {
    return %v : tensor<3x2xf32>
  }
}
