// RUN: %stepc-opt %s '--step-build-train-step=data-parallel=true micro-batches=4' | FileCheck %s
// RUN: %stepc-opt %s '--step-build-train-step=data-parallel=true micro-batches=4' | %stepc-opt -o /dev/null
// RUN: %stepc-opt %s '--step-build-train-step=data-parallel=true micro-batches=4' | %stepc-opt --step-lower-to-linalg | FileCheck %s --check-prefix=LOOP
// RUN: %stepc-opt %s '--step-build-train-step=data-parallel=true' | FileCheck %s --check-prefix=ONE
// RUN: %stepc-opt %s '--step-build-train-step=data-parallel=true overlap-reductions=true micro-batches=4' | FileCheck %s --check-prefix=PEEL
// RUN: %stepc-opt %s '--step-build-train-step=data-parallel=true overlap-reductions=true micro-batches=4' | %stepc-opt --step-lower-to-linalg | FileCheck %s --check-prefix=PEELLOOP

// Tests --data-parallel's train step. The 4 micro-batches are summed in a binary tree (a
// binary counter): accumulators from -0, the table of merges per micro-batch (its trailing
// ones), a fold of the pending levels into the micro-batch's sums (earlier ones on the left),
// then a store at level merges[i]. The loop is marked step.rank_split (each rank runs its
// block of it), the function step.data_parallel = 4, and the sums are all-reduced before the
// 1/4 scale, the norm and the update.
// CHECK: func.func @train_step({{.*}} attributes {step.data_parallel = 4 : i64}
// CHECK-DAG: %[[ZL:.+]] = step.constant {value = dense<-0.000000e+00> : tensor<f32>}
// CHECK-DAG: %[[ZW:.+]] = step.constant {value = dense<-0.000000e+00> : tensor<3x2xf32>}
// CHECK-DAG: %[[MERGES:.+]] = step.constant {value = dense<[0, 1, 0, 2]> : tensor<4xi64>}
// CHECK: %[[SUMS:.+]]:6 = step.repeat "micro_batch" 4 (%{{.+}} = %[[ZL]] : tensor<f32>, %{{.+}} = %[[ZW]] : tensor<3x2xf32>, %[[L0:.+]] = %[[ZL]] : tensor<f32>, %[[W0:.+]] = %[[ZW]] : tensor<3x2xf32>, %[[L1:.+]] = %[[ZL]] : tensor<f32>, %[[W1:.+]] = %[[ZW]] : tensor<3x2xf32>) over ({{.*}}, %[[M:.+]] = %[[MERGES]] : tensor<4xi64>) attributes {step.rank_split}
// CHECK: %[[DW:.+]] = step.matmul %{{.+}}, %{{.+}} {transpose_lhs}
// CHECK: %[[GT0:.+]] = step.compare %[[M]], %{{.+}} {predicate = "gt"}
// CHECK: %[[ADD0:.+]] = step.add %[[W0]], %[[DW]]
// CHECK: %[[F0:.+]] = step.select %[[GT0]], %[[ADD0]], %[[DW]]
// CHECK: %[[ADD1:.+]] = step.add %[[W1]], %[[F0]]
// CHECK: %[[F1:.+]] = step.select %{{.+}}, %[[ADD1]], %[[F0]]
// CHECK: %[[EQ0:.+]] = step.compare %[[M]], %{{.+}} {predicate = "eq"}
// CHECK: step.select %[[EQ0]], %[[F1]], %[[W0]]
// CHECK: step.yield %{{.+}}, %[[F1]],
// CHECK: step.all_reduce
// CHECK: %[[RW:.+]] = step.all_reduce %[[SUMS]]#1 : tensor<3x2xf32> -> tensor<3x2xf32>
// CHECK: step.mul %[[RW]], %{{.+}} : tensor<3x2xf32>, tensor<f32> -> tensor<3x2xf32>

// Lowered, the loop runs this rank's block: its bounds come from the runtime, the micro-batch
// index stays the global one.
// LOOP-DAG: func.func private @stepc_micro_batch_begin(i64) -> i64
// LOOP-DAG: func.func private @stepc_micro_batch_end(i64) -> i64
// LOOP: %[[N:.+]] = arith.constant 4 : i64
// LOOP: %[[B:.+]] = call @stepc_micro_batch_begin(%[[N]]) : (i64) -> i64
// LOOP: %[[LO:.+]] = arith.index_cast %[[B]] : i64 to index
// LOOP: %[[E:.+]] = call @stepc_micro_batch_end(%[[N]]) : (i64) -> i64
// LOOP: %[[HI:.+]] = arith.index_cast %[[E]] : i64 to index
// LOOP: scf.for %{{.+}} = %[[LO]] to %[[HI]]
// LOOP: linalg.copy {step.collective = "all_reduce_sum"}

// One micro-batch: no loop to split (one rank), the gradient all-reduced as it is.
// ONE: attributes {step.data_parallel = 1 : i64}
// ONE-NOT: step.repeat
// ONE: step.all_reduce
// Overlapped reductions (the CPU's choice): the rank's last micro-batch (step.last_micro_batch)
// runs after a loop over the first 3 (marked step.rank_split_peeled), in a one-iteration repeat
// of its own (step.rank_split_last = 4), which closes every pending level of the tree, earlier
// ones on the left, starts each reduction as soon as its sum exists and waits for them.
// PEEL: %[[LAST:.+]] = step.last_micro_batch %[[X:.+]] : tensor<4x2x3xf32> -> tensor<2x3xf32>
// PEEL-NEXT: %[[FIRST:.+]] = step.slice %[[X]] {limit = [3, 2, 3], start = [0, 0, 0]} : tensor<4x2x3xf32> -> tensor<3x2x3xf32>
// PEEL: %[[SUMS:.+]]:6 = step.repeat "micro_batch" 3 ({{.*}}) over (%{{.+}} = %[[FIRST]] : tensor<3x2x3xf32>, {{.*}}) attributes {step.rank_split, step.rank_split_peeled}
// PEEL: %[[R:.+]]:2 = step.repeat "micro_batch_last" 1 (%{{.+}} = %[[SUMS]]#0 : tensor<f32>, %{{.+}} = %[[SUMS]]#1 : tensor<3x2xf32>) attributes {step.rank_split_last = 4 : i64}
// PEEL: %[[DW:.+]] = step.matmul %[[LAST]], %{{.+}} {transpose_lhs}
// PEEL-NEXT: %[[F0:.+]] = step.add %[[SUMS]]#3, %[[DW]] : tensor<3x2xf32>
// PEEL-NEXT: %[[F1:.+]] = step.add %[[SUMS]]#5, %[[F0]] : tensor<3x2xf32>
// PEEL-NEXT: %[[T:.+]] = step.all_reduce_start %[[F1]] : tensor<3x2xf32> -> tensor<3x2xf32>
// PEEL: %[[RW:.+]] = step.all_reduce_wait %[[T]] : tensor<3x2xf32> -> tensor<3x2xf32>
// PEEL-NEXT: step.yield %{{.+}}, %[[RW]] : tensor<f32>, tensor<3x2xf32>
// PEEL: step.mul %[[R]]#1, %{{.+}} : tensor<3x2xf32>, tensor<f32> -> tensor<3x2xf32>

// Lowered: the first loop stops one short of the rank's block; the last micro-batch is the
// slice at the block's end - 1, in a loop over [end - 1, end).
// PEELLOOP: %[[E:.+]] = call @stepc_micro_batch_end(%{{.+}}) : (i64) -> i64
// PEELLOOP: %[[LASTI:.+]] = arith.subi %[[E]], %{{.+}} : i64
// PEELLOOP: %[[AT:.+]] = arith.index_cast %[[LASTI]] : i64 to index
// PEELLOOP: tensor.extract_slice %{{.+}}[%[[AT]], 0, 0] [1, 2, 3] [1, 1, 1] : tensor<4x2x3xf32> to tensor<2x3xf32>
// PEELLOOP: call @stepc_micro_batch_begin(%{{.+}}) : (i64) -> i64
// PEELLOOP: call @stepc_micro_batch_end(%{{.+}}) : (i64) -> i64
// PEELLOOP-NEXT: %[[HI:.+]] = arith.index_cast %{{.+}} : i64 to index
// PEELLOOP-NEXT: %[[HI1:.+]] = arith.subi %[[HI]], %{{.+}} : index
// PEELLOOP: scf.for %{{.+}} = %{{.+}} to %[[HI1]]
// PEELLOOP: %[[END:.+]] = call @stepc_micro_batch_end(%{{.+}}) : (i64) -> i64
// PEELLOOP-NEXT: %[[UP:.+]] = arith.index_cast %[[END]] : i64 to index
// PEELLOOP-NEXT: %[[LO:.+]] = arith.subi %[[UP]], %{{.+}} : index
// PEELLOOP: scf.for %{{.+}} = %[[LO]] to %[[UP]]
// PEELLOOP: linalg.copy {step.collective = "all_reduce_start"}
// PEELLOOP: linalg.copy {step.collective = "all_reduce_wait"}
step.model @dp_linear {
  %x, %y = step.input "data" [8, 3] f32 = classification(classes = 2)
  %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  %loss = step.cross_entropy %logits, %y
  step.loss %loss
  step.config { optimizer = sgd(lr = 0.1) }
}
