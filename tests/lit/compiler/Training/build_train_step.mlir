// RUN: %stepc-opt %s -split-input-file --step-build-train-step | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-build-train-step | %stepc-opt -split-input-file -o /dev/null
// RUN: %stepc-opt %s -split-input-file '--step-build-train-step=sam-rho=0' | FileCheck %s --check-prefix=NOSAM
// RUN: %stepc-opt %s -split-input-file '--step-build-train-step=micro-batches=2' | FileCheck %s --check-prefix=MICRO

// Tests the signature of a plain SGD step: params, inputs, step counter in; new params and
// metrics out, each named by role. The gradient of the input features is never built.
// CHECK-LABEL: step.model @sgd_linear
// CHECK: func.func @train_step(%[[W:.+]]: tensor<3x2xf32> {step.name = "w", step.role = "param"}, %[[X:.+]]: tensor<4x3xf32> {step.index = 0 : i64, step.name = "data", step.role = "input"}, %{{.+}}: tensor<4xi32> {step.index = 1 : i64, step.name = "data", step.role = "input"}, %[[STEP:.+]]: tensor<i64> {step.name = "step", step.role = "step"})
// CHECK-SAME: -> (tensor<3x2xf32> {step.name = "w", step.role = "param"}, tensor<f32> {step.name = "loss", step.role = "metric"}, tensor<f32> {step.name = "grad_norm", step.role = "metric"}, tensor<f32> {step.name = "lr", step.role = "metric"})
// CHECK: %[[LOGITS:.+]] = step.matmul %[[X]], %[[W]]
// CHECK: %[[LOSS:.+]] = step.cross_entropy %[[LOGITS]]
// CHECK-NOT: step.matmul %{{.+}}, %[[W]] {transpose_rhs}
// CHECK: %[[DW:.+]] = step.matmul %[[X]], %{{.+}} {transpose_lhs}
// CHECK: %[[NEW:.+]] = step.sub %[[W]], %{{.+}} : tensor<3x2xf32>
// CHECK: return %[[NEW]], %[[LOSS]], %{{.+}}, %{{.+}}
// NOSAM-LABEL: step.model @sgd_linear
// MICRO-LABEL: step.model @sgd_linear
// MICRO: step.repeat "micro_batch" 2
// MICRO-SAME: over (%{{.+}} = %{{.+}} : tensor<2x2x3xf32>, %{{.+}} = %{{.+}} : tensor<2x2xi32>)
step.model @sgd_linear {
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 2)
  %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  %loss = step.cross_entropy %logits, %y
  step.loss %loss
  step.config { optimizer = sgd(lr = 0.1) }
}

// -----

// Tests that AdamW with SAM puts both passes and the optimizer in the one function: two
// forward losses, the perturbation w + rho g / ||g||, bias corrections, decoupled decay, and
// the SAM loss as a metric.
// CHECK-LABEL: step.model @adamw_sam
// CHECK: func.func @train_step
// CHECK-SAME: step.slot = "m"
// CHECK-SAME: step.slot = "v"
// CHECK-SAME: {step.name = "sam_loss", step.role = "metric"}
// CHECK: %[[L1:.+]] = step.cross_entropy
// CHECK: step.sqrt
// CHECK: %[[WP:.+]] = step.add %arg0, %{{.+}} : tensor<3x2xf32>
// CHECK: step.matmul %{{.+}}, %[[WP]]
// CHECK: %[[L2:.+]] = step.cross_entropy
// CHECK: step.exp
// CHECK: step.exp
// CHECK: return {{.*}}%[[L1]], %{{.+}}, %{{.+}}, %[[L2]] :
// NOSAM-LABEL: step.model @adamw_sam
// NOSAM: func.func @train_step
// NOSAM-NOT: sam_loss
// NOSAM: step.cross_entropy
// NOSAM-NOT: step.cross_entropy
// NOSAM: return
step.model @adamw_sam {
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 2)
  %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  %loss = step.cross_entropy %logits, %y
  step.loss %loss
  step.config { optimizer = adamw(lr = 0.01, weight_decay = 0.1), sam = sam(rho = 0.05) }
}

// -----

// Tests that a repeated layer stays one loop in the train step: a forward repeat that saves
// each layer's input and one reverse repeat producing the stacked weight gradient.
// CHECK-LABEL: step.model @stacked_layers
// CHECK: func.func @train_step(%[[WS:.+]]: tensor<5x3x3xf32> {step.name = "layer.w", step.role = "param"}
// CHECK: step.repeat "layer" 5 (%{{.+}} = %{{.+}} : tensor<4x3xf32>) over (%{{.+}} = %[[WS]] : tensor<5x3x3xf32>)
// CHECK: step.repeat "layer_grad" 5 {{.*}} reverse
// CHECK-NOT: step.repeat
// CHECK: return
step.model @stacked_layers dims(depth = 5) {
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 3)
  %h = step.repeat "layer" depth (%a = %x) {
    %w = step.param "w" [3, 3] f32 = orthogonal
    %m = step.matmul %a, %w
    %t = step.tanh %m
    %r = step.add %a, %t
    step.yield %r
  }
  %loss = step.cross_entropy %h, %y
  step.loss %loss
  step.config { optimizer = adam(lr = 0.01) }
}

// -----

// Tests the schedule and clipping pieces: warmup + cosine from the step counter, and
// adaptive per-column clipping with max/min against the eps floors.
// CHECK-LABEL: step.model @schedule_and_agc
// CHECK: func.func @train_step
// CHECK: step.cast %arg{{[0-9]+}} {to = f64} : tensor<i64> -> tensor<f64>
// CHECK: step.sum %{{.+}} {axes = [0], keepdim} : tensor<3x2xf32> -> tensor<1x2xf32>
// CHECK: step.max
// CHECK: step.min
// CHECK: step.cos
// CHECK: step.compare %{{.+}}, %{{.+}} {predicate = "lt"}
// CHECK: step.select
step.model @schedule_and_agc {
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 2)
  %w = step.param "w" [3, 2] f32 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  %loss = step.cross_entropy %logits, %y
  step.loss %loss
  step.config {
    optimizer = sgd(lr = 0.1, momentum = 0.9, nesterov = true),
    schedule = warmup_cosine(warmup = 10, total = 100),
    clip = agc(lambda = 0.01)
  }
}

// -----

// Tests that the loss may be a repeat's carried result (the repeat is rewritten while it is
// differentiated, and the loss metric follows the rewrite).
// CHECK-LABEL: step.model @loss_from_repeat
// CHECK: %[[ACC:.+]]:2 = step.repeat "r" 2
// CHECK: return {{.*}}%[[ACC]]#0,
// NOSAM-LABEL: step.model @loss_from_repeat
// MICRO-LABEL: step.model @loss_from_repeat
step.model @loss_from_repeat {
  %w = step.param "w" [3] f32 = ones
  %zero = step.constant {value = dense<0.0> : tensor<f32>}
  %acc = step.repeat "r" 2 (%a = %zero) {
    %s = step.sum %w {axes = [0]}
    %n = step.add %a, %s
    step.yield %n
  }
  step.loss %acc
  step.config { optimizer = sgd(lr = 0.1) }
}

// -----

// Tests that bf16 parameters are updated in bf16 (norms, lr and schedule stay f32) and that a
// custom gradient is re-shaped for micro-batches.
// CHECK-LABEL: step.model @bf16_custom
// CHECK: func.func @train_step(%arg0: tensor<3x2xbf16>
// CHECK: step.cast %{{.+}} {to = bf16} : tensor<f32> -> tensor<bf16>
// CHECK: %[[DECAYED:.+]] = step.mul %arg0, %{{.+}} : tensor<3x2xbf16>, tensor<bf16> -> tensor<3x2xbf16>
// CHECK: step.sub %[[DECAYED]], %{{.+}} : tensor<3x2xbf16>, tensor<3x2xbf16> -> tensor<3x2xbf16>
// NOSAM-LABEL: step.model @bf16_custom
// MICRO-LABEL: step.model @bf16_custom
// MICRO: step.custom_grad (%{{.+}} = %{{.+}} : tensor<2x2xbf16>)
step.model @bf16_custom {
  %x, %y = step.input "data" [4, 3] bf16 = classification(classes = 2)
  %w = step.param "w" [3, 2] bf16 = normal(std = 0.1)
  %logits = step.matmul %x, %w
  %clipped = step.custom_grad (%a = %logits) {
    step.yield %a
  } backward (%a2, %dy) {
    step.yield %dy
  }
  %ce = step.cross_entropy %clipped, %y
  %loss = step.cast %ce {to = f32}
  step.loss %loss
  step.config { optimizer = adamw(lr = 0.01), clip = agc(lambda = 0.1), sam = sam(rho = 0.05) }
}

// -----

// Tests that dropout draws a different stream per step, per layer and per micro-batch:
// stream = (step * K + micro_batch) * L + layer.
// CHECK-LABEL: step.model @dropout_streams
// MICRO-LABEL: step.model @dropout_streams
// MICRO: %[[MB:.+]] = step.iota {dtype = i64, shape = [2]}
// MICRO: step.repeat "micro_batch" 2 {{.*}}, %[[MBI:.+]] = %[[MB]] : tensor<2xi64>)
// MICRO: %[[S1:.+]] = step.mul %{{.+}}, %{{.+}} : tensor<i64>, tensor<i64>
// MICRO: %[[S2:.+]] = step.add %[[S1]], %[[MBI]] : tensor<i64>, tensor<i64>
// MICRO: step.repeat "layer" 3 {{.*}}, %[[LI:.+]] = %{{.+}} : tensor<3xi64>)
// MICRO: %[[S3:.+]] = step.mul %[[S2]], %{{.+}} : tensor<i64>, tensor<i64>
// MICRO: %[[S4:.+]] = step.add %[[S3]], %[[LI]] : tensor<i64>, tensor<i64>
// MICRO: step.dropout %{{.+}}, %[[S4]]
// NOSAM-LABEL: step.model @dropout_streams
step.model @dropout_streams {
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 3)
  %h = step.repeat "layer" 3 (%a = %x) {
    %w = step.param "w" [3, 3] f32 = orthogonal
    %m = step.matmul %a, %w
    %d = step.dropout %m {rate = 0.5, seed = 3}
    step.yield %d
  }
  %loss = step.cross_entropy %h, %y
  step.loss %loss
  step.config { optimizer = sgd(lr = 0.1) }
}

// -----

// Tests that jitter, like dropout, gets the step counter per micro-batch and per layer, also
// inside a function the layer calls (the call is inlined into the step).
// MICRO-LABEL: step.model @jitter_streams
// MICRO: step.repeat "micro_batch" 2 {{.*}}, %[[MBI:.+]] = %{{.+}} : tensor<2xi64>)
// MICRO: %[[S2:.+]] = step.add %{{.+}}, %[[MBI]] : tensor<i64>, tensor<i64>
// MICRO: step.repeat "layer" 3 {{.*}}, %[[LI:.+]] = %{{.+}} : tensor<3xi64>)
// MICRO: %[[S3:.+]] = step.mul %[[S2]], %{{.+}} : tensor<i64>, tensor<i64>
// MICRO: %[[S4:.+]] = step.add %[[S3]], %[[LI]] : tensor<i64>, tensor<i64>
// MICRO: step.jitter %{{.+}}, %[[S4]] {eps = 1.000000e-02 : f64, seed = 5 : i64}
step.model @jitter_streams {
  step.func @route(%a: [4, 3] f32, %w: [3, 3] f32) -> [4, 3] f32 {
    %j = step.jitter %a {eps = 0.01, seed = 5}
    %m = step.matmul %j, %w
    step.return %m
  }
  %x, %y = step.input "data" [4, 3] f32 = classification(classes = 3)
  %h = step.repeat "layer" 3 (%a = %x) {
    %w = step.param "w" [3, 3] f32 = orthogonal
    %m = step.call @route(%a, %w)
    step.yield %m
  }
  %loss = step.cross_entropy %h, %y
  step.loss %loss
  step.config { optimizer = sgd(lr = 0.1) }
}
