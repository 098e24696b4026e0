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
