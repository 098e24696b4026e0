module {
  step.model @mlp_tiny dims(B = 8, C = 4, D = 8, H = 16) {
    %data, %data_labels = step.input "data" [8, 8] f32 = classification(classes = 4)
    %w1 = step.param "w1" [8, 16] f32 = normal(std = 1.768000e-01)
    %b1 = step.param "b1" [16] f32 = zeros
    %w2 = step.param "w2" [16, 16] f32 = normal(std = 8.840000e-02)
    %b2 = step.param "b2" [16] f32 = zeros
    %w3 = step.param "w3" [16, 4] f32 = normal(std = 8.840000e-02)
    %b3 = step.param "b3" [4] f32 = zeros
    %0 = step.matmul %data, %w1
    %1 = step.add %0, %b1
    %2 = step.gelu %1
    %3 = step.matmul %2, %w2
    %4 = step.add %3, %b2
    %5 = step.gelu %4
    %6 = step.matmul %5, %w3
    %7 = step.add %6, %b3
    %8 = step.cross_entropy %7, %data_labels
    step.loss %8
    step.config {
      optimizer = adamw(lr = 1.000000e-03, no_decay = ["b*"], weight_decay = 1.000000e-02),
      schedule = warmup_cosine(total = 500, warmup = 20),
      clip = global_norm(max_norm = 1.000000e+00),
      sam = none
    }
  }
}

