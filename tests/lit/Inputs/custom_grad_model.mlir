// A custom gradient (tanh forward, dy² backward): the backward region is what autodiff applies,
// the forward region is what the compiled step runs. compiled_vs_interpreter.test compares.
step.model @cg dims(B = 8, D = 8, C = 4) {
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 4)
  %w = step.param "w" [D, C] f32 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  %clipped = step.custom_grad (%a = %logits) {
    %t = step.tanh %a
    step.yield %t
  } backward (%a2, %dy) {
    %h = step.mul %dy, %dy
    step.yield %h
  }
  %loss = step.cross_entropy %clipped, %y
  step.loss %loss
}
