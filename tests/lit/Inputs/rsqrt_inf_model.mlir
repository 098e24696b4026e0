// A model whose forward makes an Inf in its first step: the rsqrt of a product with zero
// weights (tests/lit/executable/debug_nan.test).
step.model @rsqrt_inf dims(B = 4, F = 4) {
  %x, %y = step.input "data" [B, F] f32 = classification(classes = F)
  %w = step.param "w" [F, F] f32 = zeros
  %h = step.matmul %x, %w
  %r = step.rsqrt %h
  %loss = step.cross_entropy %r, %y
  step.loss %loss
  step.config { optimizer = sgd(lr = 0.1) }
}
