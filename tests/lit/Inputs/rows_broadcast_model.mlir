// Elementwise and row-reduction kernels on [B, S, 32] activations with [B, S, 1] row
// statistics (the shapes of byte_lm_residual_small's norms), and nothing that transposes:
// object_emitter_vectorizes_rows.test checks that none of its kernels gathers or scatters.
step.model @rows_broadcast dims(B = 16, S = 256, C = 32, V = 256) {
  %tokens, %targets = step.input "bytes" [B, S] i32 = token_stream(vocab = V)
  %table = step.param "embedding" [V, C] f32 = normal(std = 0.5)
  %x = step.embedding %table, %tokens                     // [B, S, C]
  %m = step.mean %x {axes = [-1], keepdim}                // [B, S, 1]
  %z = step.sub %x, %m
  %q = step.mul %z, %z
  %v = step.mean %q {axes = [-1], keepdim}
  %s = step.rsqrt %v
  %n = step.mul %z, %s                                    // [B, S, C]
  %head = step.param "head" [C, V] f32 = normal(std = 0.1)
  %logits = step.matmul %n, %head
  %loss = step.cross_entropy %logits, %targets
  step.loss %loss
  step.config { optimizer = adamw(lr = 0.01) }
}
