// HomebrewNLP's byte-level language model's cells as a plain residual stack: the same cell as
// models/byte_lm.mlir (HomebrewNLP's reversible MomentumNet), x' = x + f(x), every layer's
// activations kept for the backward. The CPU benchmarks against PyTorch use it (a PyTorch user
// writes this stack directly).
//
// Tokens are raw bytes (vocabulary 256). Activations are channels-last, [B, S, C]. Each cell:
//   1. 1x1 conv F -> 3I, split into depth / scale / shift;
//   2. causal running mean of depth: cumsum over the sequence / position (its "linear attention");
//   3. TripleNorm(a, b, c) = relu(a)^3 * b + c, centred over features, scaled to unit RMS;
//   4. causal conv with kernel K, I -> 3I;
//   5. TripleNorm on its three chunks;
//   6. 1x1 conv I -> F;
//   7. residual add.
// Then a zero-initialised 1x1 conv head to 256 classes and byte cross-entropy.
// Init gains follow HomebrewNLP: embedding 2^-0.5, w0 and w1 1/0.5893595616, w2 1.
//
// Configurations (--config=NAME; the model is then @byte_lm_residual_NAME):
//   small  HomebrewNLP's "small" shape: intermediate I = 32, kernel K = 11
//   tiny   for tests: well under a second per step
step.model @byte_lm_residual dims(B = 16, S = 256, F = 256, I = 512, K = 7, depth = 8)
    configs(small = (I = 32, K = 11),
            tiny = (B = 2, S = 16, F = 16, I = 8, K = 3, depth = 2)) {
  %tokens, %targets = step.input "bytes" [B, S] i32 = token_stream(vocab = 256)
  %table = step.param "embedding" [256, F] f32 = orthogonal(gain = 0.70710678)
  %x = step.embedding %table, %tokens                        // [B, S, F]

  %out = step.repeat "cell" depth (%h = %x) {
    %w0 = step.param "w0" [F, 3 * I] f32 = orthogonal(gain = 1.6967316)
    %w1 = step.param "w1" [K, I, 3 * I] f32 = orthogonal(gain = 1.6967316)
    %w2 = step.param "w2" [I, F] f32 = orthogonal(gain = 1.0)

    %p = step.matmul %h, %w0                                 // [B, S, 3I]
    %depth, %scale, %shift = step.split %p {axis = -1, parts = 3}
    %sum = step.cumsum %depth {axis = 1}
    %pos = step.iota %depth {axis = 1, dtype = f32, offset = 1}
    %mean = step.div %sum, %pos                              // causal running mean

    // TripleNorm(mean, scale, shift)
    %r1 = step.relu %mean
    %c1 = step.pow %r1 {exponent = 3.0}
    %g1 = step.mul %c1, %scale
    %t1 = step.add %g1, %shift
    %m1 = step.mean %t1 {axes = [-1], keepdim}
    %z1 = step.sub %t1, %m1
    %q1 = step.mul %z1, %z1
    %v1 = step.mean %q1 {axes = [-1], keepdim}
    %s1 = step.rsqrt %v1
    %n1 = step.mul %z1, %s1                                  // [B, S, I]

    %conv = step.conv1d %n1, %w1 {padding = "causal"}        // [B, S, 3I]
    %a2, %b2, %c2 = step.split %conv {axis = -1, parts = 3}

    // TripleNorm(a2, b2, c2)
    %r2 = step.relu %a2
    %cube2 = step.pow %r2 {exponent = 3.0}
    %g2 = step.mul %cube2, %b2
    %t2 = step.add %g2, %c2
    %m2 = step.mean %t2 {axes = [-1], keepdim}
    %z2 = step.sub %t2, %m2
    %q2 = step.mul %z2, %z2
    %v2 = step.mean %q2 {axes = [-1], keepdim}
    %s2 = step.rsqrt %v2
    %n2 = step.mul %z2, %s2                                  // [B, S, I]

    %y = step.matmul %n2, %w2                                // [B, S, F]
    %next = step.add %h, %y
    step.yield %next
  }

  %head = step.param "head" [F, 256] f32 = zeros
  %logits = step.matmul %out, %head                          // [B, S, 256]
  %loss = step.cross_entropy %logits, %targets
  step.loss %loss

  step.config {
    optimizer = adamw(lr = 1.0e-3, beta1 = 0.9, beta2 = 0.95, eps = 1.0e-8, weight_decay = 0.01),
    schedule = one_cycle(warmup = 100, total = 10000, start_lr = 3.0e-4, final_lr = 3.0e-5),
    clip = agc(lambda = 0.01, eps_param = 1.0e-3, eps_grad = 1.0e-6),
    sam = sam(rho = 0.05, adaptive = true)
  }
}
