// Tests --step-pack-entry-points: on the LLVM dialect, @train_step and @eval_loss each get a
// packed entry point `void stepc_*(ptr)` that loads buffer pointer i from slot i of the array
// and calls the step function with them in order; the `step.program` text is embedded as the
// NUL-terminated external constant @stepc_program_description. Running it twice adds nothing
// (only the first split survives the first run; the others are errors and print nothing).
//
// RUN: %stepc-opt %s -split-input-file --step-pack-entry-points -verify-diagnostics | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-pack-entry-points -verify-diagnostics | %stepc-opt --step-pack-entry-points | FileCheck %s --check-prefix=TWICE

// CHECK-LABEL: module attributes {step.program = "{\22name\22:\22toy\22,{{.*}}"}
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
// The description: the JSON text plus the NUL (the array type is implied by the string and
// not printed).
// CHECK: llvm.mlir.global external constant @stepc_program_description("{\22name\22:\22toy\22,{{.*}}\00") {addr_space = 0 : i32}{{$}}

// TWICE-COUNT-1: llvm.func @stepc_train_step(
// TWICE-COUNT-1: llvm.func @stepc_eval_loss(
// TWICE-COUNT-1: llvm.mlir.global external constant @stepc_program_description(
// TWICE-NOT: @stepc_
module attributes {step.program = "{\22name\22:\22toy\22,\22fingerprint\22:\22toy-0\22,\22target\22:\22\22,\22defaultSteps\22:0,\22flopsPerStep\22:0,\22plannedBytes\22:0,\22kernelCount\22:0,\22extraMetrics\22:[],\22params\22:[{\22name\22:\22w\22,\22shape\22:[2],\22dtype\22:\22F32\22,\22stackedDims\22:0,\22init\22:{\22kind\22:\22zeros\22,\22value\22:0,\22mean\22:0,\22std\22:1,\22a\22:0,\22b\22:1,\22gain\22:1}}],\22state\22:[],\22inputs\22:[{\22name\22:\22data\22,\22source\22:\22classification\22,\22shape\22:[2,2],\22dtype\22:\22F32\22,\22classes\22:2}],\22train\22:{\22symbol\22:\22stepc_train_step\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0},{\22kind\22:\22batch\22,\22index\22:0}],\22results\22:[{\22kind\22:\22metric\22,\22metric\22:\22loss\22}]},\22eval\22:{\22symbol\22:\22stepc_eval_loss\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0}],\22results\22:[]}}"} {
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
module attributes {step.program = "{\22name\22:\22toy\22,\22fingerprint\22:\22toy-0\22,\22target\22:\22\22,\22defaultSteps\22:0,\22flopsPerStep\22:0,\22plannedBytes\22:0,\22kernelCount\22:0,\22extraMetrics\22:[],\22params\22:[{\22name\22:\22w\22,\22shape\22:[2],\22dtype\22:\22F32\22,\22stackedDims\22:0,\22init\22:{\22kind\22:\22zeros\22,\22value\22:0,\22mean\22:0,\22std\22:1,\22a\22:0,\22b\22:1,\22gain\22:1}}],\22state\22:[],\22inputs\22:[{\22name\22:\22data\22,\22source\22:\22classification\22,\22shape\22:[2,2],\22dtype\22:\22F32\22,\22classes\22:2}],\22train\22:{\22symbol\22:\22stepc_train_step\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0}],\22results\22:[]},\22eval\22:{\22symbol\22:\22stepc_eval_loss\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0}],\22results\22:[]}}"} {
  llvm.func @train_step(%w: !llvm.ptr) {
    llvm.return
  }
}

// -----

// Tests that every argument must be a pointer (a memref descriptor would be a struct or, here,
// an expanded i64).
module attributes {step.program = "{\22name\22:\22toy\22,\22fingerprint\22:\22toy-0\22,\22target\22:\22\22,\22defaultSteps\22:0,\22flopsPerStep\22:0,\22plannedBytes\22:0,\22kernelCount\22:0,\22extraMetrics\22:[],\22params\22:[{\22name\22:\22w\22,\22shape\22:[2],\22dtype\22:\22F32\22,\22stackedDims\22:0,\22init\22:{\22kind\22:\22zeros\22,\22value\22:0,\22mean\22:0,\22std\22:1,\22a\22:0,\22b\22:1,\22gain\22:1}}],\22state\22:[],\22inputs\22:[{\22name\22:\22data\22,\22source\22:\22classification\22,\22shape\22:[2,2],\22dtype\22:\22F32\22,\22classes\22:2}],\22train\22:{\22symbol\22:\22stepc_train_step\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0}],\22results\22:[]},\22eval\22:{\22symbol\22:\22stepc_eval_loss\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0}],\22results\22:[]}}"} {
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
module attributes {step.program = "{\22name\22:\22toy\22,\22fingerprint\22:\22toy-0\22,\22target\22:\22\22,\22defaultSteps\22:0,\22flopsPerStep\22:0,\22plannedBytes\22:0,\22kernelCount\22:0,\22extraMetrics\22:[],\22params\22:[{\22name\22:\22w\22,\22shape\22:[2],\22dtype\22:\22F32\22,\22stackedDims\22:0,\22init\22:{\22kind\22:\22zeros\22,\22value\22:0,\22mean\22:0,\22std\22:1,\22a\22:0,\22b\22:1,\22gain\22:1}}],\22state\22:[],\22inputs\22:[{\22name\22:\22data\22,\22source\22:\22classification\22,\22shape\22:[2,2],\22dtype\22:\22F32\22,\22classes\22:2}],\22train\22:{\22symbol\22:\22stepc_train_step\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0}],\22results\22:[]},\22eval\22:{\22symbol\22:\22stepc_eval_loss\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0}],\22results\22:[]}}"} {
  llvm.func @train_step(%w: !llvm.ptr) {
    llvm.return
  }
  // expected-error @+1 {{a step function must return through out-parameters}}
  llvm.func @eval_loss(%w: !llvm.ptr) -> f32 {
    %z = llvm.mlir.constant(0.0 : f32) : f32
    llvm.return %z : f32
  }
}

// -----

// Tests that the signature must match the description: one pointer per described argument and
// result (here the description binds a batch and a loss that the function does not take).
module attributes {step.program = "{\22name\22:\22toy\22,\22fingerprint\22:\22toy-0\22,\22target\22:\22\22,\22defaultSteps\22:0,\22flopsPerStep\22:0,\22plannedBytes\22:0,\22kernelCount\22:0,\22extraMetrics\22:[],\22params\22:[{\22name\22:\22w\22,\22shape\22:[2],\22dtype\22:\22F32\22,\22stackedDims\22:0,\22init\22:{\22kind\22:\22zeros\22,\22value\22:0,\22mean\22:0,\22std\22:1,\22a\22:0,\22b\22:1,\22gain\22:1}}],\22state\22:[],\22inputs\22:[{\22name\22:\22data\22,\22source\22:\22classification\22,\22shape\22:[2,2],\22dtype\22:\22F32\22,\22classes\22:2}],\22train\22:{\22symbol\22:\22stepc_train_step\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0},{\22kind\22:\22batch\22,\22index\22:0}],\22results\22:[{\22kind\22:\22metric\22,\22metric\22:\22loss\22}]},\22eval\22:{\22symbol\22:\22stepc_eval_loss\22,\22args\22:[{\22kind\22:\22param\22,\22index\22:0}],\22results\22:[]}}"} {
  // expected-error @+1 {{@train_step takes 1 buffers but its description binds 3 (2 arguments, 1 results)}}
  llvm.func @train_step(%w: !llvm.ptr) {
    llvm.return
  }
  llvm.func @eval_loss(%w: !llvm.ptr) {
    llvm.return
  }
}

// -----

// Tests that a description the runtime could not read is refused here.
// expected-error @+1 {{bad `step.program` description: program description: 'fingerprint' is missing or has the wrong type}}
module attributes {step.program = "{\22name\22:\22toy\22}"} {
  llvm.func @train_step(%w: !llvm.ptr) {
    llvm.return
  }
  llvm.func @eval_loss(%w: !llvm.ptr) {
    llvm.return
  }
}
