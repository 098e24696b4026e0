// Numeric tests of --step-lower-to-linalg for the routing ops: top_k (ties: the lower index
// first, also between entries that move down; NaN above every number) and route_tokens in
// both forms (priority order: every first choice in token order, then every second; a full
// expert drops the choice; an expert id outside [0, E) is no choice). Lowered, taken to LLVM and run by
// mlir-cpu-runner; the expected numbers follow the ops' definitions (the interpreter's, whose
// unit tests are tests/unit/interpreter_routing_test.cpp) worked by hand below.
//
// RUN: %stepc-opt %s --step-lower-to-linalg | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-lower-to-linalg=parallel-routing=true | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-lower-to-linalg | FileCheck %s --check-prefix=SERIAL
// RUN: %stepc-opt %s --step-lower-to-linalg=parallel-routing=true | FileCheck %s --check-prefix=PARALLEL
// Rows in parallel: top_k leaves no scan loop. route_tokens is the CPU's loop over the choices
// (its two loops marked), or with parallel-routing (a GPU target's) a cumsum and generics.
// SERIAL-NOT: {{step\.[a-z_]+ }}
// SERIAL-COUNT-2: step.scan
// SERIAL-NOT: step.scan
// PARALLEL-NOT: {{step\.[a-z_]+ }}
// PARALLEL-COUNT-1: step.scan
// PARALLEL-NOT: step.scan

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
  return
}
