// RUN: %stepc-opt %s '--step-build-train-step=data-parallel=true micro-batches=2 shard-optimizer=2 column-norms=true' | FileCheck %s
// RUN: %stepc-opt %s '--step-build-train-step=data-parallel=true micro-batches=2 shard-optimizer=2 column-norms=true' | %stepc-opt -o /dev/null
// RUN: %stepc-opt %s '--step-build-train-step=data-parallel=true micro-batches=2 shard-optimizer=2 column-norms=true' | %stepc-opt --step-lower-to-linalg | FileCheck %s --check-prefix=LOWERED
// RUN: not %stepc-opt %s '--step-build-train-step=micro-batches=2 shard-optimizer=2' 2>&1 | FileCheck %s --check-prefix=NODP
// RUN: not %stepc-opt %s '--step-build-train-step=data-parallel=true micro-batches=2 shard-optimizer=4' 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not %stepc-opt %s '--step-build-train-step=data-parallel=true micro-batches=8 shard-optimizer=8' 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not %stepc-opt %s '--step-build-train-step=data-parallel=true micro-batches=32 shard-optimizer=32' 2>&1 | FileCheck %s --check-prefix=MAX

// Tests --shard-optimizer (ZeRO stage 1) in the train step. The weight's first axis (4) splits
// into two blocks: its Adam state arguments are one block ([2, 3], step.shards = 2). Its
// gradient is reduce-scattered: the start names each row's owner (rank row / 2, a table made
// at the top of the step), and the wait gives this rank's block [2, 3]. The gradient norm sums
// every gradient by blocks of rows; the weight's block's share is all-gathered (marked
// step.norm_shares). The weight is cut to this rank's block for the update, whose result is
// gathered back to [4, 3]. The bias's axis (3) does not split: all-reduced, whole state and a
// whole update on every rank.
// CHECK: func.func @train_step(%{{.+}}: tensor<4x3xf32> {step.name = "w", step.role = "param"}, %{{.+}}: tensor<3xf32> {step.name = "b", step.role = "param"}, %[[MW:.+]]: tensor<2x3xf32> {step.name = "w", step.role = "state", step.shards = 2 : i64, step.slot = "m"}, %{{.+}}: tensor<3xf32> {step.name = "b", step.role = "state", step.slot = "m"}, %{{.+}}: tensor<2x3xf32> {step.name = "w", step.role = "state", step.shards = 2 : i64, step.slot = "v"}, %{{.+}}: tensor<3xf32> {step.name = "b", step.role = "state", step.slot = "v"},
// CHECK-SAME: attributes {step.data_parallel = 2 : i64, step.shard_optimizer = 2 : i64}
// CHECK-NEXT: %[[OWNERS:.+]] = step.constant {value = dense<{{\[\[}}0], [0], [1], [1]]> : tensor<4x1xi64>}
// CHECK: step.all_reduce %{{.+}} : tensor<f32> -> tensor<f32>
// CHECK-NEXT: %[[S:.+]] = step.reduce_scatter_start %{{.+}}, %[[OWNERS]] {parts = 2 : i64} : tensor<4x3xf32>, tensor<4x1xi64> -> tensor<4x3xf32>
// CHECK-NEXT: step.reduce_scatter_wait %[[S]] {parts = 2 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: step.all_reduce %{{.+}} : tensor<3xf32> -> tensor<3xf32>
// CHECK-NOT: step.all_reduce
// CHECK: step.all_gather %{{.+}} {parts = 2 : i64, step.norm_shares} : tensor<1xf32> -> tensor<2xf32>
// CHECK: step.rank_shard %arg0 {parts = 2 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK: step.mul %[[MW]], %{{.+}} : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
// CHECK: %[[NEW:.+]] = step.all_gather %{{.+}} {parts = 2 : i64} : tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK-NOT: step.all_gather
// CHECK: return %[[NEW]],

// Lowered: the start hands its first row's owner and the floats per owner (2 rows of 3) to
// the runtime in a call before its marked copy; the wait is the all-reduce's marked copy, then
// the block at row stepc_rank() * 2. The gather places the block in its rows of a whole
// tensor, then a marked copy of that whole tensor is the gathered result.
// LOWERED-DAG: func.func private @stepc_rank() -> i64
// LOWERED-DAG: func.func private @stepc_reduce_scatter_owner(i64, i64) -> i64
// LOWERED: %[[FIRST:.+]] = tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<4x1xi64>
// LOWERED: %[[PER:.+]] = arith.constant 6 : i64
// LOWERED: call @stepc_reduce_scatter_owner(%[[FIRST]], %[[PER]]) : (i64, i64) -> i64
// LOWERED: %[[STARTED:.+]] = linalg.copy {step.collective = "reduce_scatter_start"} ins(%{{.+}} : tensor<4x3xf32>)
// LOWERED: %[[SUMS:.+]] = linalg.copy {step.collective = "all_reduce_wait"} ins(%[[STARTED]] : tensor<4x3xf32>)
// LOWERED: %[[R:.+]] = call @stepc_rank() : () -> i64
// LOWERED: %[[I:.+]] = arith.index_cast %[[R]] : i64 to index
// LOWERED: %[[AT:.+]] = arith.muli %[[I]], %{{.+}} : index
// LOWERED: tensor.extract_slice %[[SUMS]][%[[AT]], 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
// LOWERED: linalg.copy {step.collective = "all_gather", step.norm_shares} ins(%{{.+}} : tensor<2xf32>)
// LOWERED: %[[PLACED:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[%{{.+}}, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x3xf32>
// LOWERED: linalg.copy {step.collective = "all_gather"} ins(%[[PLACED]] : tensor<4x3xf32>) outs(%{{.+}} : tensor<4x3xf32>)

// NODP: error: --shard-optimizer splits the optimizer state over the ranks of a data-parallel run: it needs --data-parallel
// SPLIT: error: --shard-optimizer=4 must be a power of two, at least 2, that divides the 2 micro-batches
// NONE: error: --shard-optimizer=8: no parameter's first axis divides into 8 blocks, so nothing would be sharded
// MAX: error: --shard-optimizer=32: at most 16 ranks
step.model @shard_linear {
  %x, %y = step.input "data" [8, 4] f32 = classification(classes = 3)
  %w = step.param "w" [4, 3] f32 = normal(std = 0.1)
  %b = step.param "b" [3] f32 = zeros
  %h = step.matmul %x, %w
  %logits = step.add %h, %b
  %loss = step.cross_entropy %logits, %y
  step.loss %loss
  step.config { optimizer = adamw(lr = 0.01) }
}
