// Tests --step-outline-kernels on a scan loop with a branch: route_tokens' CPU loop
// (RoutingPatterns.cpp), bufferized, fills its loads and choices at its first step in an
// scf.if with no results. The nest is still one kernel, @kernel_0_scan, with the branch and
// its fills inside; the host function only calls it. A branch with results (a value the loop
// would need from the host's side) is not a scan kernel's: that loop's linalg op is outlined
// on its own instead.
//
// RUN: %stepc-opt %s -split-input-file --step-outline-kernels | FileCheck %s

// CHECK: func.func private @kernel_0_scan
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.if
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.fill
// CHECK: memref.load
// CHECK: memref.store
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: scf.for
// CHECK: call @kernel_0_scan(
// CHECK-NOT: call @kernel_
// CHECK: return
module {
  func.func @train_step(%chosen: memref<8x2xi32>, %load: memref<3xi32>, %choices: memref<3x4xi32>, %slots: memref<8x2xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %c0_i32 = arith.constant 0 : i32
    %c-1_i32 = arith.constant -1 : i32
    scf.for %j = %c0 to %c2 step %c1 {
      scf.for %t = %c0 to %c8 step %c1 {
        %at_t = arith.cmpi eq, %t, %c0 : index
        %at_j = arith.cmpi eq, %j, %c0 : index
        %first = arith.andi %at_t, %at_j : i1
        scf.if %first {
          linalg.fill ins(%c0_i32 : i32) outs(%load : memref<3xi32>)
          linalg.fill ins(%c-1_i32 : i32) outs(%choices : memref<3x4xi32>)
        }
        %e = memref.load %chosen[%t, %j] : memref<8x2xi32>
        memref.store %e, %slots[%t, %j] : memref<8x2xi32>
      } {step.scan}
    } {step.scan}
    return
  }
}

// -----

// CHECK-NOT: _scan
// CHECK: func.func private @kernel_0_fill
// CHECK-NOT: _scan
// CHECK-LABEL: func.func @train_step
// CHECK: scf.for
// CHECK: scf.if
// CHECK: call @kernel_0_fill(
module {
  func.func @train_step(%load: memref<3xi32>, %out: memref<8xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c0_i32 = arith.constant 0 : i32
    scf.for %t = %c0 to %c8 step %c1 {
      %first = arith.cmpi eq, %t, %c0 : index
      %v = scf.if %first -> (i32) {
        linalg.fill ins(%c0_i32 : i32) outs(%load : memref<3xi32>)
        scf.yield %c0_i32 : i32
      } else {
        scf.yield %c0_i32 : i32
      }
      memref.store %v, %out[%t] : memref<8xi32>
    } {step.scan}
    return
  }
}
