// Tests --step-pack-entry-points: on the LLVM dialect, @train_step and @eval_loss each get a
// packed entry point `void stepc_*(ptr)` that loads buffer pointer i from slot i of the array
// and calls the step function with them in order; the `step.program` text is embedded as the
// NUL-terminated external constant @stepc_program_description. Running it twice adds nothing
// (only the first split survives the first run; the others are errors and print nothing).
//
// RUN: %stepc-opt %s -split-input-file --step-pack-entry-points -verify-diagnostics | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-pack-entry-points -verify-diagnostics | %stepc-opt --step-pack-entry-points | FileCheck %s --check-prefix=TWICE

// CHECK-LABEL: module attributes {step.program = "{\22name\22:\22toy\22}"}
// CHECK: llvm.func @train_step(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK: llvm.func @eval_loss(%{{.+}}: !llvm.ptr)
// CHECK: llvm.func @stepc_train_step(%[[BUFS:.+]]: !llvm.ptr) {
// CHECK-NEXT: %[[S0:.+]] = llvm.getelementptr %[[BUFS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[P0:.+]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[S1:.+]] = llvm.getelementptr %[[BUFS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[P1:.+]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[S2:.+]] = llvm.getelementptr %[[BUFS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[P2:.+]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call @train_step(%[[P0]], %[[P1]], %[[P2]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// CHECK: llvm.func @stepc_eval_loss(%[[EB:.+]]: !llvm.ptr) {
// CHECK-NEXT: %[[E0:.+]] = llvm.getelementptr %[[EB]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[Q0:.+]] = llvm.load %[[E0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call @eval_loss(%[[Q0]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// The description: the JSON text plus the NUL (the type, !llvm.array<13 x i8>, is implied by
// the string and not printed).
// CHECK: llvm.mlir.global external constant @stepc_program_description("{\22name\22:\22toy\22}\00") {addr_space = 0 : i32}{{$}}

// TWICE-COUNT-1: llvm.func @stepc_train_step(
// TWICE-COUNT-1: llvm.func @stepc_eval_loss(
// TWICE-COUNT-1: llvm.mlir.global external constant @stepc_program_description(
// TWICE-NOT: @stepc_
module attributes {step.program = "{\22name\22:\22toy\22}"} {
  llvm.func @train_step(%w: !llvm.ptr, %x: !llvm.ptr, %loss: !llvm.ptr) {
    llvm.return
  }
  llvm.func @eval_loss(%w: !llvm.ptr) {
    llvm.return
  }
}

// -----

// Tests that the description must be there.
// expected-error @+1 {{expected the `step.program` description (--step-describe-program)}}
module {
  llvm.func @train_step(%w: !llvm.ptr) {
    llvm.return
  }
  llvm.func @eval_loss(%w: !llvm.ptr) {
    llvm.return
  }
}

// -----

// Tests that both step functions must have been lowered to llvm.func.
// expected-error @+1 {{expected the lowered function @eval_loss (llvm.func) for the entry point stepc_eval_loss}}
module attributes {step.program = "{}"} {
  llvm.func @train_step(%w: !llvm.ptr) {
    llvm.return
  }
}

// -----

// Tests that every argument must be a pointer (a memref descriptor would be a struct or, here,
// an expanded i64).
module attributes {step.program = "{}"} {
  // expected-error @+1 {{every argument of a step function must lower to a pointer (a statically shaped buffer), found 'i64'}}
  llvm.func @train_step(%w: !llvm.ptr, %n: i64) {
    llvm.return
  }
  llvm.func @eval_loss(%w: !llvm.ptr) {
    llvm.return
  }
}

// -----

// Tests that results must come back through out-parameters.
module attributes {step.program = "{}"} {
  llvm.func @train_step(%w: !llvm.ptr) {
    llvm.return
  }
  // expected-error @+1 {{a step function must return through out-parameters}}
  llvm.func @eval_loss(%w: !llvm.ptr) -> f32 {
    %z = llvm.mlir.constant(0.0 : f32) : f32
    llvm.return %z : f32
  }
}
