// bf16 compute between f32 parameters: a layer norm and a softmax on bf16 activations, and a
// cross-entropy on bf16 logits, all computed in f32 between casts by the CPU backend.
// compiled_vs_interpreter.test runs it as is and with f16 in place of bf16 (sed). SGD, so a
// parameter difference is a gradient difference, not amplified by Adam's normalisation.
step.model @mixed dims(B = 8, D = 16, C = 4) {
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 4)
  %w = step.param "w" [D, D] f32 = normal(std = 0.2)
  %g = step.param "g" [D] f32 = ones
  %b = step.param "b" [D] f32 = zeros
  %v = step.param "v" [D, C] f32 = normal(std = 0.2)
  %h = step.matmul %x, %w
  %hb = step.cast %h {to = bf16}
  %gb = step.cast %g {to = bf16}
  %bb = step.cast %b {to = bf16}
  %n = step.layer_norm %hb, %gb, %bb {eps = 1.0e-5}
  %s = step.softmax %n {axis = -1}
  %sf = step.cast %s {to = f32}
  %logits = step.matmul %sf, %v
  %lb = step.cast %logits {to = bf16}
  %ce = step.cross_entropy %lb, %y
  %loss = step.cast %ce {to = f32}
  step.loss %loss
  step.config { optimizer = sgd(lr = 0.5) }
}
