// A GPT-2-style decoder at the 124M shape (llm.c's layout): token + learned position embedding,
// pre-LayerNorm causal self-attention (12 heads), GELU (tanh) MLP x4, final LayerNorm, and a head
// tied to the token embedding. The vocabulary is padded 50257 -> 50304 as llm.c does.
// NH heads of HS = C / NH each (a width NH does not divide is refused where HS is declared).
// The residual projections start at 0.02 / sqrt(2 L), GPT-2's scaling for depth.
// --config=tiny (the model @gpt2_124m_tiny) is the tests' size: 4 heads of 8.
step.model @gpt2_124m dims(B = 4, T = 1024, V = 50304, C = 768, L = 12, NH = 12, HS = C div NH)
    configs(tiny = (B = 2, T = 16, V = 64, C = 32, L = 2, NH = 4)) {
  %tokens, %targets = step.input "tokens" [B, T] i32 = token_stream(vocab = V)
  %wte = step.param "wte" [V, C] f32 = normal(std = 0.02)
  %wpe = step.param "wpe" [T, C] f32 = normal(std = 0.01)
  %positions = step.iota %tokens {axis = 1, dtype = i32}
  %tok_emb = step.embedding %wte, %tokens                      // [B, T, C]
  %pos_emb = step.embedding %wpe, %positions                   // [B, T, C]
  %x = step.add %tok_emb, %pos_emb

  %out = step.repeat "h" L (%h = %x) {
    %ln1_g = step.param "ln_1.weight" [C] f32 = ones
    %ln1_b = step.param "ln_1.bias" [C] f32 = zeros
    %w_qkv = step.param "attn.c_attn.weight" [C, 3 * C] f32 = normal(std = 0.02)
    %b_qkv = step.param "attn.c_attn.bias" [3 * C] f32 = zeros
    %w_o = step.param "attn.c_proj.weight" [C, C] f32 = normal(std = 0.02 * rsqrt(2 * L))
    %b_o = step.param "attn.c_proj.bias" [C] f32 = zeros
    %ln2_g = step.param "ln_2.weight" [C] f32 = ones
    %ln2_b = step.param "ln_2.bias" [C] f32 = zeros
    %w_fc = step.param "mlp.c_fc.weight" [C, 4 * C] f32 = normal(std = 0.02)
    %b_fc = step.param "mlp.c_fc.bias" [4 * C] f32 = zeros
    %w_proj = step.param "mlp.c_proj.weight" [4 * C, C] f32 = normal(std = 0.02 * rsqrt(2 * L))
    %b_proj = step.param "mlp.c_proj.bias" [C] f32 = zeros

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

    // MLP.
    %m = step.layer_norm %h1, %ln2_g, %ln2_b
    %f0 = step.matmul %m, %w_fc
    %f1 = step.add %f0, %b_fc
    %f = step.gelu %f1 {approximate = "tanh"}
    %p0 = step.matmul %f, %w_proj
    %p = step.add %p0, %b_proj
    %h2 = step.add %h1, %p
    step.yield %h2
  }

  %lnf_g = step.param "ln_f.weight" [C] f32 = ones
  %lnf_b = step.param "ln_f.bias" [C] f32 = zeros
  %final = step.layer_norm %out, %lnf_g, %lnf_b
  %logits = step.matmul %final, %wte {transpose_rhs}            // tied head: [B, T, V]
  %loss = step.cross_entropy %logits, %targets
  step.loss %loss

  step.config {
    optimizer = adamw(lr = 6.0e-4, beta1 = 0.9, beta2 = 0.95, eps = 1.0e-8, weight_decay = 0.1,
                      no_decay = ["*bias", "*ln_*", "wpe"]),
    schedule = warmup_cosine(warmup = 700, total = 19073, min_lr = 6.0e-5),
    clip = global_norm(max_norm = 1.0),
    sam = none
  }
}
