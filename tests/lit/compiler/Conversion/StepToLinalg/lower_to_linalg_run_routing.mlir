// Numeric tests of --step-lower-to-linalg for the routing ops in both forms, the CPU's loops
// and a GPU target's parallel kernels (parallel-routing): top_k (ties: the lower index first,
// also between entries that move down; NaN above every number), route_tokens (priority order:
// every first choice in token order, then every second; a full expert drops the choice; an
// expert id outside [0, E) is no choice) and route_experts (experts in turn, each taking its C
// best tokens among those with fewer than k experts; ties to the lower token; slots in token
// order). Lowered, taken to LLVM and run by mlir-cpu-runner; the expected numbers follow the
// ops' definitions (the interpreter's, tests/unit/interpreter_routing_test.cpp), worked by
// hand below.
//
// RUN: %stepc-opt %s --step-lower-to-linalg | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-lower-to-linalg=parallel-routing=true | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-lower-to-linalg | FileCheck %s --check-prefix=SERIAL
// RUN: %stepc-opt %s --step-lower-to-linalg=parallel-routing=true | FileCheck %s --check-prefix=PARALLEL
// top_k leaves no scan loop: on the CPU it is a reduction over the entries with the rows
// innermost (they vectorize) inside parallel blocks of rows, on a GPU a generic over [rows, k]
// in parallel. The CPU's
// route_tokens is 2 marked loops, each route_experts 4 (experts, bisection, count, take). A
// GPU's route_tokens is one nest (the walk over the choices and the tail of each expert's
// row, in a loop over the experts marked step.block_route: one kernel, a block per expert),
// and its route_experts the CPU's nest with a first pass setting the tokens' state and a tail
// for each expert's row (6 marked loops, the outer marked step.block_route_experts: one
// kernel of one block); BlockRoute.h maps both.
// The CPU's routing loops start their results empty and fill them at their first step, in a
// branch inside the loops (one kernel: no fill kernels before them); top_k fills nothing.
// RUN: %stepc-opt %s --step-lower-to-linalg | FileCheck %s --check-prefix=START
// START-NOT: linalg.fill
// START: scf.for
// START-NEXT: arith.constant
// START: scf.for
// START: scf.if
// START-NEXT: linalg.fill ins(%c0_i32 : i32) outs(%{{.+}} : tensor<3xi32>)
// START-NEXT: linalg.fill ins(%c-1_i32 : i32) outs(%{{.+}} : tensor<3x4xi32>)
// START-NOT: linalg.fill
// START: } {step.scan}
// START-NOT: linalg.fill
// START: scf.for
// START: scf.if
// START-NEXT: linalg.fill ins(%c0_i32 : i32) outs(%{{.+}} : tensor<6xi32>)
// START-COUNT-3: linalg.fill ins(%c-1_i32 : i32)
// RUN: %stepc-opt %s --step-lower-to-linalg | awk '/linalg.fill/ && prev !~ /scf.if|linalg.fill/ {n++} {prev = $0} END {print "fills outside a start:", n + 0}' | FileCheck %s --check-prefix=FILLS
// FILLS: fills outside a start: 0
// SERIAL-NOT: {{step\.[a-z_]+ }}
// SERIAL: iterator_types = [{{("parallel", )?}}"reduction", "parallel"]
// SERIAL-COUNT-10: step.scan
// SERIAL-NOT: {{step\.[a-z_]+ }}
// PARALLEL-NOT: {{step\.[a-z_]+ }}
// PARALLEL-COUNT-2: } {step.scan}
// PARALLEL: } {step.block_route, step.scan}
// PARALLEL-COUNT-5: } {step.scan}
// PARALLEL: } {step.block_route_experts, step.scan}
// PARALLEL-COUNT-5: } {step.scan}
// PARALLEL: } {step.block_route_experts, step.scan}
// PARALLEL-NOT: step.scan
// PARALLEL-NOT: {{step\.[a-z_]+ }}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[0.5, 2.0, 2.0, -1.0, 0.1], [0x7FC00000, 1.0, 3.0, 0x7FC00000, 0.0], [-3.0, -1.0, -2.0, -1.0, -5.0]]> : tensor<3x5xf32>
  // Row 0: 2.0 at 1 and 2 (tie: 1 first). Row 1: the NaNs at 0 and 3 (NaN beats a number,
  // not another NaN). Row 2: -1.0 at 1 and 3.
  %v, %i = step.top_k %x {k = 2} : tensor<3x5xf32>
  %vu = tensor.cast %v : tensor<3x2xf32> to tensor<*xf32>
  call @printMemrefF32(%vu) : (tensor<*xf32>) -> ()
  // CHECK: [2, 2]
  // CHECK-NEXT: [nan, nan]
  // CHECK-NEXT: [-1, -1]
  %if = step.cast %i {to = f32} : tensor<3x2xi32>
  %iu = tensor.cast %if : tensor<3x2xf32> to tensor<*xf32>
  call @printMemrefF32(%iu) : (tensor<*xf32>) -> ()
  // CHECK: [1, 2]
  // CHECK-NEXT: [0, 3]
  // CHECK-NEXT: [1, 3]
  // k = 3 of 4, one row: 4.0 (3), 1.0 (0), then the first of the two 0.5s (1).
  %y = arith.constant dense<[[1.0, 0.5, 0.5, 4.0]]> : tensor<1x4xf32>
  %v3, %i3 = step.top_k %y {k = 3} : tensor<1x4xf32>
  %i3f = step.cast %i3 {to = f32} : tensor<1x3xi32>
  %i3u = tensor.cast %i3f : tensor<1x3xf32> to tensor<*xf32>
  call @printMemrefF32(%i3u) : (tensor<*xf32>) -> ()
  // CHECK: [3, 0, 1]
  // A tie met while moving down: 4.0 displaces the first 0.5 (0), which then ranks before the
  // second (1). (The first lowering, a scan, gave [2, 1] here.)
  %w = arith.constant dense<[[0.5, 0.5, 4.0]]> : tensor<1x3xf32>
  %v2, %i2 = step.top_k %w {k = 2} : tensor<1x3xf32>
  %i2f = step.cast %i2 {to = f32} : tensor<1x2xi32>
  %i2u = tensor.cast %i2f : tensor<1x2xf32> to tensor<*xf32>
  call @printMemrefF32(%i2u) : (tensor<*xf32>) -> ()
  // CHECK: [2, 0]

  // T = 5, k = 2, E = 3, C = ceil(1.0 * 5 * 2 / 3) = 4. First choices: expert 0 for every
  // token, so tokens 0-3 take its slots 0-3 and token 4's is dropped. Second choices: expert
  // 1 for tokens 0 and 2 (its slots 0, 1), expert 2 for tokens 1 and 4 (0, 1), and token 3
  // names -1 (no choice).
  %e = arith.constant dense<[[0, 1], [0, 2], [0, 1], [0, -1], [0, 2]]> : tensor<5x2xi32>
  %choices, %slots = step.route_tokens %e {num_experts = 3, capacity_factor = 1.0} : tensor<5x2xi32>
  %cf = step.cast %choices {to = f32} : tensor<3x4xi32>
  %cu = tensor.cast %cf : tensor<3x4xf32> to tensor<*xf32>
  call @printMemrefF32(%cu) : (tensor<*xf32>) -> ()
  // choices[e, c] = t * 2 + j.
  // CHECK: [0, 2, 4, 6]
  // CHECK-NEXT: [1, 5, -1, -1]
  // CHECK-NEXT: [3, 9, -1, -1]
  %sf = step.cast %slots {to = f32} : tensor<5x2xi32>
  %su = tensor.cast %sf : tensor<5x2xf32> to tensor<*xf32>
  call @printMemrefF32(%su) : (tensor<*xf32>) -> ()
  // slots[t, j] = e * 4 + c.
  // CHECK: [0, 4]
  // CHECK-NEXT: [1, 8]
  // CHECK-NEXT: [2, 5]
  // CHECK-NEXT: [3, -1]
  // CHECK-NEXT: [-1, 9]
  // route_experts, T = 6, E = 3, k = 1, C = 2. Expert 0: 0.9 at tokens 0, 1, 3, a tie for two
  // places: tokens 0 and 1 (token order). Expert 1, among tokens 2-5: 0.8 at 2 and 4. Expert 2,
  // among 3 and 5: both (0.9 above the threshold 0.6, then 0.6 itself), in token order.
  %sc = arith.constant dense<[[0.9, 0.1, 0.5], [0.9, 0.8, 0.2], [0.3, 0.8, 0.7], [0.9, 0.2, 0.9], [-0.5, 0.8, 0.1], [0.2, 0.3, 0.6]]> : tensor<6x3xf32>
  %xc, %xs, %xe = step.route_experts %sc {k = 1, capacity_factor = 1.0} : tensor<6x3xf32>
  %xcf = step.cast %xc {to = f32} : tensor<3x2xi32>
  %xcu = tensor.cast %xcf : tensor<3x2xf32> to tensor<*xf32>
  call @printMemrefF32(%xcu) : (tensor<*xf32>) -> ()
  // CHECK: [0, 1]
  // CHECK-NEXT: [2, 4]
  // CHECK-NEXT: [3, 5]
  %xsf = step.cast %xs {to = f32} : tensor<6x1xi32>
  %xsu = tensor.cast %xsf : tensor<6x1xf32> to tensor<*xf32>
  call @printMemrefF32(%xsu) : (tensor<*xf32>) -> ()
  // CHECK: [0]
  // CHECK-NEXT: [1]
  // CHECK-NEXT: [2]
  // CHECK-NEXT: [4]
  // CHECK-NEXT: [3]
  // CHECK-NEXT: [5]
  %xef = step.cast %xe {to = f32} : tensor<6x1xi32>
  %xeu = tensor.cast %xef : tensor<6x1xf32> to tensor<*xf32>
  call @printMemrefF32(%xeu) : (tensor<*xf32>) -> ()
  // CHECK: [0]
  // CHECK-NEXT: [0]
  // CHECK-NEXT: [1]
  // CHECK-NEXT: [2]
  // CHECK-NEXT: [1]
  // CHECK-NEXT: [2]

  // route_experts, T = 5, E = 2, k = 2, C = ceil(0.6 * 5 * 2 / 2) = 3. Expert 0: 5.0 (4),
  // 0.0 (2), -1.0 (0): tokens 0, 2, 4 in slots 0-2. Expert 1: 2.0 (0), 1.0 (3), then -0.5 at
  // tokens 1, 2 and 4, one place left: token 1. Token 0's second expert is choice j = 1.
  %sd = arith.constant dense<[[-1.0, 2.0], [-3.0, -0.5], [0.0, -0.5], [-2.0, 1.0], [5.0, -0.5]]> : tensor<5x2xf32>
  %yc, %ys, %ye = step.route_experts %sd {k = 2, capacity_factor = 0.6} : tensor<5x2xf32>
  %ycf = step.cast %yc {to = f32} : tensor<2x3xi32>
  %ycu = tensor.cast %ycf : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%ycu) : (tensor<*xf32>) -> ()
  // CHECK: [0, 4, 8]
  // CHECK-NEXT: [1, 2, 6]
  %ysf = step.cast %ys {to = f32} : tensor<5x2xi32>
  %ysu = tensor.cast %ysf : tensor<5x2xf32> to tensor<*xf32>
  call @printMemrefF32(%ysu) : (tensor<*xf32>) -> ()
  // CHECK: [0, 3]
  // CHECK-NEXT: [4, -1]
  // CHECK-NEXT: [1, -1]
  // CHECK-NEXT: [5, -1]
  // CHECK-NEXT: [2, -1]
  %yef = step.cast %ye {to = f32} : tensor<5x2xi32>
  %yeu = tensor.cast %yef : tensor<5x2xf32> to tensor<*xf32>
  call @printMemrefF32(%yeu) : (tensor<*xf32>) -> ()
  // CHECK: [0, 1]
  // CHECK-NEXT: [1, -1]
  // CHECK-NEXT: [0, -1]
  // CHECK-NEXT: [1, -1]
  // CHECK-NEXT: [0, -1]
  return
}
