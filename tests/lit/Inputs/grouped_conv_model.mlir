// Grouped causal and valid convolutions (groups > 1), which lower to generic kernels rather
// than GEMMs: their maps index the weight by the output channel's group and the input by a
// shifted position, the maps the tiling once sliced wrongly (TileKernels' `sliceable`).
// compiled_vs_interpreter.test trains it against the interpreter; the sizes make the kernels
// tiled over both threads.
// Q = C / 4 and H = C / 2: the per-group input channels.
step.model @grouped_conv dims(B = 8, S = 64, C = 32, K = 3, V = 64, Q = 8, H = 16) {
  %tokens, %targets = step.input "bytes" [B, S] i32 = token_stream(vocab = V)
  %table = step.param "embedding" [V, C] f32 = normal(std = 0.5)
  %x = step.embedding %table, %tokens                               // [B, S, C]
  %w1 = step.param "w1" [K, Q, C] f32 = normal(std = 0.2)
  %h1 = step.conv1d %x, %w1 {padding = "causal", groups = 4}        // [B, S, C]
  %a1 = step.gelu %h1
  %w2 = step.param "w2" [K, H, C] f32 = normal(std = 0.2)
  %h2 = step.conv1d %a1, %w2 {padding = "causal", groups = 2}       // [B, S, C]
  %r = step.add %x, %h2
  %head = step.param "head" [C, V] f32 = normal(std = 0.1)
  %logits = step.matmul %r, %head
  %loss = step.cross_entropy %logits, %targets
  step.loss %loss
  step.config { optimizer = adamw(lr = 0.01) }
}
