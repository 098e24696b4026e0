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
