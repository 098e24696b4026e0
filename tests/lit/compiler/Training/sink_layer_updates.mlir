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
