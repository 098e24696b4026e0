// HomebrewNLP's byte-level language model with a mixture of experts, placed as HomebrewNLP's
// final MoE placed it: models/byte_lm.mlir (the reversible MomentumNet stack) with each cell's
// output projection (the 1x1 convolution I -> F) split into E experts, routed by HomebrewNLP's
// expert choice. The router (I -> E, f32) gives softmax probabilities over the experts; each
// expert in turn takes the Cap = N * k / E tokens (N = B * S) it scores highest among those
// not yet taken (step.route_experts, k = 1), so every token gets exactly one expert, the load
// is perfectly balanced and nothing is dropped. Each routed row is scaled by its chosen gate
// probability (the router's only gradient path, as in HomebrewNLP), the experts run as one
// batched GEMM over E on [E, Cap, I], and the rows are gathered back to token order.
// Dispatch, gate scale and combine are gathers by the routing's two maps (step.gather_rows):
// no sort, no scatter, no atomics, forward or backward.
//
// As in HomebrewNLP, the routing sees the whole batch, later positions included: expert
// choice is not causal (a token's expert depends on the other tokens' scores), which a
// language model trained this way accepts; HomebrewNLP never applied its auxiliary loss and
// expert choice needs none (the load is balanced by construction). With --micro-batches=K
// (and so --data-parallel) the routing sees one micro-batch's N / K tokens: stepc builds the
// micro-batch forward from this file read again at B / K.
// The routing is a function of the rounded streams, so the reversible rebuild (f64 streams:
// the rebuilt inputs equal the forward's bits) routes every layer exactly as the forward did.
//
// Configurations (--config=NAME; the model is then @byte_lm_moe_NAME):
//   small  HomebrewNLP's "small" shape (I = 32, K = 11), 8 experts
//   tiny   for tests: well under a second per step, 4 experts
step.model @byte_lm_moe dims(B = 16, S = 256, F = 256, I = 512, K = 7, depth = 8, E = 8,
                             N = B * S)
    configs(small = (I = 32, K = 11),
            tiny = (B = 2, S = 16, F = 16, I = 8, K = 3, depth = 2, E = 4)) {
  // Expert choice over the N tokens of x [N, I] (HomebrewNLP's): y [N, F].
  step.func @experts(%x: [N, I] f32, %w_router: [I, E] f32, %w: [E, I, F] f32) -> [N, F] f32 {
    %logits = step.matmul %x, %w_router                      // [N, E], f32
    %probs = step.softmax %logits {axis = -1}
    %choices, %slots, %experts = step.route_experts %probs {k = 1}
    %ids = step.iota {shape = [E], axis = 0, dtype = i32}
    %mine = step.compare %experts, %ids {predicate = "eq"}   // [N, E]: the token's expert
    %mask = step.cast %mine {to = f32}
    %picked = step.mul %probs, %mask
    %gate = step.sum %picked {axes = [-1], keepdim}          // [N, 1]
    %xe = step.gather_rows %x, %choices, %slots              // dispatch: [E, Cap, I]
    %ge = step.gather_rows %gate, %choices, %slots           // [E, Cap, 1]
    %xs = step.mul %xe, %ge
    %ye = step.batch_matmul %xs, %w                          // [E, Cap, F]
    %flat = step.reshape %ye {shape = [-1, F]}
    %yk = step.gather_rows %flat, %slots, %choices           // combine: [N, 1, F]
    %y = step.reshape %yk {shape = [N, F]}
    step.return %y
  }

  %tokens, %targets = step.input "bytes" [B, S] i32 = token_stream(vocab = 256)
  %table = step.param "embedding" [256, 2 * F] f32 = orthogonal(gain = 0.70710678)
  %e = step.embedding %table, %tokens                        // [B, S, 2F]
  %a0, %x0 = step.split %e {axis = -1, parts = 2}            // two streams [B, S, F]

  %aL, %xL = step.repeat "cell" depth (%a = %a0, %x = %x0) momentum(beta = 0.9, streams = f64) {
    %w0 = step.param "w0" [F, 3 * I] f32 = orthogonal(gain = 1.6967316)
    %w1 = step.param "w1" [K, I, 3 * I] f32 = orthogonal(gain = 1.6967316)
    %router = step.param "router" [I, E] f32 = normal(std = 0.02)
    %w2 = step.param "w2" [E, I, F] f32 = orthogonal(gain = 1.0)

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
    %n2f = step.reshape %n2 {shape = [N, I]}
    %ff = step.call @experts(%n2f, %router, %w2)
    %f = step.reshape %ff {shape = [B, S, F]}                // f(x): [B, S, F]
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
