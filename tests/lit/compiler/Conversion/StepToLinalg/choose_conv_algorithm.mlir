// --step-choose-conv-algorithm: which convolutions are marked for Winograd's F(m, K).
// RUN: %stepc-opt %s --step-choose-conv-algorithm="algorithm=auto" | FileCheck %s --check-prefix=AUTO
// RUN: %stepc-opt %s --step-choose-conv-algorithm="algorithm=winograd tile=4" | FileCheck %s --check-prefix=WINO
// RUN: %stepc-opt %s --step-choose-conv-algorithm="algorithm=winograd tile=6" | FileCheck %s --check-prefix=SIX
// RUN: %stepc-opt %s --step-choose-conv-algorithm="algorithm=auto chunk-rows=16" | FileCheck %s --check-prefix=ROWS16
// RUN: %stepc-opt %s --step-choose-conv-algorithm="algorithm=auto chunk-rows=0" | FileCheck %s --check-prefix=NOCHUNK
// RUN: %stepc-opt %s --step-choose-conv-algorithm="algorithm=direct" | FileCheck %s --check-prefix=DIRECT
// RUN: not %stepc-opt %s --step-choose-conv-algorithm="algorithm=fft" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not %stepc-opt %s --step-choose-conv-algorithm="algorithm=auto tile=20" 2>&1 | FileCheck %s --check-prefix=BADTILE
// DIRECT-NOT: winograd_tile
// BAD: step-choose-conv-algorithm: algorithm expects direct, auto or winograd, found 'fft'
// BADTILE: step-choose-conv-algorithm: tile expects 1 to 13, found 20

// NOCHUNK-NOT: winograd_chunks

// Wide (128 -> 256 channels, K = 7): auto takes it, and its gradients alike. 2 · 16 tiles are
// too few rows to split at the default chunk-rows = 256; at 16 rows they are split in two.
// AUTO-LABEL: func.func @wide
// AUTO-NOT: winograd_chunks
// AUTO: step.conv1d {{.*}}step.winograd_tile = 4
// AUTO: step.conv1d_grad_input {{.*}}step.winograd_tile = 4
// AUTO: step.conv1d_grad_weight {{.*}}step.winograd_tile = 4
// SIX-LABEL: func.func @wide
// SIX: step.conv1d {{.*}}step.winograd_tile = 6
// ROWS16-LABEL: func.func @wide
// ROWS16: step.conv1d {{.*}}step.winograd_chunks = 2 : i64, step.winograd_tile = 4
// ROWS16: step.conv1d_grad_input {{.*}}step.winograd_chunks = 2 : i64, step.winograd_tile = 4
// ROWS16: step.conv1d_grad_weight {{.*}}step.winograd_chunks = 2 : i64, step.winograd_tile = 4
func.func @wide(%x: tensor<2x64x128xf32>, %w: tensor<7x128x256xf32>, %g: tensor<2x64x256xf32>)
    -> (tensor<2x64x256xf32>, tensor<2x64x128xf32>, tensor<7x128x256xf32>) {
  %y = step.conv1d %x, %w {padding = "causal", groups = 1} : tensor<2x64x128xf32>, tensor<7x128x256xf32>
  %dx = step.conv1d_grad_input %g, %w {padding = "causal", groups = 1} : tensor<2x64x256xf32>, tensor<7x128x256xf32>
  %dw = step.conv1d_grad_weight %x, %g {kernel = 7, padding = "causal", groups = 1} : tensor<2x64x128xf32>, tensor<2x64x256xf32>
  return %y, %dx, %dw : tensor<2x64x256xf32>, tensor<2x64x128xf32>, tensor<7x128x256xf32>
}

// byte_lm_residual's convolution (B = 16, S = 256: 64 tiles per sequence): 4 chunks of 4
// sequences, 256 rows each; at 16 rows it would be 16 chunks of one sequence; with F(6, 7)
// (43 tiles) 4 chunks of 172 rows do not reach 256, so 2 of 344.
// AUTO-LABEL: func.func @batch16
// AUTO: step.conv1d {{.*}}step.winograd_chunks = 4 : i64, step.winograd_tile = 4
// ROWS16-LABEL: func.func @batch16
// ROWS16: step.conv1d {{.*}}step.winograd_chunks = 16 : i64, step.winograd_tile = 4
// SIX-LABEL: func.func @batch16
// SIX: step.conv1d {{.*}}step.winograd_chunks = 2 : i64, step.winograd_tile = 6
func.func @batch16(%x: tensor<16x256x512xf32>, %w: tensor<7x512x1536xf32>) -> tensor<16x256x1536xf32> {
  %y = step.conv1d %x, %w {padding = "causal", groups = 1} : tensor<16x256x512xf32>, tensor<7x512x1536xf32>
  return %y : tensor<16x256x1536xf32>
}

// Narrow (32 input channels): direct under auto (its GEMMs are the K·C window's), Winograd
// when asked for.
// AUTO-LABEL: func.func @narrow
// AUTO-NOT: winograd_tile
// AUTO: return
// WINO-LABEL: func.func @narrow
// WINO: step.conv1d {{.*}}step.winograd_tile = 4
func.func @narrow(%x: tensor<2x64x32xf32>, %w: tensor<11x32x96xf32>) -> tensor<2x64x96xf32> {
  %y = step.conv1d %x, %w {padding = "causal", groups = 1} : tensor<2x64x32xf32>, tensor<11x32x96xf32>
  return %y : tensor<2x64x96xf32>
}

// Never: two groups, bf16, or m + K - 1 over 14 (K = 13).
// WINO-LABEL: func.func @never
// WINO-NOT: winograd_tile
// WINO: return
// SIX-LABEL: func.func @never
// SIX-NOT: winograd_tile
// SIX: return
func.func @never(%x: tensor<2x64x128xf32>, %w2: tensor<7x64x256xf32>, %xb: tensor<2x64x128xbf16>,
                 %wb: tensor<7x128x256xbf16>, %w13: tensor<13x128x128xf32>)
    -> (tensor<2x64x256xf32>, tensor<2x64x256xbf16>, tensor<2x64x128xf32>) {
  %a = step.conv1d %x, %w2 {padding = "causal", groups = 2} : tensor<2x64x128xf32>, tensor<7x64x256xf32>
  %b = step.conv1d %xb, %wb {padding = "causal", groups = 1} : tensor<2x64x128xbf16>, tensor<7x128x256xbf16>
  %c = step.conv1d %x, %w13 {padding = "causal", groups = 1} : tensor<2x64x128xf32>, tensor<13x128x128xf32>
  return %a, %b, %c : tensor<2x64x256xf32>, tensor<2x64x256xbf16>, tensor<2x64x128xf32>
}

// K = 11: α = 14 with m = 4 (the longest the point list takes), 16 with m = 6 (refused).
// WINO-LABEL: func.func @k11
// WINO: step.conv1d {{.*}}step.winograd_tile = 4
// SIX-LABEL: func.func @k11
// SIX-NOT: winograd_tile
// SIX: return
func.func @k11(%x: tensor<2x64x128xf32>, %w: tensor<11x128x128xf32>) -> tensor<2x64x128xf32> {
  %y = step.conv1d %x, %w {padding = "causal", groups = 1} : tensor<2x64x128xf32>, tensor<11x128x128xf32>
  return %y : tensor<2x64x128xf32>
}
