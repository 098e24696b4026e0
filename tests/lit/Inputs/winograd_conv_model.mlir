// Two causal convolutions that --conv-algorithm=winograd computes by Winograd's F(m, K):
// K = 7 (F(4, 7): α = 10) and K = 5, with different input and output widths, and a sequence
// (S = 30) that is not a multiple of the tile (4 or 6), so the last tile's outputs past S are
// computed and dropped, and the weight gradient's tiles past S read a zero gradient.
// winograd_conv.test trains it against the interpreter.
step.model @winograd_conv dims(B = 4, S = 30, C = 24, D = 40, V = 64) {
  %tokens, %targets = step.input "bytes" [B, S] i32 = token_stream(vocab = V)
  %table = step.param "embedding" [V, C] f32 = normal(std = 0.5)
  %x = step.embedding %table, %tokens                               // [B, S, C]
  %w1 = step.param "w1" [7, C, D] f32 = normal(std = 0.1)
  %h1 = step.conv1d %x, %w1 {padding = "causal"}                    // [B, S, D]
  %a1 = step.gelu %h1
  %w2 = step.param "w2" [5, D, C] f32 = normal(std = 0.1)
  %h2 = step.conv1d %a1, %w2 {padding = "causal"}                   // [B, S, C]
  %r = step.add %x, %h2
  %head = step.param "head" [C, V] f32 = normal(std = 0.1)
  %logits = step.matmul %r, %head
  %loss = step.cross_entropy %logits, %targets
  step.loss %loss
  step.config { optimizer = adamw(lr = 0.01) }
}
