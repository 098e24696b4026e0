// An MLP classifier on the built-in generated classification set.
// Shapes are written only on declarations; every other type is inferred. --config=tiny: @mlp_tiny.
step.model @mlp dims(B = 64, D = 32, H = 128, C = 10) configs(tiny = (B = 8, D = 8, H = 16, C = 4)) {
  %x, %labels = step.input "data" [B, D] f32 = classification(classes = C)

  %w1 = step.param "w1" [D, H] f32 = normal(std = rsqrt(D))
  %b1 = step.param "b1" [H] f32 = zeros
  %w2 = step.param "w2" [H, H] f32 = normal(std = rsqrt(H))
  %b2 = step.param "b2" [H] f32 = zeros
  %w3 = step.param "w3" [H, C] f32 = normal(std = rsqrt(H))
  %b3 = step.param "b3" [C] f32 = zeros

  %h1 = step.matmul %x, %w1
  %h1b = step.add %h1, %b1
  %a1 = step.gelu %h1b
  %h2 = step.matmul %a1, %w2
  %h2b = step.add %h2, %b2
  %a2 = step.gelu %h2b
  %logits0 = step.matmul %a2, %w3
  %logits = step.add %logits0, %b3
  %loss = step.cross_entropy %logits, %labels
  step.loss %loss

  step.config {
    optimizer = adamw(lr = 1.0e-3, weight_decay = 0.01, no_decay = ["b*"]),
    schedule = warmup_cosine(warmup = 20, total = 500),
    clip = global_norm(max_norm = 1.0),
    sam = none
  }
}
