// A model the CPU backend cannot lower yet (dropout): driver.test checks the error.
step.model @drop dims(B = 4, D = 8, C = 4) {
  %x, %labels = step.input "data" [B, D] f32 = classification(classes = 4)
  %w = step.param "w" [D, C] f32 = normal(std = 0.1)
  %h = step.matmul %x, %w
  %d = step.dropout %h {rate = 0.1, seed = 3}
  %loss = step.cross_entropy %d, %labels
  step.loss %loss
}
