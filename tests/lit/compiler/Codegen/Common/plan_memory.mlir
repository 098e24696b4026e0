// Tests --step-plan-memory: every statically shaped alloc with one dealloc in its block becomes
// a memref.view of the private global @stepc_arena at a fixed, 64-byte-aligned offset; its
// dealloc disappears. Buffers whose lifetimes (alloc..dealloc, ops numbered in pre-order) do
// not overlap share bytes; the arena is the largest plan over all functions; anything else
// stays malloc/free and is counted as unplanned in the module's `step.memory`.
//
// RUN: %stepc-opt %s -split-input-file --step-plan-memory | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-plan-memory | %stepc-opt -split-input-file -o /dev/null

// The plan of this module, worked by hand (bytes rounded up to 64; offsets largest first):
//   @lifetimes: a 16xf32 = 64 B, b 32xf32 = 128 B, c 10xf32 = 40 -> 64 B, d 8x8xf32 = 256 B,
//     e 3xf32 = 12 -> 64 B. a and b die before c/d/e are born, and before each other.
//     d (256) -> 0; b (128) overlaps nothing placed -> 0; a (64) -> 0; c overlaps d -> 256;
//     e overlaps d and c -> 320. Plan = 384 (without the 64-byte rounding e would be at 296
//     and the plan 308).
//   @loop: outer 16xf32 (64 B) lives across the whole scf.for; inner 16xf32 (64 B) is
//     allocated and freed in the body, inside outer's range: outer -> 0, inner -> 64. Plan 128.
//   @unplanned: nothing planned (one alloc is returned, without a dealloc; one is dynamic).
// Arena = max(384, 128, 0) = 384; planned = 5 + 2 = 7; unplanned = 2. Without a step.program
// description the peak is just the arena.
// CHECK: module attributes {step.memory = {arena_bytes = 384 : i64, batch_bytes = 0 : i64, params_bytes = 0 : i64, peak_bytes = 384 : i64, planned = 7 : i64, state_bytes = 0 : i64, unplanned = 2 : i64}}
// CHECK-NEXT: memref.global "private" @stepc_arena : memref<384xi8> {alignment = 64 : i64}

// Disjoint lifetimes share offset 0 (a, b, and d later); overlapping c, d, e get 256, 0, 320.
// The function's own %c0 stays; each view gets its own offset constant just before it.
// CHECK-LABEL: func.func @lifetimes
// CHECK-NEXT: %[[ARENA:.+]] = memref.get_global @stepc_arena : memref<384xi8>
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[OA:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[A:.+]] = memref.view %[[ARENA]][%[[OA]]][] : memref<384xi8> to memref<16xf32>
// CHECK-NEXT: memref.store %{{.+}}, %[[A]][%[[C0]]] : memref<16xf32>
// CHECK-NEXT: %[[OB:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[B:.+]] = memref.view %[[ARENA]][%[[OB]]][] : memref<384xi8> to memref<32xf32>
// CHECK-NEXT: memref.store %{{.+}}, %[[B]][%[[C0]]] : memref<32xf32>
// CHECK-NEXT: %[[OC:.+]] = arith.constant 256 : index
// CHECK-NEXT: %[[C:.+]] = memref.view %[[ARENA]][%[[OC]]][] : memref<384xi8> to memref<10xf32>
// CHECK-NEXT: %[[OD:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[D:.+]] = memref.view %[[ARENA]][%[[OD]]][] : memref<384xi8> to memref<8x8xf32>
// CHECK-NEXT: %[[OE:.+]] = arith.constant 320 : index
// CHECK-NEXT: %[[E:.+]] = memref.view %[[ARENA]][%[[OE]]][] : memref<384xi8> to memref<3xf32>
// CHECK-NEXT: memref.store %{{.+}}, %[[C]][%[[C0]]]
// CHECK-NEXT: memref.store %{{.+}}, %[[D]][%[[C0]], %[[C0]]]
// CHECK-NEXT: memref.store %{{.+}}, %[[E]][%[[C0]]]
// The planned buffers' deallocs are gone.
// CHECK-NEXT: return
func.func @lifetimes(%v: f32) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<16xf32>
  memref.store %v, %a[%c0] : memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  %b = memref.alloc() : memref<32xf32>
  memref.store %v, %b[%c0] : memref<32xf32>
  memref.dealloc %b : memref<32xf32>
  %c = memref.alloc() : memref<10xf32>
  %d = memref.alloc() : memref<8x8xf32>
  %e = memref.alloc() : memref<3xf32>
  memref.store %v, %c[%c0] : memref<10xf32>
  memref.store %v, %d[%c0, %c0] : memref<8x8xf32>
  memref.store %v, %e[%c0] : memref<3xf32>
  memref.dealloc %c : memref<10xf32>
  memref.dealloc %d : memref<8x8xf32>
  memref.dealloc %e : memref<3xf32>
  return
}

// A buffer allocated before a loop and freed after it conflicts with one allocated and freed
// inside the loop body (same size, so only liveness separates them): offsets 0 and 64.
// CHECK-LABEL: func.func @loop
// CHECK-NEXT: %[[ARENA:.+]] = memref.get_global @stepc_arena : memref<384xi8>
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: arith.constant 4 : index
// CHECK-NEXT: %[[OO:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[OUTER:.+]] = memref.view %[[ARENA]][%[[OO]]][] : memref<384xi8> to memref<16xf32>
// CHECK-NEXT: scf.for
// CHECK-NEXT: %[[OI:.+]] = arith.constant 64 : index
// CHECK-NEXT: %[[INNER:.+]] = memref.view %[[ARENA]][%[[OI]]][] : memref<384xi8> to memref<16xf32>
// CHECK-NEXT: memref.store %{{.+}}, %[[INNER]]
// CHECK-NEXT: memref.load %[[INNER]]
// CHECK-NEXT: memref.store %{{.+}}, %[[OUTER]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @loop(%v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %outer = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %inner = memref.alloc() : memref<16xf32>
    memref.store %v, %inner[%i] : memref<16xf32>
    %x = memref.load %inner[%c0] : memref<16xf32>
    memref.store %x, %outer[%i] : memref<16xf32>
    memref.dealloc %inner : memref<16xf32>
  }
  memref.dealloc %outer : memref<16xf32>
  return
}

// An alloc without a dealloc (it is returned) and a dynamically sized one keep malloc/free
// (both counted in `unplanned` above); the function, with nothing planned, does not even
// load the arena.
// CHECK-LABEL: func.func @unplanned
// CHECK-NOT: memref.get_global
// CHECK-NOT: memref.view
// CHECK: %[[KEPT:.+]] = memref.alloc() : memref<4xf32>
// CHECK: %[[DYN:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK: memref.dealloc %[[DYN]] : memref<?xf32>
// CHECK-NOT: memref.view
// CHECK: return %[[KEPT]]
func.func @unplanned(%v: f32, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %kept = memref.alloc() : memref<4xf32>
  memref.store %v, %kept[%c0] : memref<4xf32>
  %dyn = memref.alloc(%n) : memref<?xf32>
  memref.store %v, %dyn[%c0] : memref<?xf32>
  memref.dealloc %dyn : memref<?xf32>
  return %kept : memref<4xf32>
}

// -----

// Two step functions run one at a time and share the arena: its size is the larger plan
// (@big: 256xf32 = 1024 B), not the sum (1088), and both buffers sit at offset 0 of it.
// CHECK: module attributes {step.memory = {arena_bytes = 1024 : i64, batch_bytes = 0 : i64, params_bytes = 0 : i64, peak_bytes = 1024 : i64, planned = 2 : i64, state_bytes = 0 : i64, unplanned = 0 : i64}}
// CHECK-NEXT: memref.global "private" @stepc_arena : memref<1024xi8> {alignment = 64 : i64}
// CHECK-LABEL: func.func @small
// CHECK-NEXT: %[[ARENA:.+]] = memref.get_global @stepc_arena : memref<1024xi8>
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: %[[O:.+]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %[[ARENA]][%[[O]]][] : memref<1024xi8> to memref<16xf32>
// CHECK-NOT: memref.dealloc
// CHECK-LABEL: func.func @big
// CHECK-NEXT: %[[ARENA:.+]] = memref.get_global @stepc_arena : memref<1024xi8>
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: %[[O:.+]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %[[ARENA]][%[[O]]][] : memref<1024xi8> to memref<256xf32>
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @small(%v: f32) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<16xf32>
  memref.store %v, %a[%c0] : memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  return
}

func.func @big(%v: f32) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<256xf32>
  memref.store %v, %a[%c0] : memref<256xf32>
  memref.dealloc %a : memref<256xf32>
  return
}
