// Numeric test of the Winograd lowering (WinogradPatterns.cpp): each convolution, input
// gradient and weight gradient marked `step.winograd_tile = m` is run next to the same op
// unmarked (the direct lowering), through stepc-opt's stepc-runner-llvm and mlir-cpu-runner; the
// pairs must agree within 2e-5 of the pair's largest magnitude. Causal and valid padding,
// K = 3, 5, 7 with tiles 2, 4, 6, sequences that are not multiples of the tile, Cin != Cout,
// and the batch split into 2 or 4 chunks (step.winograd_chunks).
// The inputs are (37 i + 11 j + 5 k + seed) mod 17 / 8 - 1.
// RUN: %stepc-opt %s --step-lower-to-linalg | %linalg-to-llvm | %run-cpu > %t.out
// RUN: %python %inputs/compare_printed_pairs.py %t.out --pairs 21 --tolerance 2e-5 | FileCheck %s
// CHECK: 21 pairs agree
// The lowering of the first convolution, F(4, 5) (α = 8): a weight transform, an input
// transform reading the stride-4 slices of the padded input, the α GEMMs as one batched
// contraction over ξ (the runtime runs a batch's GEMMs side by side), an output transform.
// RUN: %stepc-opt %s --step-lower-to-linalg | FileCheck %s --check-prefix=LOWERED
// LOWERED-LABEL: func.func @main
// LOWERED: linalg.generic {{.*}}ins({{.*}} : tensor<8x6xf32>, {{.*}}outs({{.*}} : tensor<8x8x6xf32>)
// LOWERED: tensor.extract_slice {{.*}}[0, 1, 0] [2, 4, 8] [1, 4, 1]
// LOWERED: linalg.generic {{.*}}ins({{.*}} : tensor<2x4x8xf32>, {{.*}}outs({{.*}} : tensor<8x2x4x8xf32>)
// LOWERED: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}}ins({{.*}} : tensor<8x8x8xf32>, tensor<8x8x6xf32>) outs({{.*}} : tensor<8x8x6xf32>)
// LOWERED: linalg.generic {{.*}}outs({{.*}} : tensor<2x4x4x6xf32>)
// A chunked convolution (c7m4x2: batch 4, 2 chunks) is one scf.for over the chunks, not one
// copy of the lowering per chunk: the chunk's rows of the padded input, its input transform,
// α = 10 GEMMs (one batch), and the output transform writing the chunk's rows of the carried
// output.
// LOWERED: scf.for %[[B0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[Y:.*]] = %{{.*}}) -> (tensor<4x4x4x8xf32>)
// LOWERED: tensor.extract_slice %{{.*}}[%[[B0]], 0, 0] [2, 22, 6] [1, 1, 1]
// LOWERED: linalg.generic {{.*}}outs({{.*}} : tensor<10x2x4x6xf32>)
// LOWERED: linalg.generic {{.*}}ins({{.*}} : tensor<10x8x6xf32>, tensor<10x6x8xf32>) outs({{.*}} : tensor<10x8x8xf32>)
// LOWERED: tensor.extract_slice %[[Y]][%[[B0]], 0, 0, 0] [2, 4, 4, 8] [1, 1, 1, 1]
// LOWERED: tensor.insert_slice %{{.*}} into %[[Y]][%[[B0]], 0, 0, 0] [2, 4, 4, 8] [1, 1, 1, 1]
// LOWERED: scf.yield
// The weight gradient's chunks accumulate into the carried dU (zero before the loop).
// LOWERED: linalg.fill {{.*}} -> tensor<10x6x8xf32>
// LOWERED: scf.for {{.*}} -> (tensor<10x6x8xf32>)

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  // c5m4: K = 5 causal, F(4, 5)
  %x_c5m4 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %x_c5m4_c0 = arith.constant 37 : index
    %x_c5m4_p0 = arith.muli %i0, %x_c5m4_c0 : index
    %x_c5m4_c1 = arith.constant 11 : index
    %x_c5m4_p1 = arith.muli %i1, %x_c5m4_c1 : index
    %x_c5m4_c2 = arith.constant 5 : index
    %x_c5m4_p2 = arith.muli %i2, %x_c5m4_c2 : index
    %x_c5m4_s0 = arith.addi %x_c5m4_p0, %x_c5m4_p1 : index
    %x_c5m4_s1 = arith.addi %x_c5m4_s0, %x_c5m4_p2 : index
    %x_c5m4_seed = arith.constant 1 : index
    %x_c5m4_t = arith.addi %x_c5m4_s1, %x_c5m4_seed : index
    %x_c5m4_m = arith.constant 17 : index
    %x_c5m4_r = arith.remui %x_c5m4_t, %x_c5m4_m : index
    %x_c5m4_ri = arith.index_cast %x_c5m4_r : index to i64
    %x_c5m4_f = arith.sitofp %x_c5m4_ri : i64 to f32
    %x_c5m4_e = arith.constant 0.125 : f32
    %x_c5m4_g = arith.mulf %x_c5m4_f, %x_c5m4_e : f32
    %x_c5m4_o = arith.constant -1.0 : f32
    %x_c5m4_v = arith.addf %x_c5m4_g, %x_c5m4_o : f32
    tensor.yield %x_c5m4_v : f32
  } : tensor<2x13x8xf32>
  %w_c5m4 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %w_c5m4_c0 = arith.constant 37 : index
    %w_c5m4_p0 = arith.muli %i0, %w_c5m4_c0 : index
    %w_c5m4_c1 = arith.constant 11 : index
    %w_c5m4_p1 = arith.muli %i1, %w_c5m4_c1 : index
    %w_c5m4_c2 = arith.constant 5 : index
    %w_c5m4_p2 = arith.muli %i2, %w_c5m4_c2 : index
    %w_c5m4_s0 = arith.addi %w_c5m4_p0, %w_c5m4_p1 : index
    %w_c5m4_s1 = arith.addi %w_c5m4_s0, %w_c5m4_p2 : index
    %w_c5m4_seed = arith.constant 5 : index
    %w_c5m4_t = arith.addi %w_c5m4_s1, %w_c5m4_seed : index
    %w_c5m4_m = arith.constant 17 : index
    %w_c5m4_r = arith.remui %w_c5m4_t, %w_c5m4_m : index
    %w_c5m4_ri = arith.index_cast %w_c5m4_r : index to i64
    %w_c5m4_f = arith.sitofp %w_c5m4_ri : i64 to f32
    %w_c5m4_e = arith.constant 0.125 : f32
    %w_c5m4_g = arith.mulf %w_c5m4_f, %w_c5m4_e : f32
    %w_c5m4_o = arith.constant -1.0 : f32
    %w_c5m4_v = arith.addf %w_c5m4_g, %w_c5m4_o : f32
    tensor.yield %w_c5m4_v : f32
  } : tensor<5x8x6xf32>
  %g_c5m4 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %g_c5m4_c0 = arith.constant 37 : index
    %g_c5m4_p0 = arith.muli %i0, %g_c5m4_c0 : index
    %g_c5m4_c1 = arith.constant 11 : index
    %g_c5m4_p1 = arith.muli %i1, %g_c5m4_c1 : index
    %g_c5m4_c2 = arith.constant 5 : index
    %g_c5m4_p2 = arith.muli %i2, %g_c5m4_c2 : index
    %g_c5m4_s0 = arith.addi %g_c5m4_p0, %g_c5m4_p1 : index
    %g_c5m4_s1 = arith.addi %g_c5m4_s0, %g_c5m4_p2 : index
    %g_c5m4_seed = arith.constant 9 : index
    %g_c5m4_t = arith.addi %g_c5m4_s1, %g_c5m4_seed : index
    %g_c5m4_m = arith.constant 17 : index
    %g_c5m4_r = arith.remui %g_c5m4_t, %g_c5m4_m : index
    %g_c5m4_ri = arith.index_cast %g_c5m4_r : index to i64
    %g_c5m4_f = arith.sitofp %g_c5m4_ri : i64 to f32
    %g_c5m4_e = arith.constant 0.125 : f32
    %g_c5m4_g = arith.mulf %g_c5m4_f, %g_c5m4_e : f32
    %g_c5m4_o = arith.constant -1.0 : f32
    %g_c5m4_v = arith.addf %g_c5m4_g, %g_c5m4_o : f32
    tensor.yield %g_c5m4_v : f32
  } : tensor<2x13x6xf32>
  %yw_c5m4 = step.conv1d %x_c5m4, %w_c5m4 {padding = "causal", groups = 1, step.winograd_tile = 4 : i64} : tensor<2x13x8xf32>, tensor<5x8x6xf32>
  %yw_c5m4u = tensor.cast %yw_c5m4 : tensor<2x13x6xf32> to tensor<*xf32>
  call @printMemrefF32(%yw_c5m4u) : (tensor<*xf32>) -> ()
  %yd_c5m4 = step.conv1d %x_c5m4, %w_c5m4 {padding = "causal", groups = 1} : tensor<2x13x8xf32>, tensor<5x8x6xf32>
  %yd_c5m4u = tensor.cast %yd_c5m4 : tensor<2x13x6xf32> to tensor<*xf32>
  call @printMemrefF32(%yd_c5m4u) : (tensor<*xf32>) -> ()
  %dxw_c5m4 = step.conv1d_grad_input %g_c5m4, %w_c5m4 {padding = "causal", groups = 1, step.winograd_tile = 4 : i64} : tensor<2x13x6xf32>, tensor<5x8x6xf32>
  %dxw_c5m4u = tensor.cast %dxw_c5m4 : tensor<2x13x8xf32> to tensor<*xf32>
  call @printMemrefF32(%dxw_c5m4u) : (tensor<*xf32>) -> ()
  %dxd_c5m4 = step.conv1d_grad_input %g_c5m4, %w_c5m4 {padding = "causal", groups = 1} : tensor<2x13x6xf32>, tensor<5x8x6xf32>
  %dxd_c5m4u = tensor.cast %dxd_c5m4 : tensor<2x13x8xf32> to tensor<*xf32>
  call @printMemrefF32(%dxd_c5m4u) : (tensor<*xf32>) -> ()
  %dww_c5m4 = step.conv1d_grad_weight %x_c5m4, %g_c5m4 {kernel = 5, padding = "causal", groups = 1, step.winograd_tile = 4 : i64} : tensor<2x13x8xf32>, tensor<2x13x6xf32>
  %dww_c5m4u = tensor.cast %dww_c5m4 : tensor<5x8x6xf32> to tensor<*xf32>
  call @printMemrefF32(%dww_c5m4u) : (tensor<*xf32>) -> ()
  %dwd_c5m4 = step.conv1d_grad_weight %x_c5m4, %g_c5m4 {kernel = 5, padding = "causal", groups = 1} : tensor<2x13x8xf32>, tensor<2x13x6xf32>
  %dwd_c5m4u = tensor.cast %dwd_c5m4 : tensor<5x8x6xf32> to tensor<*xf32>
  call @printMemrefF32(%dwd_c5m4u) : (tensor<*xf32>) -> ()
  // c7m6: K = 7 causal, F(6, 7)
  %x_c7m6 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %x_c7m6_c0 = arith.constant 37 : index
    %x_c7m6_p0 = arith.muli %i0, %x_c7m6_c0 : index
    %x_c7m6_c1 = arith.constant 11 : index
    %x_c7m6_p1 = arith.muli %i1, %x_c7m6_c1 : index
    %x_c7m6_c2 = arith.constant 5 : index
    %x_c7m6_p2 = arith.muli %i2, %x_c7m6_c2 : index
    %x_c7m6_s0 = arith.addi %x_c7m6_p0, %x_c7m6_p1 : index
    %x_c7m6_s1 = arith.addi %x_c7m6_s0, %x_c7m6_p2 : index
    %x_c7m6_seed = arith.constant 1 : index
    %x_c7m6_t = arith.addi %x_c7m6_s1, %x_c7m6_seed : index
    %x_c7m6_m = arith.constant 17 : index
    %x_c7m6_r = arith.remui %x_c7m6_t, %x_c7m6_m : index
    %x_c7m6_ri = arith.index_cast %x_c7m6_r : index to i64
    %x_c7m6_f = arith.sitofp %x_c7m6_ri : i64 to f32
    %x_c7m6_e = arith.constant 0.125 : f32
    %x_c7m6_g = arith.mulf %x_c7m6_f, %x_c7m6_e : f32
    %x_c7m6_o = arith.constant -1.0 : f32
    %x_c7m6_v = arith.addf %x_c7m6_g, %x_c7m6_o : f32
    tensor.yield %x_c7m6_v : f32
  } : tensor<2x13x6xf32>
  %w_c7m6 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %w_c7m6_c0 = arith.constant 37 : index
    %w_c7m6_p0 = arith.muli %i0, %w_c7m6_c0 : index
    %w_c7m6_c1 = arith.constant 11 : index
    %w_c7m6_p1 = arith.muli %i1, %w_c7m6_c1 : index
    %w_c7m6_c2 = arith.constant 5 : index
    %w_c7m6_p2 = arith.muli %i2, %w_c7m6_c2 : index
    %w_c7m6_s0 = arith.addi %w_c7m6_p0, %w_c7m6_p1 : index
    %w_c7m6_s1 = arith.addi %w_c7m6_s0, %w_c7m6_p2 : index
    %w_c7m6_seed = arith.constant 5 : index
    %w_c7m6_t = arith.addi %w_c7m6_s1, %w_c7m6_seed : index
    %w_c7m6_m = arith.constant 17 : index
    %w_c7m6_r = arith.remui %w_c7m6_t, %w_c7m6_m : index
    %w_c7m6_ri = arith.index_cast %w_c7m6_r : index to i64
    %w_c7m6_f = arith.sitofp %w_c7m6_ri : i64 to f32
    %w_c7m6_e = arith.constant 0.125 : f32
    %w_c7m6_g = arith.mulf %w_c7m6_f, %w_c7m6_e : f32
    %w_c7m6_o = arith.constant -1.0 : f32
    %w_c7m6_v = arith.addf %w_c7m6_g, %w_c7m6_o : f32
    tensor.yield %w_c7m6_v : f32
  } : tensor<7x6x8xf32>
  %g_c7m6 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %g_c7m6_c0 = arith.constant 37 : index
    %g_c7m6_p0 = arith.muli %i0, %g_c7m6_c0 : index
    %g_c7m6_c1 = arith.constant 11 : index
    %g_c7m6_p1 = arith.muli %i1, %g_c7m6_c1 : index
    %g_c7m6_c2 = arith.constant 5 : index
    %g_c7m6_p2 = arith.muli %i2, %g_c7m6_c2 : index
    %g_c7m6_s0 = arith.addi %g_c7m6_p0, %g_c7m6_p1 : index
    %g_c7m6_s1 = arith.addi %g_c7m6_s0, %g_c7m6_p2 : index
    %g_c7m6_seed = arith.constant 9 : index
    %g_c7m6_t = arith.addi %g_c7m6_s1, %g_c7m6_seed : index
    %g_c7m6_m = arith.constant 17 : index
    %g_c7m6_r = arith.remui %g_c7m6_t, %g_c7m6_m : index
    %g_c7m6_ri = arith.index_cast %g_c7m6_r : index to i64
    %g_c7m6_f = arith.sitofp %g_c7m6_ri : i64 to f32
    %g_c7m6_e = arith.constant 0.125 : f32
    %g_c7m6_g = arith.mulf %g_c7m6_f, %g_c7m6_e : f32
    %g_c7m6_o = arith.constant -1.0 : f32
    %g_c7m6_v = arith.addf %g_c7m6_g, %g_c7m6_o : f32
    tensor.yield %g_c7m6_v : f32
  } : tensor<2x13x8xf32>
  %yw_c7m6 = step.conv1d %x_c7m6, %w_c7m6 {padding = "causal", groups = 1, step.winograd_tile = 6 : i64} : tensor<2x13x6xf32>, tensor<7x6x8xf32>
  %yw_c7m6u = tensor.cast %yw_c7m6 : tensor<2x13x8xf32> to tensor<*xf32>
  call @printMemrefF32(%yw_c7m6u) : (tensor<*xf32>) -> ()
  %yd_c7m6 = step.conv1d %x_c7m6, %w_c7m6 {padding = "causal", groups = 1} : tensor<2x13x6xf32>, tensor<7x6x8xf32>
  %yd_c7m6u = tensor.cast %yd_c7m6 : tensor<2x13x8xf32> to tensor<*xf32>
  call @printMemrefF32(%yd_c7m6u) : (tensor<*xf32>) -> ()
  %dxw_c7m6 = step.conv1d_grad_input %g_c7m6, %w_c7m6 {padding = "causal", groups = 1, step.winograd_tile = 6 : i64} : tensor<2x13x8xf32>, tensor<7x6x8xf32>
  %dxw_c7m6u = tensor.cast %dxw_c7m6 : tensor<2x13x6xf32> to tensor<*xf32>
  call @printMemrefF32(%dxw_c7m6u) : (tensor<*xf32>) -> ()
  %dxd_c7m6 = step.conv1d_grad_input %g_c7m6, %w_c7m6 {padding = "causal", groups = 1} : tensor<2x13x8xf32>, tensor<7x6x8xf32>
  %dxd_c7m6u = tensor.cast %dxd_c7m6 : tensor<2x13x6xf32> to tensor<*xf32>
  call @printMemrefF32(%dxd_c7m6u) : (tensor<*xf32>) -> ()
  %dww_c7m6 = step.conv1d_grad_weight %x_c7m6, %g_c7m6 {kernel = 7, padding = "causal", groups = 1, step.winograd_tile = 6 : i64} : tensor<2x13x6xf32>, tensor<2x13x8xf32>
  %dww_c7m6u = tensor.cast %dww_c7m6 : tensor<7x6x8xf32> to tensor<*xf32>
  call @printMemrefF32(%dww_c7m6u) : (tensor<*xf32>) -> ()
  %dwd_c7m6 = step.conv1d_grad_weight %x_c7m6, %g_c7m6 {kernel = 7, padding = "causal", groups = 1} : tensor<2x13x6xf32>, tensor<2x13x8xf32>
  %dwd_c7m6u = tensor.cast %dwd_c7m6 : tensor<7x6x8xf32> to tensor<*xf32>
  call @printMemrefF32(%dwd_c7m6u) : (tensor<*xf32>) -> ()
  // c3m2: K = 3 causal, F(2, 3)
  %x_c3m2 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %x_c3m2_c0 = arith.constant 37 : index
    %x_c3m2_p0 = arith.muli %i0, %x_c3m2_c0 : index
    %x_c3m2_c1 = arith.constant 11 : index
    %x_c3m2_p1 = arith.muli %i1, %x_c3m2_c1 : index
    %x_c3m2_c2 = arith.constant 5 : index
    %x_c3m2_p2 = arith.muli %i2, %x_c3m2_c2 : index
    %x_c3m2_s0 = arith.addi %x_c3m2_p0, %x_c3m2_p1 : index
    %x_c3m2_s1 = arith.addi %x_c3m2_s0, %x_c3m2_p2 : index
    %x_c3m2_seed = arith.constant 1 : index
    %x_c3m2_t = arith.addi %x_c3m2_s1, %x_c3m2_seed : index
    %x_c3m2_m = arith.constant 17 : index
    %x_c3m2_r = arith.remui %x_c3m2_t, %x_c3m2_m : index
    %x_c3m2_ri = arith.index_cast %x_c3m2_r : index to i64
    %x_c3m2_f = arith.sitofp %x_c3m2_ri : i64 to f32
    %x_c3m2_e = arith.constant 0.125 : f32
    %x_c3m2_g = arith.mulf %x_c3m2_f, %x_c3m2_e : f32
    %x_c3m2_o = arith.constant -1.0 : f32
    %x_c3m2_v = arith.addf %x_c3m2_g, %x_c3m2_o : f32
    tensor.yield %x_c3m2_v : f32
  } : tensor<1x9x4xf32>
  %w_c3m2 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %w_c3m2_c0 = arith.constant 37 : index
    %w_c3m2_p0 = arith.muli %i0, %w_c3m2_c0 : index
    %w_c3m2_c1 = arith.constant 11 : index
    %w_c3m2_p1 = arith.muli %i1, %w_c3m2_c1 : index
    %w_c3m2_c2 = arith.constant 5 : index
    %w_c3m2_p2 = arith.muli %i2, %w_c3m2_c2 : index
    %w_c3m2_s0 = arith.addi %w_c3m2_p0, %w_c3m2_p1 : index
    %w_c3m2_s1 = arith.addi %w_c3m2_s0, %w_c3m2_p2 : index
    %w_c3m2_seed = arith.constant 5 : index
    %w_c3m2_t = arith.addi %w_c3m2_s1, %w_c3m2_seed : index
    %w_c3m2_m = arith.constant 17 : index
    %w_c3m2_r = arith.remui %w_c3m2_t, %w_c3m2_m : index
    %w_c3m2_ri = arith.index_cast %w_c3m2_r : index to i64
    %w_c3m2_f = arith.sitofp %w_c3m2_ri : i64 to f32
    %w_c3m2_e = arith.constant 0.125 : f32
    %w_c3m2_g = arith.mulf %w_c3m2_f, %w_c3m2_e : f32
    %w_c3m2_o = arith.constant -1.0 : f32
    %w_c3m2_v = arith.addf %w_c3m2_g, %w_c3m2_o : f32
    tensor.yield %w_c3m2_v : f32
  } : tensor<3x4x5xf32>
  %g_c3m2 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %g_c3m2_c0 = arith.constant 37 : index
    %g_c3m2_p0 = arith.muli %i0, %g_c3m2_c0 : index
    %g_c3m2_c1 = arith.constant 11 : index
    %g_c3m2_p1 = arith.muli %i1, %g_c3m2_c1 : index
    %g_c3m2_c2 = arith.constant 5 : index
    %g_c3m2_p2 = arith.muli %i2, %g_c3m2_c2 : index
    %g_c3m2_s0 = arith.addi %g_c3m2_p0, %g_c3m2_p1 : index
    %g_c3m2_s1 = arith.addi %g_c3m2_s0, %g_c3m2_p2 : index
    %g_c3m2_seed = arith.constant 9 : index
    %g_c3m2_t = arith.addi %g_c3m2_s1, %g_c3m2_seed : index
    %g_c3m2_m = arith.constant 17 : index
    %g_c3m2_r = arith.remui %g_c3m2_t, %g_c3m2_m : index
    %g_c3m2_ri = arith.index_cast %g_c3m2_r : index to i64
    %g_c3m2_f = arith.sitofp %g_c3m2_ri : i64 to f32
    %g_c3m2_e = arith.constant 0.125 : f32
    %g_c3m2_g = arith.mulf %g_c3m2_f, %g_c3m2_e : f32
    %g_c3m2_o = arith.constant -1.0 : f32
    %g_c3m2_v = arith.addf %g_c3m2_g, %g_c3m2_o : f32
    tensor.yield %g_c3m2_v : f32
  } : tensor<1x9x5xf32>
  %yw_c3m2 = step.conv1d %x_c3m2, %w_c3m2 {padding = "causal", groups = 1, step.winograd_tile = 2 : i64} : tensor<1x9x4xf32>, tensor<3x4x5xf32>
  %yw_c3m2u = tensor.cast %yw_c3m2 : tensor<1x9x5xf32> to tensor<*xf32>
  call @printMemrefF32(%yw_c3m2u) : (tensor<*xf32>) -> ()
  %yd_c3m2 = step.conv1d %x_c3m2, %w_c3m2 {padding = "causal", groups = 1} : tensor<1x9x4xf32>, tensor<3x4x5xf32>
  %yd_c3m2u = tensor.cast %yd_c3m2 : tensor<1x9x5xf32> to tensor<*xf32>
  call @printMemrefF32(%yd_c3m2u) : (tensor<*xf32>) -> ()
  %dxw_c3m2 = step.conv1d_grad_input %g_c3m2, %w_c3m2 {padding = "causal", groups = 1, step.winograd_tile = 2 : i64} : tensor<1x9x5xf32>, tensor<3x4x5xf32>
  %dxw_c3m2u = tensor.cast %dxw_c3m2 : tensor<1x9x4xf32> to tensor<*xf32>
  call @printMemrefF32(%dxw_c3m2u) : (tensor<*xf32>) -> ()
  %dxd_c3m2 = step.conv1d_grad_input %g_c3m2, %w_c3m2 {padding = "causal", groups = 1} : tensor<1x9x5xf32>, tensor<3x4x5xf32>
  %dxd_c3m2u = tensor.cast %dxd_c3m2 : tensor<1x9x4xf32> to tensor<*xf32>
  call @printMemrefF32(%dxd_c3m2u) : (tensor<*xf32>) -> ()
  %dww_c3m2 = step.conv1d_grad_weight %x_c3m2, %g_c3m2 {kernel = 3, padding = "causal", groups = 1, step.winograd_tile = 2 : i64} : tensor<1x9x4xf32>, tensor<1x9x5xf32>
  %dww_c3m2u = tensor.cast %dww_c3m2 : tensor<3x4x5xf32> to tensor<*xf32>
  call @printMemrefF32(%dww_c3m2u) : (tensor<*xf32>) -> ()
  %dwd_c3m2 = step.conv1d_grad_weight %x_c3m2, %g_c3m2 {kernel = 3, padding = "causal", groups = 1} : tensor<1x9x4xf32>, tensor<1x9x5xf32>
  %dwd_c3m2u = tensor.cast %dwd_c3m2 : tensor<3x4x5xf32> to tensor<*xf32>
  call @printMemrefF32(%dwd_c3m2u) : (tensor<*xf32>) -> ()
  // v3m4: K = 3 valid, F(4, 3)
  %x_v3m4 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %x_v3m4_c0 = arith.constant 37 : index
    %x_v3m4_p0 = arith.muli %i0, %x_v3m4_c0 : index
    %x_v3m4_c1 = arith.constant 11 : index
    %x_v3m4_p1 = arith.muli %i1, %x_v3m4_c1 : index
    %x_v3m4_c2 = arith.constant 5 : index
    %x_v3m4_p2 = arith.muli %i2, %x_v3m4_c2 : index
    %x_v3m4_s0 = arith.addi %x_v3m4_p0, %x_v3m4_p1 : index
    %x_v3m4_s1 = arith.addi %x_v3m4_s0, %x_v3m4_p2 : index
    %x_v3m4_seed = arith.constant 1 : index
    %x_v3m4_t = arith.addi %x_v3m4_s1, %x_v3m4_seed : index
    %x_v3m4_m = arith.constant 17 : index
    %x_v3m4_r = arith.remui %x_v3m4_t, %x_v3m4_m : index
    %x_v3m4_ri = arith.index_cast %x_v3m4_r : index to i64
    %x_v3m4_f = arith.sitofp %x_v3m4_ri : i64 to f32
    %x_v3m4_e = arith.constant 0.125 : f32
    %x_v3m4_g = arith.mulf %x_v3m4_f, %x_v3m4_e : f32
    %x_v3m4_o = arith.constant -1.0 : f32
    %x_v3m4_v = arith.addf %x_v3m4_g, %x_v3m4_o : f32
    tensor.yield %x_v3m4_v : f32
  } : tensor<2x13x8xf32>
  %w_v3m4 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %w_v3m4_c0 = arith.constant 37 : index
    %w_v3m4_p0 = arith.muli %i0, %w_v3m4_c0 : index
    %w_v3m4_c1 = arith.constant 11 : index
    %w_v3m4_p1 = arith.muli %i1, %w_v3m4_c1 : index
    %w_v3m4_c2 = arith.constant 5 : index
    %w_v3m4_p2 = arith.muli %i2, %w_v3m4_c2 : index
    %w_v3m4_s0 = arith.addi %w_v3m4_p0, %w_v3m4_p1 : index
    %w_v3m4_s1 = arith.addi %w_v3m4_s0, %w_v3m4_p2 : index
    %w_v3m4_seed = arith.constant 5 : index
    %w_v3m4_t = arith.addi %w_v3m4_s1, %w_v3m4_seed : index
    %w_v3m4_m = arith.constant 17 : index
    %w_v3m4_r = arith.remui %w_v3m4_t, %w_v3m4_m : index
    %w_v3m4_ri = arith.index_cast %w_v3m4_r : index to i64
    %w_v3m4_f = arith.sitofp %w_v3m4_ri : i64 to f32
    %w_v3m4_e = arith.constant 0.125 : f32
    %w_v3m4_g = arith.mulf %w_v3m4_f, %w_v3m4_e : f32
    %w_v3m4_o = arith.constant -1.0 : f32
    %w_v3m4_v = arith.addf %w_v3m4_g, %w_v3m4_o : f32
    tensor.yield %w_v3m4_v : f32
  } : tensor<3x8x6xf32>
  %g_v3m4 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %g_v3m4_c0 = arith.constant 37 : index
    %g_v3m4_p0 = arith.muli %i0, %g_v3m4_c0 : index
    %g_v3m4_c1 = arith.constant 11 : index
    %g_v3m4_p1 = arith.muli %i1, %g_v3m4_c1 : index
    %g_v3m4_c2 = arith.constant 5 : index
    %g_v3m4_p2 = arith.muli %i2, %g_v3m4_c2 : index
    %g_v3m4_s0 = arith.addi %g_v3m4_p0, %g_v3m4_p1 : index
    %g_v3m4_s1 = arith.addi %g_v3m4_s0, %g_v3m4_p2 : index
    %g_v3m4_seed = arith.constant 9 : index
    %g_v3m4_t = arith.addi %g_v3m4_s1, %g_v3m4_seed : index
    %g_v3m4_m = arith.constant 17 : index
    %g_v3m4_r = arith.remui %g_v3m4_t, %g_v3m4_m : index
    %g_v3m4_ri = arith.index_cast %g_v3m4_r : index to i64
    %g_v3m4_f = arith.sitofp %g_v3m4_ri : i64 to f32
    %g_v3m4_e = arith.constant 0.125 : f32
    %g_v3m4_g = arith.mulf %g_v3m4_f, %g_v3m4_e : f32
    %g_v3m4_o = arith.constant -1.0 : f32
    %g_v3m4_v = arith.addf %g_v3m4_g, %g_v3m4_o : f32
    tensor.yield %g_v3m4_v : f32
  } : tensor<2x11x6xf32>
  %yw_v3m4 = step.conv1d %x_v3m4, %w_v3m4 {padding = "valid", groups = 1, step.winograd_tile = 4 : i64} : tensor<2x13x8xf32>, tensor<3x8x6xf32>
  %yw_v3m4u = tensor.cast %yw_v3m4 : tensor<2x11x6xf32> to tensor<*xf32>
  call @printMemrefF32(%yw_v3m4u) : (tensor<*xf32>) -> ()
  %yd_v3m4 = step.conv1d %x_v3m4, %w_v3m4 {padding = "valid", groups = 1} : tensor<2x13x8xf32>, tensor<3x8x6xf32>
  %yd_v3m4u = tensor.cast %yd_v3m4 : tensor<2x11x6xf32> to tensor<*xf32>
  call @printMemrefF32(%yd_v3m4u) : (tensor<*xf32>) -> ()
  %dxw_v3m4 = step.conv1d_grad_input %g_v3m4, %w_v3m4 {padding = "valid", groups = 1, step.winograd_tile = 4 : i64} : tensor<2x11x6xf32>, tensor<3x8x6xf32>
  %dxw_v3m4u = tensor.cast %dxw_v3m4 : tensor<2x13x8xf32> to tensor<*xf32>
  call @printMemrefF32(%dxw_v3m4u) : (tensor<*xf32>) -> ()
  %dxd_v3m4 = step.conv1d_grad_input %g_v3m4, %w_v3m4 {padding = "valid", groups = 1} : tensor<2x11x6xf32>, tensor<3x8x6xf32>
  %dxd_v3m4u = tensor.cast %dxd_v3m4 : tensor<2x13x8xf32> to tensor<*xf32>
  call @printMemrefF32(%dxd_v3m4u) : (tensor<*xf32>) -> ()
  %dww_v3m4 = step.conv1d_grad_weight %x_v3m4, %g_v3m4 {kernel = 3, padding = "valid", groups = 1, step.winograd_tile = 4 : i64} : tensor<2x13x8xf32>, tensor<2x11x6xf32>
  %dww_v3m4u = tensor.cast %dww_v3m4 : tensor<3x8x6xf32> to tensor<*xf32>
  call @printMemrefF32(%dww_v3m4u) : (tensor<*xf32>) -> ()
  %dwd_v3m4 = step.conv1d_grad_weight %x_v3m4, %g_v3m4 {kernel = 3, padding = "valid", groups = 1} : tensor<2x13x8xf32>, tensor<2x11x6xf32>
  %dwd_v3m4u = tensor.cast %dwd_v3m4 : tensor<3x8x6xf32> to tensor<*xf32>
  call @printMemrefF32(%dwd_v3m4u) : (tensor<*xf32>) -> ()
  // v5m2: K = 5 valid, F(2, 5)
  %x_v5m2 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %x_v5m2_c0 = arith.constant 37 : index
    %x_v5m2_p0 = arith.muli %i0, %x_v5m2_c0 : index
    %x_v5m2_c1 = arith.constant 11 : index
    %x_v5m2_p1 = arith.muli %i1, %x_v5m2_c1 : index
    %x_v5m2_c2 = arith.constant 5 : index
    %x_v5m2_p2 = arith.muli %i2, %x_v5m2_c2 : index
    %x_v5m2_s0 = arith.addi %x_v5m2_p0, %x_v5m2_p1 : index
    %x_v5m2_s1 = arith.addi %x_v5m2_s0, %x_v5m2_p2 : index
    %x_v5m2_seed = arith.constant 1 : index
    %x_v5m2_t = arith.addi %x_v5m2_s1, %x_v5m2_seed : index
    %x_v5m2_m = arith.constant 17 : index
    %x_v5m2_r = arith.remui %x_v5m2_t, %x_v5m2_m : index
    %x_v5m2_ri = arith.index_cast %x_v5m2_r : index to i64
    %x_v5m2_f = arith.sitofp %x_v5m2_ri : i64 to f32
    %x_v5m2_e = arith.constant 0.125 : f32
    %x_v5m2_g = arith.mulf %x_v5m2_f, %x_v5m2_e : f32
    %x_v5m2_o = arith.constant -1.0 : f32
    %x_v5m2_v = arith.addf %x_v5m2_g, %x_v5m2_o : f32
    tensor.yield %x_v5m2_v : f32
  } : tensor<2x12x5xf32>
  %w_v5m2 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %w_v5m2_c0 = arith.constant 37 : index
    %w_v5m2_p0 = arith.muli %i0, %w_v5m2_c0 : index
    %w_v5m2_c1 = arith.constant 11 : index
    %w_v5m2_p1 = arith.muli %i1, %w_v5m2_c1 : index
    %w_v5m2_c2 = arith.constant 5 : index
    %w_v5m2_p2 = arith.muli %i2, %w_v5m2_c2 : index
    %w_v5m2_s0 = arith.addi %w_v5m2_p0, %w_v5m2_p1 : index
    %w_v5m2_s1 = arith.addi %w_v5m2_s0, %w_v5m2_p2 : index
    %w_v5m2_seed = arith.constant 5 : index
    %w_v5m2_t = arith.addi %w_v5m2_s1, %w_v5m2_seed : index
    %w_v5m2_m = arith.constant 17 : index
    %w_v5m2_r = arith.remui %w_v5m2_t, %w_v5m2_m : index
    %w_v5m2_ri = arith.index_cast %w_v5m2_r : index to i64
    %w_v5m2_f = arith.sitofp %w_v5m2_ri : i64 to f32
    %w_v5m2_e = arith.constant 0.125 : f32
    %w_v5m2_g = arith.mulf %w_v5m2_f, %w_v5m2_e : f32
    %w_v5m2_o = arith.constant -1.0 : f32
    %w_v5m2_v = arith.addf %w_v5m2_g, %w_v5m2_o : f32
    tensor.yield %w_v5m2_v : f32
  } : tensor<5x5x7xf32>
  %g_v5m2 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %g_v5m2_c0 = arith.constant 37 : index
    %g_v5m2_p0 = arith.muli %i0, %g_v5m2_c0 : index
    %g_v5m2_c1 = arith.constant 11 : index
    %g_v5m2_p1 = arith.muli %i1, %g_v5m2_c1 : index
    %g_v5m2_c2 = arith.constant 5 : index
    %g_v5m2_p2 = arith.muli %i2, %g_v5m2_c2 : index
    %g_v5m2_s0 = arith.addi %g_v5m2_p0, %g_v5m2_p1 : index
    %g_v5m2_s1 = arith.addi %g_v5m2_s0, %g_v5m2_p2 : index
    %g_v5m2_seed = arith.constant 9 : index
    %g_v5m2_t = arith.addi %g_v5m2_s1, %g_v5m2_seed : index
    %g_v5m2_m = arith.constant 17 : index
    %g_v5m2_r = arith.remui %g_v5m2_t, %g_v5m2_m : index
    %g_v5m2_ri = arith.index_cast %g_v5m2_r : index to i64
    %g_v5m2_f = arith.sitofp %g_v5m2_ri : i64 to f32
    %g_v5m2_e = arith.constant 0.125 : f32
    %g_v5m2_g = arith.mulf %g_v5m2_f, %g_v5m2_e : f32
    %g_v5m2_o = arith.constant -1.0 : f32
    %g_v5m2_v = arith.addf %g_v5m2_g, %g_v5m2_o : f32
    tensor.yield %g_v5m2_v : f32
  } : tensor<2x8x7xf32>
  %yw_v5m2 = step.conv1d %x_v5m2, %w_v5m2 {padding = "valid", groups = 1, step.winograd_tile = 2 : i64} : tensor<2x12x5xf32>, tensor<5x5x7xf32>
  %yw_v5m2u = tensor.cast %yw_v5m2 : tensor<2x8x7xf32> to tensor<*xf32>
  call @printMemrefF32(%yw_v5m2u) : (tensor<*xf32>) -> ()
  %yd_v5m2 = step.conv1d %x_v5m2, %w_v5m2 {padding = "valid", groups = 1} : tensor<2x12x5xf32>, tensor<5x5x7xf32>
  %yd_v5m2u = tensor.cast %yd_v5m2 : tensor<2x8x7xf32> to tensor<*xf32>
  call @printMemrefF32(%yd_v5m2u) : (tensor<*xf32>) -> ()
  %dxw_v5m2 = step.conv1d_grad_input %g_v5m2, %w_v5m2 {padding = "valid", groups = 1, step.winograd_tile = 2 : i64} : tensor<2x8x7xf32>, tensor<5x5x7xf32>
  %dxw_v5m2u = tensor.cast %dxw_v5m2 : tensor<2x12x5xf32> to tensor<*xf32>
  call @printMemrefF32(%dxw_v5m2u) : (tensor<*xf32>) -> ()
  %dxd_v5m2 = step.conv1d_grad_input %g_v5m2, %w_v5m2 {padding = "valid", groups = 1} : tensor<2x8x7xf32>, tensor<5x5x7xf32>
  %dxd_v5m2u = tensor.cast %dxd_v5m2 : tensor<2x12x5xf32> to tensor<*xf32>
  call @printMemrefF32(%dxd_v5m2u) : (tensor<*xf32>) -> ()
  %dww_v5m2 = step.conv1d_grad_weight %x_v5m2, %g_v5m2 {kernel = 5, padding = "valid", groups = 1, step.winograd_tile = 2 : i64} : tensor<2x12x5xf32>, tensor<2x8x7xf32>
  %dww_v5m2u = tensor.cast %dww_v5m2 : tensor<5x5x7xf32> to tensor<*xf32>
  call @printMemrefF32(%dww_v5m2u) : (tensor<*xf32>) -> ()
  %dwd_v5m2 = step.conv1d_grad_weight %x_v5m2, %g_v5m2 {kernel = 5, padding = "valid", groups = 1} : tensor<2x12x5xf32>, tensor<2x8x7xf32>
  %dwd_v5m2u = tensor.cast %dwd_v5m2 : tensor<5x5x7xf32> to tensor<*xf32>
  call @printMemrefF32(%dwd_v5m2u) : (tensor<*xf32>) -> ()
  // c7m4x2: K = 7 causal, F(4, 7), 2 batch chunks
  %x_c7m4x2 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %x_c7m4x2_c0 = arith.constant 37 : index
    %x_c7m4x2_p0 = arith.muli %i0, %x_c7m4x2_c0 : index
    %x_c7m4x2_c1 = arith.constant 11 : index
    %x_c7m4x2_p1 = arith.muli %i1, %x_c7m4x2_c1 : index
    %x_c7m4x2_c2 = arith.constant 5 : index
    %x_c7m4x2_p2 = arith.muli %i2, %x_c7m4x2_c2 : index
    %x_c7m4x2_s0 = arith.addi %x_c7m4x2_p0, %x_c7m4x2_p1 : index
    %x_c7m4x2_s1 = arith.addi %x_c7m4x2_s0, %x_c7m4x2_p2 : index
    %x_c7m4x2_seed = arith.constant 1 : index
    %x_c7m4x2_t = arith.addi %x_c7m4x2_s1, %x_c7m4x2_seed : index
    %x_c7m4x2_m = arith.constant 17 : index
    %x_c7m4x2_r = arith.remui %x_c7m4x2_t, %x_c7m4x2_m : index
    %x_c7m4x2_ri = arith.index_cast %x_c7m4x2_r : index to i64
    %x_c7m4x2_f = arith.sitofp %x_c7m4x2_ri : i64 to f32
    %x_c7m4x2_e = arith.constant 0.125 : f32
    %x_c7m4x2_g = arith.mulf %x_c7m4x2_f, %x_c7m4x2_e : f32
    %x_c7m4x2_o = arith.constant -1.0 : f32
    %x_c7m4x2_v = arith.addf %x_c7m4x2_g, %x_c7m4x2_o : f32
    tensor.yield %x_c7m4x2_v : f32
  } : tensor<4x13x6xf32>
  %w_c7m4x2 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %w_c7m4x2_c0 = arith.constant 37 : index
    %w_c7m4x2_p0 = arith.muli %i0, %w_c7m4x2_c0 : index
    %w_c7m4x2_c1 = arith.constant 11 : index
    %w_c7m4x2_p1 = arith.muli %i1, %w_c7m4x2_c1 : index
    %w_c7m4x2_c2 = arith.constant 5 : index
    %w_c7m4x2_p2 = arith.muli %i2, %w_c7m4x2_c2 : index
    %w_c7m4x2_s0 = arith.addi %w_c7m4x2_p0, %w_c7m4x2_p1 : index
    %w_c7m4x2_s1 = arith.addi %w_c7m4x2_s0, %w_c7m4x2_p2 : index
    %w_c7m4x2_seed = arith.constant 5 : index
    %w_c7m4x2_t = arith.addi %w_c7m4x2_s1, %w_c7m4x2_seed : index
    %w_c7m4x2_m = arith.constant 17 : index
    %w_c7m4x2_r = arith.remui %w_c7m4x2_t, %w_c7m4x2_m : index
    %w_c7m4x2_ri = arith.index_cast %w_c7m4x2_r : index to i64
    %w_c7m4x2_f = arith.sitofp %w_c7m4x2_ri : i64 to f32
    %w_c7m4x2_e = arith.constant 0.125 : f32
    %w_c7m4x2_g = arith.mulf %w_c7m4x2_f, %w_c7m4x2_e : f32
    %w_c7m4x2_o = arith.constant -1.0 : f32
    %w_c7m4x2_v = arith.addf %w_c7m4x2_g, %w_c7m4x2_o : f32
    tensor.yield %w_c7m4x2_v : f32
  } : tensor<7x6x8xf32>
  %g_c7m4x2 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %g_c7m4x2_c0 = arith.constant 37 : index
    %g_c7m4x2_p0 = arith.muli %i0, %g_c7m4x2_c0 : index
    %g_c7m4x2_c1 = arith.constant 11 : index
    %g_c7m4x2_p1 = arith.muli %i1, %g_c7m4x2_c1 : index
    %g_c7m4x2_c2 = arith.constant 5 : index
    %g_c7m4x2_p2 = arith.muli %i2, %g_c7m4x2_c2 : index
    %g_c7m4x2_s0 = arith.addi %g_c7m4x2_p0, %g_c7m4x2_p1 : index
    %g_c7m4x2_s1 = arith.addi %g_c7m4x2_s0, %g_c7m4x2_p2 : index
    %g_c7m4x2_seed = arith.constant 9 : index
    %g_c7m4x2_t = arith.addi %g_c7m4x2_s1, %g_c7m4x2_seed : index
    %g_c7m4x2_m = arith.constant 17 : index
    %g_c7m4x2_r = arith.remui %g_c7m4x2_t, %g_c7m4x2_m : index
    %g_c7m4x2_ri = arith.index_cast %g_c7m4x2_r : index to i64
    %g_c7m4x2_f = arith.sitofp %g_c7m4x2_ri : i64 to f32
    %g_c7m4x2_e = arith.constant 0.125 : f32
    %g_c7m4x2_g = arith.mulf %g_c7m4x2_f, %g_c7m4x2_e : f32
    %g_c7m4x2_o = arith.constant -1.0 : f32
    %g_c7m4x2_v = arith.addf %g_c7m4x2_g, %g_c7m4x2_o : f32
    tensor.yield %g_c7m4x2_v : f32
  } : tensor<4x13x8xf32>
  %yw_c7m4x2 = step.conv1d %x_c7m4x2, %w_c7m4x2 {padding = "causal", groups = 1, step.winograd_tile = 4 : i64, step.winograd_chunks = 2 : i64} : tensor<4x13x6xf32>, tensor<7x6x8xf32>
  %yw_c7m4x2u = tensor.cast %yw_c7m4x2 : tensor<4x13x8xf32> to tensor<*xf32>
  call @printMemrefF32(%yw_c7m4x2u) : (tensor<*xf32>) -> ()
  %yd_c7m4x2 = step.conv1d %x_c7m4x2, %w_c7m4x2 {padding = "causal", groups = 1} : tensor<4x13x6xf32>, tensor<7x6x8xf32>
  %yd_c7m4x2u = tensor.cast %yd_c7m4x2 : tensor<4x13x8xf32> to tensor<*xf32>
  call @printMemrefF32(%yd_c7m4x2u) : (tensor<*xf32>) -> ()
  %dxw_c7m4x2 = step.conv1d_grad_input %g_c7m4x2, %w_c7m4x2 {padding = "causal", groups = 1, step.winograd_tile = 4 : i64, step.winograd_chunks = 2 : i64} : tensor<4x13x8xf32>, tensor<7x6x8xf32>
  %dxw_c7m4x2u = tensor.cast %dxw_c7m4x2 : tensor<4x13x6xf32> to tensor<*xf32>
  call @printMemrefF32(%dxw_c7m4x2u) : (tensor<*xf32>) -> ()
  %dxd_c7m4x2 = step.conv1d_grad_input %g_c7m4x2, %w_c7m4x2 {padding = "causal", groups = 1} : tensor<4x13x8xf32>, tensor<7x6x8xf32>
  %dxd_c7m4x2u = tensor.cast %dxd_c7m4x2 : tensor<4x13x6xf32> to tensor<*xf32>
  call @printMemrefF32(%dxd_c7m4x2u) : (tensor<*xf32>) -> ()
  %dww_c7m4x2 = step.conv1d_grad_weight %x_c7m4x2, %g_c7m4x2 {kernel = 7, padding = "causal", groups = 1, step.winograd_tile = 4 : i64, step.winograd_chunks = 2 : i64} : tensor<4x13x6xf32>, tensor<4x13x8xf32>
  %dww_c7m4x2u = tensor.cast %dww_c7m4x2 : tensor<7x6x8xf32> to tensor<*xf32>
  call @printMemrefF32(%dww_c7m4x2u) : (tensor<*xf32>) -> ()
  %dwd_c7m4x2 = step.conv1d_grad_weight %x_c7m4x2, %g_c7m4x2 {kernel = 7, padding = "causal", groups = 1} : tensor<4x13x6xf32>, tensor<4x13x8xf32>
  %dwd_c7m4x2u = tensor.cast %dwd_c7m4x2 : tensor<7x6x8xf32> to tensor<*xf32>
  call @printMemrefF32(%dwd_c7m4x2u) : (tensor<*xf32>) -> ()
  // v3m2x4: K = 3 valid, F(2, 3), 4 batch chunks
  %x_v3m2x4 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %x_v3m2x4_c0 = arith.constant 37 : index
    %x_v3m2x4_p0 = arith.muli %i0, %x_v3m2x4_c0 : index
    %x_v3m2x4_c1 = arith.constant 11 : index
    %x_v3m2x4_p1 = arith.muli %i1, %x_v3m2x4_c1 : index
    %x_v3m2x4_c2 = arith.constant 5 : index
    %x_v3m2x4_p2 = arith.muli %i2, %x_v3m2x4_c2 : index
    %x_v3m2x4_s0 = arith.addi %x_v3m2x4_p0, %x_v3m2x4_p1 : index
    %x_v3m2x4_s1 = arith.addi %x_v3m2x4_s0, %x_v3m2x4_p2 : index
    %x_v3m2x4_seed = arith.constant 1 : index
    %x_v3m2x4_t = arith.addi %x_v3m2x4_s1, %x_v3m2x4_seed : index
    %x_v3m2x4_m = arith.constant 17 : index
    %x_v3m2x4_r = arith.remui %x_v3m2x4_t, %x_v3m2x4_m : index
    %x_v3m2x4_ri = arith.index_cast %x_v3m2x4_r : index to i64
    %x_v3m2x4_f = arith.sitofp %x_v3m2x4_ri : i64 to f32
    %x_v3m2x4_e = arith.constant 0.125 : f32
    %x_v3m2x4_g = arith.mulf %x_v3m2x4_f, %x_v3m2x4_e : f32
    %x_v3m2x4_o = arith.constant -1.0 : f32
    %x_v3m2x4_v = arith.addf %x_v3m2x4_g, %x_v3m2x4_o : f32
    tensor.yield %x_v3m2x4_v : f32
  } : tensor<4x12x5xf32>
  %w_v3m2x4 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %w_v3m2x4_c0 = arith.constant 37 : index
    %w_v3m2x4_p0 = arith.muli %i0, %w_v3m2x4_c0 : index
    %w_v3m2x4_c1 = arith.constant 11 : index
    %w_v3m2x4_p1 = arith.muli %i1, %w_v3m2x4_c1 : index
    %w_v3m2x4_c2 = arith.constant 5 : index
    %w_v3m2x4_p2 = arith.muli %i2, %w_v3m2x4_c2 : index
    %w_v3m2x4_s0 = arith.addi %w_v3m2x4_p0, %w_v3m2x4_p1 : index
    %w_v3m2x4_s1 = arith.addi %w_v3m2x4_s0, %w_v3m2x4_p2 : index
    %w_v3m2x4_seed = arith.constant 5 : index
    %w_v3m2x4_t = arith.addi %w_v3m2x4_s1, %w_v3m2x4_seed : index
    %w_v3m2x4_m = arith.constant 17 : index
    %w_v3m2x4_r = arith.remui %w_v3m2x4_t, %w_v3m2x4_m : index
    %w_v3m2x4_ri = arith.index_cast %w_v3m2x4_r : index to i64
    %w_v3m2x4_f = arith.sitofp %w_v3m2x4_ri : i64 to f32
    %w_v3m2x4_e = arith.constant 0.125 : f32
    %w_v3m2x4_g = arith.mulf %w_v3m2x4_f, %w_v3m2x4_e : f32
    %w_v3m2x4_o = arith.constant -1.0 : f32
    %w_v3m2x4_v = arith.addf %w_v3m2x4_g, %w_v3m2x4_o : f32
    tensor.yield %w_v3m2x4_v : f32
  } : tensor<3x5x7xf32>
  %g_v3m2x4 = tensor.generate {
  ^bb0(%i0: index, %i1: index, %i2: index):
    %g_v3m2x4_c0 = arith.constant 37 : index
    %g_v3m2x4_p0 = arith.muli %i0, %g_v3m2x4_c0 : index
    %g_v3m2x4_c1 = arith.constant 11 : index
    %g_v3m2x4_p1 = arith.muli %i1, %g_v3m2x4_c1 : index
    %g_v3m2x4_c2 = arith.constant 5 : index
    %g_v3m2x4_p2 = arith.muli %i2, %g_v3m2x4_c2 : index
    %g_v3m2x4_s0 = arith.addi %g_v3m2x4_p0, %g_v3m2x4_p1 : index
    %g_v3m2x4_s1 = arith.addi %g_v3m2x4_s0, %g_v3m2x4_p2 : index
    %g_v3m2x4_seed = arith.constant 9 : index
    %g_v3m2x4_t = arith.addi %g_v3m2x4_s1, %g_v3m2x4_seed : index
    %g_v3m2x4_m = arith.constant 17 : index
    %g_v3m2x4_r = arith.remui %g_v3m2x4_t, %g_v3m2x4_m : index
    %g_v3m2x4_ri = arith.index_cast %g_v3m2x4_r : index to i64
    %g_v3m2x4_f = arith.sitofp %g_v3m2x4_ri : i64 to f32
    %g_v3m2x4_e = arith.constant 0.125 : f32
    %g_v3m2x4_g = arith.mulf %g_v3m2x4_f, %g_v3m2x4_e : f32
    %g_v3m2x4_o = arith.constant -1.0 : f32
    %g_v3m2x4_v = arith.addf %g_v3m2x4_g, %g_v3m2x4_o : f32
    tensor.yield %g_v3m2x4_v : f32
  } : tensor<4x10x7xf32>
  %yw_v3m2x4 = step.conv1d %x_v3m2x4, %w_v3m2x4 {padding = "valid", groups = 1, step.winograd_tile = 2 : i64, step.winograd_chunks = 4 : i64} : tensor<4x12x5xf32>, tensor<3x5x7xf32>
  %yw_v3m2x4u = tensor.cast %yw_v3m2x4 : tensor<4x10x7xf32> to tensor<*xf32>
  call @printMemrefF32(%yw_v3m2x4u) : (tensor<*xf32>) -> ()
  %yd_v3m2x4 = step.conv1d %x_v3m2x4, %w_v3m2x4 {padding = "valid", groups = 1} : tensor<4x12x5xf32>, tensor<3x5x7xf32>
  %yd_v3m2x4u = tensor.cast %yd_v3m2x4 : tensor<4x10x7xf32> to tensor<*xf32>
  call @printMemrefF32(%yd_v3m2x4u) : (tensor<*xf32>) -> ()
  %dxw_v3m2x4 = step.conv1d_grad_input %g_v3m2x4, %w_v3m2x4 {padding = "valid", groups = 1, step.winograd_tile = 2 : i64, step.winograd_chunks = 4 : i64} : tensor<4x10x7xf32>, tensor<3x5x7xf32>
  %dxw_v3m2x4u = tensor.cast %dxw_v3m2x4 : tensor<4x12x5xf32> to tensor<*xf32>
  call @printMemrefF32(%dxw_v3m2x4u) : (tensor<*xf32>) -> ()
  %dxd_v3m2x4 = step.conv1d_grad_input %g_v3m2x4, %w_v3m2x4 {padding = "valid", groups = 1} : tensor<4x10x7xf32>, tensor<3x5x7xf32>
  %dxd_v3m2x4u = tensor.cast %dxd_v3m2x4 : tensor<4x12x5xf32> to tensor<*xf32>
  call @printMemrefF32(%dxd_v3m2x4u) : (tensor<*xf32>) -> ()
  %dww_v3m2x4 = step.conv1d_grad_weight %x_v3m2x4, %g_v3m2x4 {kernel = 3, padding = "valid", groups = 1, step.winograd_tile = 2 : i64, step.winograd_chunks = 4 : i64} : tensor<4x12x5xf32>, tensor<4x10x7xf32>
  %dww_v3m2x4u = tensor.cast %dww_v3m2x4 : tensor<3x5x7xf32> to tensor<*xf32>
  call @printMemrefF32(%dww_v3m2x4u) : (tensor<*xf32>) -> ()
  %dwd_v3m2x4 = step.conv1d_grad_weight %x_v3m2x4, %g_v3m2x4 {kernel = 3, padding = "valid", groups = 1} : tensor<4x12x5xf32>, tensor<4x10x7xf32>
  %dwd_v3m2x4u = tensor.cast %dwd_v3m2x4 : tensor<3x5x7xf32> to tensor<*xf32>
  call @printMemrefF32(%dwd_v3m2x4u) : (tensor<*xf32>) -> ()
  return
}
