// Tests --step-offload-buffers: the buffers the module's step.offload names are streamed
// through arena slots a layer at a time.
//  - A loop that views layer 3 - i of `w` gets two page-aligned slots, the first layer fetched
//    before the loop, the next layer's fetch at the top of each iteration and the wait for
//    this one just before the first op that touches it (after the iteration's other work);
//    it only reads the layer, so nothing is written back.
//  - The two update kernels that take `w` and `m` whole become one loop over the layers on
//    [1, ...] views (clones of the kernels with those types), with both buffers fetched and
//    written back; the gradient `g` (on the device) is viewed layer by layer in place. `m`,
//    which the loop touches first, is fetched first (transfers run in the order issued), and
//    `w` is waited for only at the second kernel.
//  - `u`, copied whole, stays on the device, and the description says why.
//  - With mode = "sync" one slot: fetch and wait at the top, write-back and flush at the end.
//
// RUN: split-file %s %t
// RUN: %stepc-opt --step-offload-buffers %t/planned.mlir | FileCheck %s
// RUN: %stepc-opt --step-offload-buffers %t/sync.mlir | FileCheck %s --check-prefix=SYNC
// The output parses back in.
// RUN: %stepc-opt --step-offload-buffers %t/planned.mlir | %stepc-opt | FileCheck %s --check-prefix=PARSE

// CHECK: step.offloaded = {buffers = 2 : i64, fetch_bytes = 6144 : i64, host_bytes = 4096 : i64, store_bytes = 4096 : i64}
// CHECK: func.func private @kernel_momentum_layer{{[0-9]+}}(%{{.*}}: memref<1x8x16xf32, strided<[128, 16, 1], offset: ?>>
// CHECK-LABEL: func.func @train_step
// The forward loop: slots, the first layer (3 - 0), then per iteration wait, prefetch next.
// CHECK: %[[SLOTS:.*]] = memref.alloc() {alignment = 4096 : i64} : memref<2x8x16xf32>
// CHECK: call @stepc_offload_fetch(%{{.*}}, %{{.*}}, %{{.*}}) {step.buffer = "param:w", step.layer = "the loop's first layer"}
// CHECK: scf.for
// CHECK: scf.if
// CHECK: call @stepc_offload_fetch({{.*}}) {step.buffer = "param:w", step.layer = "the next layer"}
// CHECK: memref.store %{{.+}}, %arg4[]
// CHECK: memref.subview %[[SLOTS]][%{{.*}}, 0, 0] [1, 8, 16] [1, 1, 1] : memref<2x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
// CHECK-NEXT: call @stepc_offload_wait({{.*}}) {step.buffer = "param:w", step.layer = "this layer"}
// CHECK-NEXT: memref.load
// CHECK-NOT: stepc_offload_store
// CHECK: memref.dealloc %[[SLOTS]]
// The update: one layer loop, both kernels on layer views (the gradient's in place), both
// buffers written back; the gradient freed after the loop.
// CHECK: call @stepc_offload_fetch({{.*}}) {step.buffer = "state:m/w", step.layer = "the loop's first layer"}
// CHECK: call @stepc_offload_fetch({{.*}}) {step.buffer = "param:w", step.layer = "the loop's first layer"}
// CHECK: scf.for
// CHECK: call @stepc_offload_fetch({{.*}}) {step.buffer = "state:m/w", step.layer = "the next layer"}
// CHECK: call @stepc_offload_fetch({{.*}}) {step.buffer = "param:w", step.layer = "the next layer"}
// CHECK: call @stepc_offload_wait({{.*}}) {step.buffer = "state:m/w", step.layer = "this layer"}
// CHECK-NEXT: call @kernel_momentum_layer{{[0-9]+}}({{.*}}) : (memref<1x8x16xf32, strided<[128, 16, 1], offset: ?>>, memref<1x8x16xf32, strided<[128, 16, 1], offset: ?>>, memref<1x8x16xf32, strided<[128, 16, 1], offset: ?>>) -> ()
// CHECK: call @stepc_offload_wait({{.*}}) {step.buffer = "param:w", step.layer = "this layer"}
// CHECK-NEXT: call @kernel_update_layer{{[0-9]+}}(
// CHECK: call @stepc_offload_store({{.*}}) {step.buffer = "state:m/w", step.layer = "this layer"}
// CHECK: call @stepc_offload_store({{.*}}) {step.buffer = "param:w", step.layer = "this layer"}
// CHECK: } {step.layer_loop, step.streamed_pass}
// CHECK: memref.dealloc
// CHECK: memref.dealloc
// CHECK: memref.dealloc
// `u` stays whole.
// CHECK: memref.copy %arg2, %arg3

// SYNC: memref.alloc() {alignment = 4096 : i64} : memref<1x8x16xf32>
// SYNC-NOT: scf.if
// SYNC: scf.for
// SYNC: call @stepc_offload_fetch
// SYNC-NEXT: call @stepc_offload_wait
// SYNC: call @write
// SYNC: call @stepc_offload_store
// SYNC-NEXT: call @stepc_offload_flush

// PARSE: step.offloaded
// PARSE: } {step.layer_loop, step.streamed_pass}

//--- planned.mlir
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module attributes {step.offload = {buffers = ["param:w", "state:m/w", "param:u"], mode = "planned"}} {
  func.func private @kernel_momentum(%m: memref<4x8x16xf32>, %g: memref<4x8x16xf32>, %out: memref<4x8x16xf32>) attributes {step.kernel} {
    %beta = arith.constant 0.9 : f32
    linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%m, %g : memref<4x8x16xf32>, memref<4x8x16xf32>) outs(%out : memref<4x8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %s = arith.mulf %a, %beta : f32
      %t = arith.addf %s, %b : f32
      linalg.yield %t : f32
    }
    return
  }
  func.func private @kernel_update(%w: memref<4x8x16xf32>, %m: memref<4x8x16xf32>, %out: memref<4x8x16xf32>) attributes {step.kernel} {
    %lr = arith.constant 0.01 : f32
    linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%w, %m : memref<4x8x16xf32>, memref<4x8x16xf32>) outs(%out : memref<4x8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %s = arith.mulf %b, %lr : f32
      %t = arith.subf %a, %s : f32
      linalg.yield %t : f32
    }
    return
  }
  func.func @train_step(%w: memref<4x8x16xf32> {step.name = "w", step.role = "param"},
                        %m: memref<4x8x16xf32> {step.name = "w", step.role = "state", step.slot = "m"},
                        %u: memref<4x4xf32> {step.name = "u", step.role = "param"},
                        %out: memref<4x4xf32>, %loss: memref<f32>) attributes {llvm.bareptr} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %g = memref.alloc() : memref<4x8x16xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %at = arith.subi %c3, %i : index
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %loss[] : memref<f32>
      %v = memref.subview %w[%at, 0, 0] [1, 8, 16] [1, 1, 1] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
      %e = memref.load %v[%c0, %c0] : memref<8x16xf32, strided<[16, 1], offset: ?>>
      memref.store %e, %loss[] : memref<f32>
    }
    call @kernel_momentum(%m, %g, %m) : (memref<4x8x16xf32>, memref<4x8x16xf32>, memref<4x8x16xf32>) -> ()
    call @kernel_update(%w, %m, %w) : (memref<4x8x16xf32>, memref<4x8x16xf32>, memref<4x8x16xf32>) -> ()
    memref.dealloc %g : memref<4x8x16xf32>
    memref.copy %u, %out : memref<4x4xf32> to memref<4x4xf32>
    return
  }
}

//--- sync.mlir
module attributes {step.offload = {buffers = ["param:w"], mode = "sync"}} {
  func.func private @write(memref<8x16xf32, strided<[16, 1], offset: ?>>)
  func.func @train_step(%w: memref<4x8x16xf32> {step.name = "w", step.role = "param"}) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.subview %w[%i, 0, 0] [1, 8, 16] [1, 1, 1] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
      func.call @write(%v) : (memref<8x16xf32, strided<[16, 1], offset: ?>>) -> ()
    }
    return
  }
}
