// HomebrewNLP's byte-level language model as it trains it: a reversible MomentumNet stack
// (revlib's momentum_net), so activation memory stays flat in depth. The residual stack of the
// same cells is models/byte_lm_residual.mlir.
//
// Tokens are raw bytes (vocabulary 256). Activations are channels-last, [B, S, C]. The byte
// embedding has width 2F and splits into two streams of width F, a (velocity) and x (position).
// Each of the `depth` layers applies the cell f of byte_lm_residual.mlir (1x1 conv F -> 3I, causal
// running mean, TripleNorm, causal conv K, TripleNorm, 1x1 conv I -> F) and couples:
//
//     a' = a + f(x)
//     x' = beta * x + (1 - beta) * a'                      (beta = 0.9, revlib's default)
//
// Source: revlib/utils.py momentum_net (HomebrewNLP/revlib) runs, per layer i,
// a_{i+1} = a_i + f_i(beta^i b_i) and b_{i+1} = b_i + (1 - beta) / beta^(i+1) a_{i+1}; with
// x_i = beta^i b_i that is exactly the pair above, which needs neither beta^-i (it overflows
// f16 after ~105 layers) nor the layer index. The head reads [a_L, x_L] concatenated
// (HomebrewNLP's 2F -> 256 head; revlib's second output stream is x_L / beta^L, a constant
// scale a learned linear head absorbs, left out here). `momentum(beta = 0.9)` on the repeat
// writes that coupling around the cell (the body yields f(x); `--emit=model` shows the
// expansion: a `reversible` repeat) and the compiler inverts it: x = (x' - (1 - beta) a') / beta,
// then a = a' - f(x), so the backward rebuilds each layer's inputs from its outputs and stores
// nothing per layer.
//
// `streams = f64`: a and x, and the coupling's adds and scalings, are held in f64 while f
// computes in f32 (it reads x rounded to f32; f(x) and (1 - beta) a' are widened). The
// rebuild's rounding is then 2^-53 instead of 2^-24 per layer, so the rebuilt x rounds back to
// the forward's f32 bits and the rebuild error, which compounds about 1.4x per layer, stays
// negligible: at depth 64 the gradients equal the stored model's bit for bit, against 6e-5
// apart with f32 streams (benchmarks/reversible.py). The price: the two streams (not the
// activations) take twice the bytes.
// Init gains follow HomebrewNLP: embedding 2^-0.5, w0 and w1 1/0.5893595616, w2 1.
//
// Configurations (--config=NAME; the model is then @byte_lm_NAME):
//   small  HomebrewNLP's "small" shape: intermediate I = 32, kernel K = 11
//   tiny   for tests: well under a second per step
step.model @byte_lm dims(B = 16, S = 256, F = 256, I = 512, K = 7, depth = 8)
    configs(small = (I = 32, K = 11),
            tiny = (B = 2, S = 16, F = 16, I = 8, K = 3, depth = 2)) {
  %tokens, %targets = step.input "bytes" [B, S] i32 = token_stream(vocab = 256)
  %table = step.param "embedding" [256, 2 * F] f32 = orthogonal(gain = 0.70710678)
  %e = step.embedding %table, %tokens                        // [B, S, 2F]
  %a0, %x0 = step.split %e {axis = -1, parts = 2}            // two streams [B, S, F]

  %aL, %xL = step.repeat "cell" depth (%a = %a0, %x = %x0) momentum(beta = 0.9, streams = f64) {
    %w0 = step.param "w0" [F, 3 * I] f32 = orthogonal(gain = 1.6967316)
    %w1 = step.param "w1" [K, I, 3 * I] f32 = orthogonal(gain = 1.6967316)
    %w2 = step.param "w2" [I, F] f32 = orthogonal(gain = 1.0)

    %p = step.matmul %x, %w0                                 // [B, S, 3I]
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
    %f = step.matmul %n2, %w2                                // f(x): [B, S, F]
    step.yield %f          // momentum(beta) adds the coupling (and makes the repeat reversible)
  }

  %out = step.concat %aL, %xL {axis = -1}                    // [B, S, 2F]
  %head = step.param "head" [2 * F, 256] f32 = zeros
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
