// A model whose dim H is declared from F: --dim and --config move H with F (driver.test).
step.model @derived dims(B = 2, F = 4, H = 4 * F) configs(wide = (F = 8), fixed = (F = 8, H = 5)) {
  %x, %y = step.input "data" [B, F] f32 = classification(classes = F)
  %w1 = step.param "w1" [F, H] f32 = normal(std = 0.1)
  %w2 = step.param "w2" [H, F] f32 = normal(std = 0.1)
  %h = step.matmul %x, %w1
  %logits = step.matmul %h, %w2
  %loss = step.cross_entropy %logits, %y
  step.loss %loss
  step.config { optimizer = sgd(lr = 0.1) }
}
