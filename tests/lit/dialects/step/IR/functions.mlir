// RUN: %stepc-opt %s -split-input-file | FileCheck %s
// RUN: %stepc-opt %s -split-input-file | %stepc-opt -split-input-file | FileCheck %s

// Tests that a step.func is called twice with different parameters, its signature may use
// named dims, and call results are typed from the signature.
// CHECK-LABEL: step.model @two_dense_blocks
// CHECK: step.func @dense_gelu(%{{.*}}: [4, 8] f32, %{{.*}}: [8, 8] f32) -> ([4, 8] f32)
// CHECK: step.return
// CHECK: %[[A:.*]] = step.call @dense_gelu(%data, %w1)
// CHECK: step.call @dense_gelu(%[[A]], %w2)
step.model @two_dense_blocks dims(B = 4, D = 8) {
  step.func @dense_gelu(%x: [B, D] f32, %w: [D, D] f32) -> [B, D] f32 {
    %h = step.matmul %x, %w
    %y = step.gelu %h
    step.return %y
  }
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 8)
  %w1 = step.param "w1" [D, D] f32 = orthogonal
  %w2 = step.param "w2" [D, D] f32 = orthogonal
  %a = step.call @dense_gelu(%x, %w1)
  %b = step.call @dense_gelu(%a, %w2)
  %loss = step.cross_entropy %b, %y
  step.loss %loss
}
