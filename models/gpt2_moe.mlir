// GPT-2 with mixture-of-experts MLPs: models/gpt2_124m.mlir with each layer's MLP replaced by
// E = 8 experts of GPT-2's MLP shape (C -> 4C -> C, GELU), top-2 token choice (GShard / Switch).
// The router (C -> E, f32, its input jittered by a factor in [0.99, 1.01) while training, as
// Switch does) gives softmax probabilities; each token takes its two most likely
// experts, the two gates renormalised to sum to 1. Each expert holds
// Cap = ceil(1.25 * B * T * 2 / E) tokens; choices past an expert's capacity are dropped (the
// token keeps its residual there). The experts run as two batched GEMMs over E on [E, Cap, .]
// buffers of static shape; dispatch and combine are gathers by the routing's two maps
// (step.gather_rows), so the backward is gathers too: no scatter, no atomics.
// Auxiliary losses, added to the cross-entropy: Switch's load balancing
// alpha * E * sum_i f_i * P_i (f_i: the share of first choices going to expert i, P_i: its mean
// probability; alpha = 0.01) and the router z-loss beta * mean(logsumexp(logits)^2)
// (beta = 0.001), summed over the layers.
// --config=tiny (the model @gpt2_moe_tiny) is the tests' size: 4 heads of 8, 4 experts.
step.model @gpt2_moe dims(B = 4, T = 1024, V = 50304, C = 768, L = 12, NH = 12, HS = C div NH,
                         E = 8, N = B * T)
    configs(tiny = (B = 2, T = 16, V = 64, C = 32, L = 2, NH = 4, E = 4)) {
  // Token-choice top-2 MoE MLP over the N = B * T tokens of x: the layer output and its
  // auxiliary loss.
  step.func @moe_mlp(%x: [N, C] f32, %w_router: [C, E] f32, %w_fc: [E, C, 4 * C] f32,
                     %b_fc: [E, 1, 4 * C] f32, %w_proj: [E, 4 * C, C] f32,
                     %b_proj: [E, 1, C] f32) -> ([N, C] f32, [] f32) {
    // Switch's router jitter: during training the router sees x times factors drawn
    // uniformly from [0.99, 1.01) per element and step (the experts see x unchanged);
    // evaluation and sampling route x itself.
    %xr = step.jitter %x {eps = 0.01, seed = 17}
    %logits = step.matmul %xr, %w_router                        // [N, E]
    %probs = step.softmax %logits {axis = -1}
    %top, %experts = step.top_k %probs {k = 2}                  // [N, 2]
    %top_sum = step.sum %top {axes = [-1], keepdim}
    %gates = step.div %top, %top_sum
    %choices, %slots = step.route_tokens %experts {num_experts = E, capacity_factor = 1.25}
    %xe = step.gather_rows %x, %choices, %slots {group = 2}     // dispatch: [E, Cap, C]
    %h0 = step.batch_matmul %xe, %w_fc                          // [E, Cap, 4C]
    %h1 = step.add %h0, %b_fc
    %h = step.gelu %h1 {approximate = "tanh"}
    %ye0 = step.batch_matmul %h, %w_proj                        // [E, Cap, C]
    %ye1 = step.add %ye0, %b_proj
    %ye = step.reshape %ye1 {shape = [-1, C]}                   // [E * Cap, C]
    %yk = step.gather_rows %ye, %slots, %choices                // combine: [N, 2, C]
    %g = step.reshape %gates {shape = [0, 0, 1]}
    %weighted = step.mul %yk, %g
    %y = step.sum %weighted {axes = [1]}                        // [N, C]

    // Load balancing: alpha * E * sum_i f_i * P_i.
    %first = step.slice %experts {start = [0, 0], limit = [N, 1]}
    %ids = step.iota {shape = [E], axis = 0, dtype = i32}
    %hit = step.compare %first, %ids {predicate = "eq"}         // [N, E]
    %onehot = step.cast %hit {to = f32}
    %f = step.mean %onehot {axes = [0]}
    %p = step.mean %probs {axes = [0]}
    %fp = step.mul %f, %p
    %balance0 = step.sum %fp {axes = [0]}
    %alpha_e = step.constant {value = 0.01 * E}
    %balance = step.mul %balance0, %alpha_e
    // Router z-loss: beta * mean(logsumexp(logits)^2).
    %mx = step.reduce_max %logits {axes = [-1], keepdim}
    %shifted = step.sub %logits, %mx
    %ex = step.exp %shifted
    %se = step.sum %ex {axes = [-1], keepdim}
    %lse0 = step.log %se
    %lse = step.add %lse0, %mx
    %lse2 = step.mul %lse, %lse
    %z0 = step.mean %lse2 {axes = [0, 1]}
    %beta = step.constant {value = dense<0.001> : tensor<f32>}
    %z = step.mul %z0, %beta
    %aux = step.add %balance, %z
    step.return %y, %aux
  }

  %tokens, %targets = step.input "tokens" [B, T] i32 = token_stream(vocab = V)
  %wte = step.param "wte" [V, C] f32 = normal(std = 0.02)
  %wpe = step.param "wpe" [T, C] f32 = normal(std = 0.01)
  %positions = step.iota %tokens {axis = 1, dtype = i32}
  %tok_emb = step.embedding %wte, %tokens                      // [B, T, C]
  %pos_emb = step.embedding %wpe, %positions                   // [B, T, C]
  %x = step.add %tok_emb, %pos_emb

  %aux0 = step.constant {value = dense<0.0> : tensor<f32>}
  %out, %aux = step.repeat "h" L (%h = %x, %aux_in = %aux0) {
    %ln1_g = step.param "ln_1.weight" [C] f32 = ones
    %ln1_b = step.param "ln_1.bias" [C] f32 = zeros
    %w_qkv = step.param "attn.c_attn.weight" [C, 3 * C] f32 = normal(std = 0.02)
    %b_qkv = step.param "attn.c_attn.bias" [3 * C] f32 = zeros
    %w_o = step.param "attn.c_proj.weight" [C, C] f32 = normal(std = 0.02 * rsqrt(2 * L))
    %b_o = step.param "attn.c_proj.bias" [C] f32 = zeros
    %ln2_g = step.param "ln_2.weight" [C] f32 = ones
    %ln2_b = step.param "ln_2.bias" [C] f32 = zeros
    %w_router = step.param "moe.router.weight" [C, E] f32 = normal(std = 0.02)
    %w_fc = step.param "moe.c_fc.weight" [E, C, 4 * C] f32 = normal(std = 0.02)
    %b_fc = step.param "moe.c_fc.bias" [E, 1, 4 * C] f32 = zeros
    %w_proj = step.param "moe.c_proj.weight" [E, 4 * C, C] f32 = normal(std = 0.02 * rsqrt(2 * L))
    %b_proj = step.param "moe.c_proj.bias" [E, 1, C] f32 = zeros

    // Causal self-attention.
    %a = step.layer_norm %h, %ln1_g, %ln1_b
    %qkv0 = step.matmul %a, %w_qkv
    %qkv = step.add %qkv0, %b_qkv                               // [B, T, 3C]
    %q0, %k0, %v0 = step.split %qkv {axis = -1, parts = 3}
    %q1 = step.reshape %q0 {shape = [0, 0, NH, HS]}             // [B, T, NH, HS]
    %k1 = step.reshape %k0 {shape = [0, 0, NH, HS]}
    %v1 = step.reshape %v0 {shape = [0, 0, NH, HS]}
    %q = step.transpose %q1 {perm = [0, 2, 1, 3]}                // [B, NH, T, HS]
    %k = step.transpose %k1 {perm = [0, 2, 1, 3]}
    %v = step.transpose %v1 {perm = [0, 2, 1, 3]}
    %scores0 = step.batch_matmul %q, %k {transpose_rhs}         // [B, NH, T, T]
    %inv_sqrt_hs = step.constant {value = rsqrt(HS)}
    %scores = step.mul %scores0, %inv_sqrt_hs
    %row = step.iota %scores {axis = 2, dtype = i32}
    %col = step.iota %scores {axis = 3, dtype = i32}
    %visible = step.compare %col, %row {predicate = "le"}
    %neg_inf = step.constant {value = dense<-1.0e9> : tensor<f32>}
    %masked = step.select %visible, %scores, %neg_inf
    %probs = step.softmax %masked {axis = -1}
    %ctx0 = step.batch_matmul %probs, %v                        // [B, NH, T, HS]
    %ctx1 = step.transpose %ctx0 {perm = [0, 2, 1, 3]}
    %ctx = step.reshape %ctx1 {shape = [0, 0, -1]}              // [B, T, C]
    %o0 = step.matmul %ctx, %w_o
    %o = step.add %o0, %b_o
    %h1 = step.add %h, %o

    // Mixture-of-experts MLP.
    %m = step.layer_norm %h1, %ln2_g, %ln2_b
    %mf = step.reshape %m {shape = [N, C]}
    %pf, %aux_layer = step.call @moe_mlp(%mf, %w_router, %w_fc, %b_fc, %w_proj, %b_proj)
    %p = step.reshape %pf {shape = [B, T, C]}
    %h2 = step.add %h1, %p
    %aux_out = step.add %aux_in, %aux_layer
    step.yield %h2, %aux_out
  }

  %lnf_g = step.param "ln_f.weight" [C] f32 = ones
  %lnf_b = step.param "ln_f.bias" [C] f32 = zeros
  %final = step.layer_norm %out, %lnf_g, %lnf_b
  %logits = step.matmul %final, %wte {transpose_rhs}            // tied head: [B, T, V]
  %ce = step.cross_entropy %logits, %targets
  %loss = step.add %ce, %aux
  step.loss %loss

  step.config {
    optimizer = adamw(lr = 6.0e-4, beta1 = 0.9, beta2 = 0.95, eps = 1.0e-8, weight_decay = 0.1,
                      no_decay = ["*bias", "*ln_*", "wpe"]),
    schedule = warmup_cosine(warmup = 700, total = 19073, min_lr = 6.0e-5),
    clip = global_norm(max_norm = 1.0),
    sam = none
  }
}
