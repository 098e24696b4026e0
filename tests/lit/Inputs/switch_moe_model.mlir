// A Switch-style top-1 token-choice MoE layer (capacity factor 1.0) on the classification
// data: one loop of the routing has one iteration (k = 1) and is folded away. Written by
// benchmarks/moe/moe_vs_dense.py's moe_model(64, 16, 4, 32, 1, "token", False).
step.model @moe dims(T = 64, D = 16, E = 4, H = 32, K = 1) {
  %x0, %labels = step.input "data" [T, D] f32 = classification(classes = 16)
  %scale = step.param "scale" [D] f32 = ones
  %router = step.param "router" [D, E] f32 = normal(std = 0.02)
  %w1 = step.param "w1" [E, D, H] f32 = normal(std = rsqrt(D))
  %w2 = step.param "w2" [E, H, D] f32 = normal(std = rsqrt(H))
  %head = step.param "head" [D, 16] f32 = normal(std = rsqrt(D))
  %x = step.mul %x0, %scale
  %logits0 = step.matmul %x, %router
  %e = step.iota {shape = [E], axis = 0, dtype = f32}
  %s = step.constant {value = dense<0.0> : tensor<f32>}
  %bias = step.mul %e, %s
  %logits = step.add %logits0, %bias
  %probs = step.softmax %logits {axis = -1}
  %top, %experts = step.top_k %probs {k = K}
  %choices, %slots = step.route_tokens %experts {num_experts = E, capacity_factor = 1.0}
  %xe = step.gather_rows %x, %choices, %slots {group = K}
  %h0 = step.batch_matmul %xe, %w1
  %h = step.gelu %h0 {approximate = "tanh"}
  %ye = step.batch_matmul %h, %w2
  %flat = step.reshape %ye {shape = [-1, D]}
  %yk = step.gather_rows %flat, %slots, %choices
  %g = step.reshape %top {shape = [T, K, 1]}
  %weighted = step.mul %yk, %g
  %y = step.sum %weighted {axes = [1]}
  %out = step.add %x, %y
  %z = step.matmul %out, %head
  %loss = step.cross_entropy %z, %labels
  step.loss %loss

  step.config {
    optimizer = adamw(lr = 1.0e-3, weight_decay = 0.0),
    schedule = constant,
    clip = none,
    sam = none
  }
}
