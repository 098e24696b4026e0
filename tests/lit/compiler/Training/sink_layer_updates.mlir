// RUN: %stepc-opt %s -split-input-file --step-sink-layer-updates | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-sink-layer-updates | %stepc-opt -split-input-file -o /dev/null

// Tests the move of a stacked parameter's momentum-SGD update into the backward repeat that
// computes its gradient: the update and the new momentum come out stacked over their own
// arguments' `over` slices (step.stack_over), the gradient's sum of squares is carried (the
// global norm's per-layer share), the learning rate computed after the repeat is hoisted
// above it, and the stacked gradient is no longer a result.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[W:[^:]+]]: tensor<4x3xf32> {step.name = "w", step.role = "param"}, %[[M:[^:]+]]: tensor<4x3xf32> {{.*}}, %[[T:[^:]+]]: tensor<f32>
// CHECK: %[[LR:.+]] = step.mul %[[T]], %{{.+}} : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK: %[[ZERO:.+]] = step.constant {value = dense<0.000000e+00> : tensor<f32>}
// CHECK: %[[R:.+]]:4 = step.repeat "cell_grad" 4 (%[[DH:[^ ]+]] = %{{.+}} : tensor<3xf32>, %[[ACC:[^ ]+]] = %[[ZERO]] : tensor<f32>) over (%[[WI:[^ ]+]] = %[[W]] : tensor<4x3xf32>, %[[MI:[^ ]+]] = %[[M]] : tensor<4x3xf32>) reverse attributes {step.stack_over = array<i64: 1, 0>} {
// CHECK-NEXT: %[[G:.+]] = step.mul %[[DH]], %[[WI]] : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[SQ:.+]] = step.mul %[[G]], %[[G]]
// CHECK-NEXT: %[[PART:.+]] = step.sum %[[SQ]] {axes = [0]} : tensor<3xf32> -> tensor<f32>
// CHECK-NEXT: %[[ACC2:.+]] = step.add %[[ACC]], %[[PART]]
// CHECK-NEXT: %[[MOM:.+]] = step.mul %[[MI]], %{{.+}} : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
// CHECK-NEXT: %[[BUF:.+]] = step.add %[[MOM]], %[[G]]
// CHECK-NEXT: %[[STEP:.+]] = step.mul %[[LR]], %[[BUF]]
// CHECK-NEXT: %[[NEW:.+]] = step.sub %[[WI]], %[[STEP]]
// CHECK-NEXT: step.yield %[[G]], %[[ACC2]], %[[BUF]], %[[NEW]] : tensor<3xf32>, tensor<f32>, tensor<3xf32>, tensor<3xf32>
// CHECK: %[[NORM:.+]] = step.sqrt %[[R]]#1
// CHECK-NEXT: return %[[R]]#3, %[[R]]#2, %[[NORM]]
func.func @train_step(%w: tensor<4x3xf32> {step.name = "w", step.role = "param"},
                      %m: tensor<4x3xf32> {step.name = "w", step.role = "state", step.slot = "momentum"},
                      %t: tensor<f32> {step.name = "step", step.role = "step"},
                      %dy: tensor<3xf32>)
    -> (tensor<4x3xf32> {step.name = "w", step.role = "param"},
        tensor<4x3xf32> {step.name = "w", step.role = "state", step.slot = "momentum"},
        tensor<f32> {step.name = "grad_norm", step.role = "metric"}) {
  %r:2 = step.repeat "cell_grad" 4 (%dh = %dy : tensor<3xf32>) over (%wi = %w : tensor<4x3xf32>) reverse {
    %g = step.mul %dh, %wi : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
    step.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  %sq = step.mul %r#1, %r#1 : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %ss = step.sum %sq {axes = [0, 1]} : tensor<4x3xf32> -> tensor<f32>
  %norm = step.sqrt %ss : tensor<f32> -> tensor<f32>
  %scale = step.constant {value = dense<1.000000e-01> : tensor<f32>}
  %lr = step.mul %t, %scale : tensor<f32>, tensor<f32> -> tensor<f32>
  %beta = step.constant {value = dense<9.000000e-01> : tensor<f32>}
  %mom = step.mul %m, %beta : tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %buf = step.add %mom, %r#1 : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %step = step.mul %lr, %buf : tensor<f32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %new = step.sub %w, %step : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %new, %buf, %norm : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>
}

// -----

// Tests global-norm clipping: the coefficient needs every layer's gradient first, so the
// update stays after the repeat and the gradient stays stacked (step.stack_over -1); only the
// norm's sum of squares moves in.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[R:.+]]:3 = step.repeat "cell_grad" 4 ({{.*}}, %[[ACC:[^ ]+]] = %{{.+}} : tensor<f32>) over ({{.*}}) reverse attributes {step.stack_over = array<i64: -1>}
// CHECK: %[[ACC2:.+]] = step.add %[[ACC]], %{{.+}} : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT: step.yield %[[G:.+]], %[[ACC2]], %[[G]] : tensor<3xf32>, tensor<f32>, tensor<3xf32>
// CHECK: %[[COEF:.+]] = step.div
// CHECK-NEXT: %[[CLIPPED:.+]] = step.mul %[[R]]#2, %[[COEF]] : tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
// CHECK-NEXT: step.sub %{{.+}}, %[[CLIPPED]] : tensor<4x3xf32>
func.func @train_step(%w: tensor<4x3xf32> {step.name = "w", step.role = "param"},
                      %dy: tensor<3xf32>)
    -> (tensor<4x3xf32> {step.name = "w", step.role = "param"}) {
  %r:2 = step.repeat "cell_grad" 4 (%dh = %dy : tensor<3xf32>) over (%wi = %w : tensor<4x3xf32>) reverse {
    %g = step.mul %dh, %wi : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
    step.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  %sq = step.mul %r#1, %r#1 : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %ss = step.sum %sq {axes = [0, 1]} : tensor<4x3xf32> -> tensor<f32>
  %norm = step.sqrt %ss : tensor<f32> -> tensor<f32>
  %one = step.constant {value = dense<1.000000e+00> : tensor<f32>}
  %coef = step.div %one, %norm : tensor<f32>, tensor<f32> -> tensor<f32>
  %clipped = step.mul %r#1, %coef : tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %new = step.sub %w, %clipped : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %new : tensor<4x3xf32>
}

// -----

// Tests per-row norms (AGC's units: a sum over an axis other than the layers', shifted down
// one in the body) and a result that is not an update: the exported gradient keeps its stacked
// result, and the update moves.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[R:.+]]:3 = step.repeat "cell_grad" 4 ({{.*}}) over (%[[WI:[^ ]+]] = %{{.+}} : tensor<4x2x3xf32>) reverse attributes {step.stack_over = array<i64: -1, 0>}
// CHECK: %[[ROWS:.+]] = step.sum %{{.+}} {axes = [1], keepdim} : tensor<2x3xf32> -> tensor<2x1xf32>
// CHECK-NEXT: %[[SCALED:.+]] = step.mul %[[G:.+]], %[[ROWS]] : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[NEW:.+]] = step.sub %[[WI]], %[[SCALED]]
// CHECK-NEXT: step.yield %[[G]], %[[G]], %[[NEW]] : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
// CHECK: return %[[R]]#2, %[[R]]#1
func.func @train_step(%w: tensor<4x2x3xf32> {step.name = "w", step.role = "param"},
                      %dy: tensor<2x3xf32>)
    -> (tensor<4x2x3xf32> {step.name = "w", step.role = "param"},
        tensor<4x2x3xf32> {step.name = "w", step.role = "grad"}) {
  %r:2 = step.repeat "cell_grad" 4 (%dh = %dy : tensor<2x3xf32>) over (%wi = %w : tensor<4x2x3xf32>) reverse {
    %g = step.mul %dh, %wi : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    step.yield %g, %g : tensor<2x3xf32>, tensor<2x3xf32>
  }
  %sq = step.mul %r#1, %r#1 : tensor<4x2x3xf32>, tensor<4x2x3xf32> -> tensor<4x2x3xf32>
  %rows = step.sum %sq {axes = [2], keepdim} : tensor<4x2x3xf32> -> tensor<4x2x1xf32>
  %scaled = step.mul %r#1, %rows : tensor<4x2x3xf32>, tensor<4x2x1xf32> -> tensor<4x2x3xf32>
  %new = step.sub %w, %scaled : tensor<4x2x3xf32>, tensor<4x2x3xf32> -> tensor<4x2x3xf32>
  return %new, %r#1 : tensor<4x2x3xf32>, tensor<4x2x3xf32>
}

// -----

// Tests a segmented stack (ForwardClone's segments of a reversible repeat): the backward is an
// outer repeat over 2 segments around the layers' repeat, and the update reads the gradient
// reshaped from [2, 2, 3] to [4, 3]. The update is rewritten on [2, 2, 3] values (the
// parameter and momentum reshaped before the repeat), moved into the outer repeat and from
// there into the inner one: each level writes over its own `over` slices, the norm's sum is
// carried at both levels, and no reshape of the gradient is left.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[W:[^:]+]]: tensor<4x3xf32> {{.*}}, %[[M:[^:]+]]: tensor<4x3xf32>
// CHECK: %[[WS:.+]] = step.reshape %[[W]] {shape = [2, 2, 3]}
// CHECK: %[[MS:.+]] = step.reshape %[[M]] {shape = [2, 2, 3]}
// CHECK: %[[R:.+]]:4 = step.repeat "cell_segments_grad" 2 ({{.*}}, %[[ACC:[^ ]+]] = %{{.+}} : tensor<f32>) over (%[[WSEG:[^ ]+]] = %[[WS]] : tensor<2x2x3xf32>, %[[MSEG:[^ ]+]] = %[[MS]] : tensor<2x2x3xf32>) reverse attributes {step.stack_over = array<i64: 1, 0>}
// CHECK: %[[I:.+]]:4 = step.repeat "cell_grad" 2 ({{.*}}, %[[IACC:[^ ]+]] = %{{.+}} : tensor<f32>) over (%[[WI:[^ ]+]] = %[[WSEG]] : tensor<2x3xf32>, %[[MI:[^ ]+]] = %[[MSEG]] : tensor<2x3xf32>) reverse attributes {step.stack_over = array<i64: 1, 0>}
// CHECK: %[[G:.+]] = step.mul %{{.+}}, %[[WI]] : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
// CHECK: step.add %[[IACC]], %{{.+}} : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK: %[[WN:.+]] = step.sum %{{.+}} {axes = [0], keepdim} : tensor<3xf32> -> tensor<1xf32>
// CHECK: %[[BUF:.+]] = step.add %{{.+}}, %[[G]] : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
// CHECK: %[[NEW:.+]] = step.sub %[[WI]], %{{.+}} : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
// CHECK-NEXT: step.yield %[[G]], %{{.+}}, %[[BUF]], %[[NEW]] : tensor<3xf32>, tensor<f32>, tensor<3xf32>, tensor<3xf32>
// CHECK: %[[ACC2:.+]] = step.add %[[ACC]], %[[I]]#1
// CHECK-NEXT: step.yield %[[I]]#0, %[[ACC2]], %[[I]]#2, %[[I]]#3 : tensor<3xf32>, tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>
// CHECK: %[[NORM:.+]] = step.sqrt %[[R]]#1
// CHECK-NEXT: %[[MNEW:.+]] = step.reshape %[[R]]#2 {shape = [4, 3]}
// CHECK-NEXT: %[[WNEW:.+]] = step.reshape %[[R]]#3 {shape = [4, 3]}
// CHECK-NEXT: return %[[WNEW]], %[[MNEW]], %[[NORM]]
func.func @train_step(%w: tensor<4x3xf32> {step.name = "w", step.role = "param"},
                      %m: tensor<4x3xf32> {step.name = "w", step.role = "state", step.slot = "momentum"},
                      %dy: tensor<3xf32>)
    -> (tensor<4x3xf32> {step.name = "w", step.role = "param"},
        tensor<4x3xf32> {step.name = "w", step.role = "state", step.slot = "momentum"},
        tensor<f32> {step.name = "grad_norm", step.role = "metric"}) {
  %ws = step.reshape %w {shape = [2, 2, 3]} : tensor<4x3xf32> -> tensor<2x2x3xf32>
  %r:2 = step.repeat "cell_segments_grad" 2 (%dh = %dy : tensor<3xf32>) over (%wseg = %ws : tensor<2x2x3xf32>) reverse {
    %i:2 = step.repeat "cell_grad" 2 (%dl = %dh : tensor<3xf32>) over (%wi = %wseg : tensor<2x3xf32>) reverse {
      %g = step.mul %dl, %wi : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
      step.yield %g, %g : tensor<3xf32>, tensor<3xf32>
    }
    step.yield %i#0, %i#1 : tensor<3xf32>, tensor<2x3xf32>
  }
  %grad = step.reshape %r#1 {shape = [4, 3]} : tensor<2x2x3xf32> -> tensor<4x3xf32>
  %sq = step.mul %grad, %grad : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %ss = step.sum %sq {axes = [0, 1]} : tensor<4x3xf32> -> tensor<f32>
  %norm = step.sqrt %ss : tensor<f32> -> tensor<f32>
  %wsq = step.mul %w, %w : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %wn = step.sum %wsq {axes = [1], keepdim} : tensor<4x3xf32> -> tensor<4x1xf32>
  %beta = step.constant {value = dense<9.000000e-01> : tensor<f32>}
  %mom = step.mul %m, %beta : tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %buf = step.add %mom, %grad : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %step = step.mul %wn, %buf : tensor<4x1xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %new = step.sub %w, %step : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %new, %buf, %norm : tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>
}

// -----

// Tests a data-parallel step's overlapped reduction: the fold of the rank's earlier
// micro-batches' sum (%level, from before the repeat) into the last micro-batch's gradient
// and the reduction's start move into the backward, so each layer's reduction starts as soon
// as its gradient exists; the starts' results (where the reductions run) come out stacked (step.stack_over -1) for the
// wait after the repeat, and the update, which needs the sum over the ranks, stays after it.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[LEVEL:[^:]+]]: tensor<4x3xf32>)
// CHECK: %[[R:.+]]:2 = step.repeat "cell_grad" 4 ({{.*}}) over (%{{.+}} = %{{.+}} : tensor<4x3xf32>, %[[LI:[^ ]+]] = %[[LEVEL]] : tensor<4x3xf32>) reverse attributes {step.stack_over = array<i64: -1>}
// CHECK: %[[G:.+]] = step.mul
// CHECK-NEXT: %[[F:.+]] = step.add %[[LI]], %[[G]] : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[T:.+]] = step.all_reduce_start %[[F]] : tensor<3xf32> -> tensor<3xf32>
// CHECK-NEXT: step.yield %{{.+}}, %[[T]] : tensor<3xf32>, tensor<3xf32>
// CHECK: %[[SUM:.+]] = step.all_reduce_wait %[[R]]#1 : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: step.sub %{{.+}}, %{{.+}} : tensor<4x3xf32>
func.func @train_step(%w: tensor<4x3xf32> {step.name = "w", step.role = "param"},
                      %dy: tensor<3xf32>, %level: tensor<4x3xf32>)
    -> (tensor<4x3xf32> {step.name = "w", step.role = "param"}) {
  %r:2 = step.repeat "cell_grad" 4 (%dh = %dy : tensor<3xf32>) over (%wi = %w : tensor<4x3xf32>) reverse {
    %g = step.mul %dh, %wi : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
    step.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  %f = step.add %level, %r#1 : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %t = step.all_reduce_start %f : tensor<4x3xf32> -> tensor<4x3xf32>
  %sum = step.all_reduce_wait %t : tensor<4x3xf32> -> tensor<4x3xf32>
  %lr = step.constant {value = dense<1.000000e-01> : tensor<f32>}
  %step = step.mul %sum, %lr : tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  %new = step.sub %w, %step : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %new : tensor<4x3xf32>
}

// -----

// Tests --shard-optimizer's reduce-scatter moving in the same way: the start reads its owners
// table [4, 1] (a rank per layer) as a stacked operand, so each layer's start names the
// layer's owner ([1], the table's slice); the wait after the repeat gives this rank's block of
// the layers, and this rank's block of the update stays after it.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[LEVEL:[^:]+]]: tensor<4x3xf32>)
// CHECK: %[[OWNERS:.+]] = step.constant {value = dense<{{\[\[}}0], [0], [1], [1]]> : tensor<4x1xi64>}
// CHECK: %[[R:.+]]:2 = step.repeat "cell_grad" 4 ({{.*}}) over (%{{.+}} = %{{.+}} : tensor<4x3xf32>, %[[LI:[^ ]+]] = %[[LEVEL]] : tensor<4x3xf32>, %[[OI:[^ ]+]] = %[[OWNERS]] : tensor<4x1xi64>) reverse attributes {step.stack_over = array<i64: -1>}
// CHECK: %[[F:.+]] = step.add %[[LI]], %{{.+}} : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[T:.+]] = step.reduce_scatter_start %[[F]], %[[OI]] {parts = 2 : i64} : tensor<3xf32>, tensor<1xi64> -> tensor<3xf32>
// CHECK-NEXT: step.yield %{{.+}}, %[[T]] : tensor<3xf32>, tensor<3xf32>
// CHECK: %[[MINE:.+]] = step.reduce_scatter_wait %[[R]]#1 {parts = 2 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK: step.mul %[[MINE]], %{{.+}} : tensor<2x3xf32>
func.func @train_step(%w: tensor<4x3xf32> {step.name = "w", step.role = "param"},
                      %dy: tensor<3xf32>, %level: tensor<4x3xf32>)
    -> (tensor<2x3xf32> {step.name = "w", step.role = "param"}) {
  %owners = step.constant {value = dense<[[0], [0], [1], [1]]> : tensor<4x1xi64>}
  %r:2 = step.repeat "cell_grad" 4 (%dh = %dy : tensor<3xf32>) over (%wi = %w : tensor<4x3xf32>) reverse {
    %g = step.mul %dh, %wi : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
    step.yield %g, %g : tensor<3xf32>, tensor<3xf32>
  }
  %f = step.add %level, %r#1 : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %t = step.reduce_scatter_start %f, %owners {parts = 2} : tensor<4x3xf32>, tensor<4x1xi64> -> tensor<4x3xf32>
  %mine = step.reduce_scatter_wait %t {parts = 2} : tensor<4x3xf32> -> tensor<2x3xf32>
  %lr = step.constant {value = dense<1.000000e-01> : tensor<f32>}
  %step = step.mul %mine, %lr : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  return %step : tensor<2x3xf32>
}
