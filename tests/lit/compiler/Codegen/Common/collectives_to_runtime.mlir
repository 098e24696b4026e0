// Tests --step-collectives-to-runtime: a bufferized linalg.copy marked step.collective =
// "all_reduce_sum" (StepToLinalg's lowering of step.all_reduce) becomes one call of the
// runtime's tree all-reduce, numbered in program order; unmarked copies stay copies; the
// reduction is in place when its input dies there and its output is fresh; and a copy marked
// "all_gather" (a whole buffer holding this rank's block into the whole result) becomes the
// runtime's all-gather, numbered in the same sequence.
//
// RUN: %stepc-opt %s -split-input-file --step-collectives-to-runtime | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-collectives-to-runtime | %stepc-opt -split-input-file -o /dev/null

// CHECK-LABEL: func.func @grads
// CHECK-SAME: (%[[A:.+]]: memref<4x8xf32>, %[[B:.+]]: memref<4x8xf32>, %[[L:.+]]: memref<f32>, %[[M:.+]]: memref<f32>, %[[C:.+]]: memref<4x8xf32>)
// CHECK: %[[VA:.+]] = memref.cast %[[A]] : memref<4x8xf32> to memref<*xf32>
// CHECK: %[[VB:.+]] = memref.cast %[[B]] : memref<4x8xf32> to memref<*xf32>
// CHECK: %[[ID0:.+]] = arith.constant 0 : i64
// CHECK: call @stepc_all_reduce_sum_f32(%[[VA]], %[[VB]], %[[ID0]])
// CHECK: %[[VL:.+]] = memref.cast %[[L]] : memref<f32> to memref<*xf32>
// CHECK: %[[ID1:.+]] = arith.constant 1 : i64
// CHECK: call @stepc_all_reduce_sum_f32(%[[VL]], %{{.+}}, %[[ID1]])
// CHECK: linalg.copy ins(%[[A]] : memref<4x8xf32>) outs(%[[C]] : memref<4x8xf32>)
// CHECK-NOT: step.collective
// CHECK: func.func private @stepc_all_reduce_sum_f32(memref<*xf32>, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
func.func @grads(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %l: memref<f32>, %m: memref<f32>, %c: memref<4x8xf32>) {
  linalg.copy {step.collective = "all_reduce_sum"} ins(%a : memref<4x8xf32>) outs(%b : memref<4x8xf32>)
  linalg.copy {step.collective = "all_reduce_sum"} ins(%l : memref<f32>) outs(%m : memref<f32>)
  linalg.copy ins(%a : memref<4x8xf32>) outs(%c : memref<4x8xf32>)
  return
}


// -----

// Tests that a block sum read by nothing after its reduction is reduced in place: the output
// buffer goes, its uses (and its dealloc) take the input, and the input's own dealloc goes.
// A block sum read after the reduction, and an output written before it, keep two buffers.
// CHECK-LABEL: func.func @in_place
// CHECK: %[[SUM:.+]] = memref.alloc() : memref<16xf32>
// CHECK-NOT: memref.alloc() : memref<16xf32>
// CHECK: %[[V:.+]] = memref.cast %[[SUM]] : memref<16xf32> to memref<*xf32>
// CHECK: %[[W:.+]] = memref.cast %[[SUM]] : memref<16xf32> to memref<*xf32>
// CHECK: call @stepc_all_reduce_sum_f32(%[[V]], %[[W]], %{{.+}})
// CHECK: linalg.copy ins(%[[SUM]] : memref<16xf32>) outs(%arg1 : memref<16xf32>)
// CHECK: memref.dealloc %[[SUM]] : memref<16xf32>
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @in_place(%g: memref<16xf32>, %r: memref<16xf32>) {
  %sum = memref.alloc() : memref<16xf32>
  linalg.copy ins(%g : memref<16xf32>) outs(%sum : memref<16xf32>)
  %out = memref.alloc() : memref<16xf32>
  linalg.copy {step.collective = "all_reduce_sum"} ins(%sum : memref<16xf32>) outs(%out : memref<16xf32>)
  memref.dealloc %sum : memref<16xf32>
  linalg.copy ins(%out : memref<16xf32>) outs(%r : memref<16xf32>)
  memref.dealloc %out : memref<16xf32>
  return
}

// CHECK-LABEL: func.func @read_after
// CHECK: %[[SUM:.+]] = memref.alloc() : memref<16xf32>
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<16xf32>
// CHECK: %[[V:.+]] = memref.cast %[[SUM]]
// CHECK: %[[W:.+]] = memref.cast %[[OUT]]
// CHECK: call @stepc_all_reduce_sum_f32(%[[V]], %[[W]], %{{.+}})
// CHECK: linalg.copy ins(%[[SUM]] : memref<16xf32>) outs(%arg1 : memref<16xf32>)
// CHECK: linalg.copy ins(%[[OUT]] : memref<16xf32>) outs(%arg1 : memref<16xf32>)
func.func @read_after(%g: memref<16xf32>, %r: memref<16xf32>) {
  %sum = memref.alloc() : memref<16xf32>
  linalg.copy ins(%g : memref<16xf32>) outs(%sum : memref<16xf32>)
  %out = memref.alloc() : memref<16xf32>
  linalg.copy {step.collective = "all_reduce_sum"} ins(%sum : memref<16xf32>) outs(%out : memref<16xf32>)
  linalg.copy ins(%sum : memref<16xf32>) outs(%r : memref<16xf32>)
  linalg.copy ins(%out : memref<16xf32>) outs(%r : memref<16xf32>)
  memref.dealloc %sum : memref<16xf32>
  memref.dealloc %out : memref<16xf32>
  return
}

// CHECK-LABEL: func.func @written_before
// CHECK: %[[SUM:.+]] = memref.alloc() : memref<16xf32>
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<16xf32>
// CHECK: linalg.fill
// CHECK: %[[V:.+]] = memref.cast %[[SUM]]
// CHECK: %[[W:.+]] = memref.cast %[[OUT]]
// CHECK: call @stepc_all_reduce_sum_f32(%[[V]], %[[W]], %{{.+}})
func.func @written_before(%g: memref<16xf32>, %r: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<16xf32>
  linalg.copy ins(%g : memref<16xf32>) outs(%sum : memref<16xf32>)
  %out = memref.alloc() : memref<16xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<16xf32>)
  linalg.copy {step.collective = "all_reduce_sum"} ins(%sum : memref<16xf32>) outs(%out : memref<16xf32>)
  memref.dealloc %sum : memref<16xf32>
  linalg.copy ins(%out : memref<16xf32>) outs(%r : memref<16xf32>)
  memref.dealloc %out : memref<16xf32>
  return
}

// -----

// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[P:.+]]: memref<8x3xf32>, %[[W:.+]]: memref<8x3xf32>, %{{.+}}: memref<f32>, %{{.+}}: memref<f32>)
// CHECK: call @stepc_all_reduce_sum_f32(%{{.+}}, %{{.+}}, %{{.+}})
// CHECK: %[[VP:.+]] = memref.cast %[[P]] : memref<8x3xf32> to memref<*xf32>
// CHECK: %[[VW:.+]] = memref.cast %[[W]] : memref<8x3xf32> to memref<*xf32>
// CHECK: %[[ID:.+]] = arith.constant 1 : i64
// CHECK: call @stepc_all_gather_f32(%[[VP]], %[[VW]], %[[ID]])
// CHECK-NOT: linalg.copy
// CHECK: func.func private @stepc_all_reduce_sum_f32
// CHECK: func.func private @stepc_all_gather_f32(memref<*xf32>, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
func.func @gather(%placed: memref<8x3xf32>, %w: memref<8x3xf32>, %s: memref<f32>, %t: memref<f32>) {
  linalg.copy {step.collective = "all_reduce_sum"} ins(%s : memref<f32>) outs(%t : memref<f32>)
  linalg.copy {step.collective = "all_gather"} ins(%placed : memref<8x3xf32>) outs(%w : memref<8x3xf32>)
  return
}

// -----

// The overlapped reduction: a start in a layer loop (its input and its result one buffer, as
// bufferization leaves a copy that may run in place: still a call, never dropped) and the
// wait on the stacked results after it. The start counts once per layer in the bytes; the
// wait counts nothing (lit checks the description in the executable tests).
// CHECK-LABEL: func.func @overlapped
// CHECK: scf.for
// CHECK: %[[SLICE:.+]] = memref.subview
// CHECK: %[[A:.+]] = memref.cast %[[SLICE]] : memref<3xf32, strided<[1], offset: ?>> to memref<*xf32>
// CHECK: %[[B:.+]] = memref.cast %[[SLICE]] : memref<3xf32, strided<[1], offset: ?>> to memref<*xf32>
// CHECK: %[[ID:.+]] = arith.constant 0 : i64
// CHECK: call @stepc_all_reduce_start_f32(%[[A]], %[[B]], %[[ID]])
// CHECK: }
// CHECK: %[[T:.+]] = memref.cast %[[STACK:.+]] : memref<4x3xf32> to memref<*xf32>
// CHECK: %[[O:.+]] = memref.cast %[[OUT:.+]] : memref<4x3xf32> to memref<*xf32>
// CHECK: call @stepc_all_reduce_wait_f32(%[[T]], %[[O]], %{{.+}})
// CHECK-NOT: linalg.copy
// CHECK: func.func private @stepc_all_reduce_start_f32(memref<*xf32>, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
// CHECK: func.func private @stepc_all_reduce_wait_f32(memref<*xf32>, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
func.func @overlapped(%stack: memref<4x3xf32>, %out: memref<4x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %slice = memref.subview %stack[%i, 0] [1, 3] [1, 1] : memref<4x3xf32> to memref<3xf32, strided<[1], offset: ?>>
    linalg.copy {step.collective = "all_reduce_start"} ins(%slice : memref<3xf32, strided<[1], offset: ?>>) outs(%slice : memref<3xf32, strided<[1], offset: ?>>)
  }
  linalg.copy {step.collective = "all_reduce_wait"} ins(%stack : memref<4x3xf32>) outs(%out : memref<4x3xf32>)
  return
}

// -----

// --shard-optimizer's reduce-scatter: the owner call the lowering put before the start's
// marked copy (the owner of its first float, and the floats per owner) is folded into the
// start's call, and its declaration goes; the wait is the all-reduce's.
// CHECK-LABEL: func.func @scattered
// CHECK-SAME: (%[[G:.+]]: memref<4x3xf32>, %[[S:.+]]: memref<4x3xf32>, %[[OUT:.+]]: memref<4x3xf32>, %[[FIRST:.+]]: i64)
// CHECK: %[[PER:.+]] = arith.constant 6 : i64
// CHECK-NOT: stepc_reduce_scatter_owner
// CHECK: %[[A:.+]] = memref.cast %[[G]] : memref<4x3xf32> to memref<*xf32>
// CHECK: %[[B:.+]] = memref.cast %[[S]] : memref<4x3xf32> to memref<*xf32>
// CHECK: %[[ID:.+]] = arith.constant 0 : i64
// CHECK: call @stepc_reduce_scatter_start_f32(%[[A]], %[[B]], %[[FIRST]], %[[PER]], %[[ID]])
// CHECK: call @stepc_all_reduce_wait_f32(
// CHECK-NOT: stepc_reduce_scatter_owner
// CHECK: func.func private @stepc_reduce_scatter_start_f32(memref<*xf32>, memref<*xf32>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-NOT: stepc_reduce_scatter_owner
func.func private @stepc_reduce_scatter_owner(i64, i64) -> i64
func.func @scattered(%g: memref<4x3xf32>, %s: memref<4x3xf32>, %out: memref<4x3xf32>, %first: i64) {
  %per = arith.constant 6 : i64
  %0 = call @stepc_reduce_scatter_owner(%first, %per) : (i64, i64) -> i64
  linalg.copy {step.collective = "reduce_scatter_start"} ins(%g : memref<4x3xf32>) outs(%s : memref<4x3xf32>)
  linalg.copy {step.collective = "all_reduce_wait"} ins(%s : memref<4x3xf32>) outs(%out : memref<4x3xf32>)
  return
}
