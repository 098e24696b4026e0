// RUN: %stepc-opt %s -split-input-file --step-build-train-step -verify-diagnostics

// Tests that micro-batches must divide the batch.
// expected-error @+1 {{micro_batches = 3 must divide the batch size 4}}
step.model @bad_micro_batches {
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 2)
  %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  %loss = step.cross_entropy %logits, %y
  step.loss %loss
  step.config { micro_batches = 3 }
}

// -----

// Tests that a summed loss is refused with micro-batches, at the sum: their average would be
// 1/K of the full batch's loss.
step.model @summed_loss_micro_batches {
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 2)
  %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  // expected-error @+1 {{micro_batches = 2 averages the micro-batches' losses, so this summed loss would be 1/2 of the full batch's; use a mean over the batch (cross_entropy's default reduction = "mean", or step.mean) or micro_batches = 1}}
  %loss = step.cross_entropy %logits, %y {reduction = "sum"}
  step.loss %loss
  step.config { micro_batches = 2 }
}

// -----

// Tests that a step.sum loss is refused the same way.
step.model @step_sum_loss_micro_batches {
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 2)
  %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  %per = step.cross_entropy %logits, %y {reduction = "none"}
  // expected-error @+1 {{micro_batches = 4 averages the micro-batches' losses}}
  %loss = step.sum %per {axes = [0]}
  step.loss %loss
  step.config { micro_batches = 4 }
}

// -----

// Tests that SAM on the next batch needs an even batch.
// expected-error @+1 {{SAM with next_batch needs an even batch, found 5}}
step.model @odd_batch_next_batch_sam {
  %x, %y = step.input "data" [5, 3] f32 = classification(classes = 2)
  %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  %loss = step.cross_entropy %logits, %y
  step.loss %loss
  step.config { sam = sam(rho = 0.05, next_batch = true) }
}

// -----

// Tests that a schedule must end after its warmup.
// expected-error @+1 {{the LR schedule needs total > warmup, found total = 10, warmup = 10}}
step.model @bad_schedule {
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 2)
  %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  %loss = step.cross_entropy %logits, %y
  step.loss %loss
  step.config { schedule = warmup_cosine(warmup = 10, total = 10) }
}

// -----

// Tests that a model without parameters has nothing to train.
// expected-error @+1 {{the model has no parameters to train (declare them with step.param)}}
step.model @no_parameters {
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 3)
  %loss = step.cross_entropy %x, %y
  step.loss %loss
}

// -----

// Tests that hyperparameters are range-checked at the config.
step.model @beta_out_of_range {
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 2)
  %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  %loss = step.cross_entropy %logits, %y
  step.loss %loss
  // expected-error @+1 {{beta1 must be in [0, 1), found 1}}
  step.config { optimizer = adam(lr = 0.01, beta1 = 1.0) }
}

// -----

// Tests that a negative clipping norm is refused rather than flipping the gradient.
step.model @negative_max_norm {
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 2)
  %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  %loss = step.cross_entropy %logits, %y
  step.loss %loss
  // expected-error @+1 {{max_norm must be positive, found -1}}
  step.config { clip = global_norm(max_norm = -1.0) }
}
