// Tests --step-await-gathers: in a function that starts deferred gathers of parameters
// (stepc_all_gather_start_f32), every command that touches one of them through any view first
// calls stepc_all_gather_wait_f32 with the view it passes (a layer's slice inside a loop, so
// the runtime waits for that layer's rows only); views get no wait, nor do other arguments,
// nor the start itself; each wait is profiled (one entry for all). A function without
// starts is left alone.
//
// RUN: %stepc-opt %s -split-input-file --step-await-gathers | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-await-gathers | %stepc-opt -split-input-file -o /dev/null

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[W:[^:]+]]: memref<4x8xf32> {step.role = "param"}, %[[X:[^:]+]]: memref<8xf32>, %[[P:[^:]+]]: memref<4x8xf32>)
// CHECK: scf.for %[[I:.+]] = 
// CHECK-NEXT: %[[SV:.+]] = memref.subview %[[W]][%[[I]], 0] [1, 8] [1, 1]
// CHECK-NEXT: %[[FLAT:.+]] = memref.collapse_shape %[[SV]]
// CHECK-NEXT: %[[U:.+]] = memref.cast %[[FLAT]] : memref<8xf32, strided<[1], offset: ?>> to memref<*xf32>
// CHECK-NEXT: %[[PID:.+]] = arith.constant 0 : i64
// CHECK-NEXT: call @stepc_profile_enter(%[[PID]])
// CHECK-NEXT: call @stepc_all_gather_wait_f32(%[[U]])
// CHECK-NEXT: call @stepc_profile_exit(%[[PID]])
// CHECK-NEXT: call @kernel(%[[FLAT]], %[[X]])
// CHECK: %[[UW:.+]] = memref.cast %[[W]] : memref<4x8xf32> to memref<*xf32>
// CHECK-NEXT: arith.constant 0 : i64
// CHECK-NEXT: call @stepc_profile_enter
// CHECK-NEXT: call @stepc_all_gather_wait_f32(%[[UW]])
// CHECK-NEXT: call @stepc_profile_exit
// CHECK-NEXT: memref.copy %[[P]], %[[W]]
// CHECK: call @stepc_all_gather_start_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// CHECK-NOT: stepc_all_gather_wait_f32(
// CHECK: return
// CHECK: func.func private @stepc_all_gather_wait_f32(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @kernel(memref<8xf32, strided<[1], offset: ?>>, memref<8xf32>)
func.func private @stepc_all_gather_start_f32(memref<*xf32>, memref<*xf32>, i64, i64, i64) attributes {llvm.emit_c_interface}
func.func @train_step(%w: memref<4x8xf32> {step.role = "param"}, %x: memref<8xf32>, %placed: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1 : i64
  %id = arith.constant 7 : i64
  scf.for %i = %c0 to %c4 step %c1 {
    %row = memref.subview %w[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    %flat = memref.collapse_shape %row [[0, 1]] : memref<1x8xf32, strided<[8, 1], offset: ?>> into memref<8xf32, strided<[1], offset: ?>>
    func.call @kernel(%flat, %x) : (memref<8xf32, strided<[1], offset: ?>>, memref<8xf32>) -> ()
  }
  memref.copy %placed, %w : memref<4x8xf32> to memref<4x8xf32>
  %in = memref.cast %placed : memref<4x8xf32> to memref<*xf32>
  %out = memref.cast %w : memref<4x8xf32> to memref<*xf32>
  func.call @stepc_all_gather_start_f32(%in, %out, %one, %one, %id) : (memref<*xf32>, memref<*xf32>, i64, i64, i64) -> ()
  return
}

// -----

// No deferred gather: nothing to wait for.
// CHECK-LABEL: func.func @eval_loss
// CHECK-NOT: stepc_all_gather_wait_f32
func.func private @kernel2(memref<4x8xf32>)
func.func @eval_loss(%w: memref<4x8xf32> {step.role = "param"}) {
  func.call @kernel2(%w) : (memref<4x8xf32>) -> ()
  return
}
