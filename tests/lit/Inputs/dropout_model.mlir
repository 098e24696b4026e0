// A model with dropout: its hidden layer (64 x 1024, big enough that the compiled kernel is
// tiled and runs on several threads) drops half its elements. compiled_vs_interpreter.test
// checks the compiled masks against the interpreter's.
step.model @drop dims(B = 64, D = 32, H = 1024, C = 4) {
  %x, %labels = step.input "data" [B, D] f32 = classification(classes = 4)
  %w = step.param "w" [D, H] f32 = normal(std = 0.1)
  %v = step.param "v" [H, C] f32 = normal(std = 0.03)
  %h = step.matmul %x, %w
  %d = step.dropout %h {rate = 0.5, seed = 3}
  %y = step.matmul %d, %v
  %loss = step.cross_entropy %y, %labels
  step.loss %loss
}
