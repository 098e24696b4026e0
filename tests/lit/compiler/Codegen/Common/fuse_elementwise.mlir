// Tests --step-fuse-elementwise: upstream elementwise fusion restricted to single-use producers
// that are not fused into contractions nor read through a broadcast. The positive case (a)
// shows that fusion does happen; the negative cases (b)-(d) each check that both generics
// survive and that the consumer still reads the producer's result, so a pass that fused them
// fails the test (upstream's default rule, mlir-opt --linalg-fuse-elementwise-ops, fuses (b)
// and (c); (d) guards the single-use rule against being loosened). Two exceptions: (j) a
// producer whose other uses hand its result out of the step (AdamW's new m and v), after its
// elementwise consumer, fuses into it as one kernel that keeps its result ((k): not when the
// other use is more work, or comes first); and (e): a
// producer of a few arith ops whose inputs stay live anyway is cloned into each of its
// consumers; (f) is the chain that must not be (its exp would be left materialised); (g) a
// gather (an MoE's combine) is cloned likewise, into a dot-per-row reduction among others;
// (h) a read of a unit dim at index 0 is no broadcast, nor (i) one of a fixed slice; (l) a
// producer that only selects among its inputs (top_k's picks) fuses through broadcasts and views.
//
// RUN: %stepc-opt %s -split-input-file --step-fuse-elementwise | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-fuse-elementwise | %stepc-opt -split-input-file -o /dev/null

#id = affine_map<(d0, d1) -> (d0, d1)>

// (a) Two chained elementwise generics (add, then square) become one generic whose body does
// both, reading the original inputs: the 4x8 intermediate is gone.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<4x8xf32>)
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: %[[S:.+]] = arith.addf
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[S]], %[[S]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// (b) An elementwise producer (negf) of a matmul's lhs is not fused into the contraction (a
// generic with a mul+add body and a reduction loop): fused, the op would no longer be a GEMM
// the library can run. The contraction keeps its mul+add body and reads the negf result.
// CHECK-LABEL: func.func @into_contraction
// CHECK: %[[NEG:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: arith.negf
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[NEG]], %{{.+}} : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK-NOT: arith.negf
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: return
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @into_contraction(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%0, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// (c) A producer read through a broadcasting map ((d0, d1) -> (d1): a bias row added to every
// row) is not fused: fused, the exp would be recomputed for each of the 4 rows. The consumer
// still reads the 8-element exp result with the broadcast map.
// CHECK-DAG: #[[BCAST:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @through_broadcast
// CHECK: %[[EXP:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[BCAST]], #{{.+}}]
// CHECK-SAME: ins(%{{.+}}, %[[EXP]] : tensor<4x8xf32>, tensor<8xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.addf
// CHECK: return
#v = affine_map<(d0) -> (d0)>
#row = affine_map<(d0, d1) -> (d1)>
#id3 = affine_map<(d0, d1) -> (d0, d1)>
func.func @through_broadcast(%x: tensor<4x8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %e1 = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%bias : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%b: f32, %o: f32):
    %ex = math.exp %b : f32
    linalg.yield %ex : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id3, #row, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%x, %0 : tensor<4x8xf32>, tensor<8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// (d) A producer with two uses (two elementwise consumers) is not fused into either: fusing
// would compute it twice. Three generics remain and both consumers read the exp result.
// CHECK-LABEL: func.func @two_uses
// CHECK: %[[EXP:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[U1:.+]] = linalg.generic
// CHECK-SAME: ins(%[[EXP]] : tensor<4x8xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.negf
// CHECK: %[[U2:.+]] = linalg.generic
// CHECK-SAME: ins(%[[EXP]] : tensor<4x8xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK: return %[[U1]], %[[U2]]
#id4 = affine_map<(d0, d1) -> (d0, d1)>
func.func @two_uses(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %ex = math.exp %x : f32
    linalg.yield %ex : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  %2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// (e) A gradient's square feeds two reductions (a global norm by columns, per-row norms): the
// square (one mulf, reading an argument that lives on anyway) is cloned into both and fused,
// so no 4x8 square exists; each reduction squares its input itself.
// CHECK-LABEL: func.func @cheap_two_uses
// CHECK-SAME: (%[[G:.+]]: tensor<4x8xf32>
// CHECK: %[[COLS:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK-SAME: ins(%[[G]] : tensor<4x8xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK: %[[ROWS:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[G]] : tensor<4x8xf32>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[COLS]], %[[ROWS]]
#e_id = affine_map<(d0, d1) -> (d0, d1)>
#e_col = affine_map<(d0, d1) -> (d1)>
#e_row = affine_map<(d0, d1) -> (d0)>
func.func @cheap_two_uses(%g: tensor<4x8xf32>, %c: tensor<8xf32>, %r: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#e_id, #e_id, #e_id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %g : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %cols = linalg.generic {indexing_maps = [#e_id, #e_col], iterator_types = ["reduction", "parallel"]}
      ins(%sq : tensor<4x8xf32>) outs(%c : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %rows = linalg.generic {indexing_maps = [#e_id, #e_row], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<4x8xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %cols, %rows : tensor<8xf32>, tensor<4xf32>
}

// -----

// (f) The same square of an exp: cloning the square would give the exp (not worth redoing)
// two uses, and it would be materialised instead. The exp fuses into the square, whose result
// both reductions read, as before.
// CHECK-LABEL: func.func @chain_not_cloned
// CHECK: %[[SQ:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SQ]] : tensor<4x8xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SQ]] : tensor<4x8xf32>)
// CHECK: return
#f_id = affine_map<(d0, d1) -> (d0, d1)>
#f_col = affine_map<(d0, d1) -> (d1)>
#f_row = affine_map<(d0, d1) -> (d0)>
func.func @chain_not_cloned(%a: tensor<4x8xf32>, %c: tensor<8xf32>, %r: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %ex = linalg.generic {indexing_maps = [#f_id, #f_id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %v = math.exp %x : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#f_id, #f_id], iterator_types = ["parallel", "parallel"]}
      ins(%ex : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %cols = linalg.generic {indexing_maps = [#f_id, #f_col], iterator_types = ["reduction", "parallel"]}
      ins(%sq : tensor<4x8xf32>) outs(%c : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %rows = linalg.generic {indexing_maps = [#f_id, #f_row], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<4x8xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %cols, %rows : tensor<8xf32>, tensor<4xf32>
}

// -----

// (g) An MoE's combine: rows of %ye gathered by index (tensor.extract) feed the gate-weighted
// output and, in the backward, the gate's gradient (a dot per row: a mul+add reduction whose
// inputs span all its loops, not a GEMM). The gather is cloned into both and fused: no 8x1x4
// gathered tensor exists, each consumer reads %ye by index itself.
// CHECK-LABEL: func.func @gather_two_uses
// CHECK-SAME: (%[[YE:.+]]: tensor<8x4xf32>, %[[IDX:.+]]: tensor<8x1xi32>, %[[G:.+]]: tensor<8x1x1xf32>, %[[DY:.+]]: tensor<8x1x4xf32>
// CHECK: %[[Y:.+]] = linalg.generic
// CHECK-SAME: ins(%[[IDX]], %[[G]] : tensor<8x1xi32>, tensor<8x1x1xf32>)
// CHECK: tensor.extract %[[YE]]
// CHECK: arith.mulf
// CHECK: %[[DG:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[DY]], %[[IDX]] : tensor<8x1x4xf32>, tensor<8x1xi32>)
// CHECK: tensor.extract %[[YE]]
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]], %[[DG]]
#g_3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#g_idx = affine_map<(d0, d1, d2) -> (d0, d1)>
#g_gate = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
func.func @gather_two_uses(%ye: tensor<8x4xf32>, %idx: tensor<8x1xi32>, %g: tensor<8x1x1xf32>, %dy: tensor<8x1x4xf32>, %acc: tensor<8x1xf32>) -> (tensor<8x1x4xf32>, tensor<8x1xf32>) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %zero = arith.constant 0.0 : f32
  %c0_i32 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x1x4xf32>
  %yk = linalg.generic {indexing_maps = [#g_idx, #g_3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%idx : tensor<8x1xi32>) outs(%e : tensor<8x1x4xf32>) {
  ^bb0(%i: i32, %o: f32):
    %r = arith.index_cast %i : i32 to index
    %lo = arith.maxsi %r, %c0 : index
    %row = arith.minsi %lo, %c7 : index
    %col = linalg.index 2 : index
    %v = tensor.extract %ye[%row, %col] : tensor<8x4xf32>
    %kept = arith.cmpi sge, %i, %c0_i32 : i32
    %s = arith.select %kept, %v, %zero : f32
    linalg.yield %s : f32
  } -> tensor<8x1x4xf32>
  %y = linalg.generic {indexing_maps = [#g_3, #g_gate, #g_3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%yk, %g : tensor<8x1x4xf32>, tensor<8x1x1xf32>) outs(%e : tensor<8x1x4xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %m = arith.mulf %x, %w : f32
    linalg.yield %m : f32
  } -> tensor<8x1x4xf32>
  %dg = linalg.generic {indexing_maps = [#g_3, #g_3, #g_idx], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %yk : tensor<8x1x4xf32>, tensor<8x1x4xf32>) outs(%acc : tensor<8x1xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x1xf32>
  return %y, %dg : tensor<8x1x4xf32>, tensor<8x1xf32>
}

// -----

// (h) A producer of shape [8, 1, 4] read at (d0, 0, d1) (the loop of extent 1 dropped by
// --step-unit-reductions) is read whole, once per element, not broadcast: it fuses.
// CHECK-LABEL: func.func @unit_dim_read
// CHECK-SAME: (%[[A:.+]]: tensor<8x1x4xf32>, %[[B:.+]]: tensor<8x4xf32>)
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<8x1x4xf32>, tensor<8x4xf32>)
// CHECK: arith.negf
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
#h_3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#h_unit = affine_map<(d0, d1) -> (d0, 0, d1)>
#h_2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @unit_dim_read(%a: tensor<8x1x4xf32>, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e3 = tensor.empty() : tensor<8x1x4xf32>
  %neg = linalg.generic {indexing_maps = [#h_3, #h_3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<8x1x4xf32>) outs(%e3 : tensor<8x1x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<8x1x4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %sum = linalg.generic {indexing_maps = [#h_unit, #h_2, #h_2], iterator_types = ["parallel", "parallel"]}
      ins(%neg, %b : tensor<8x1x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %sum : tensor<8x4xf32>
}

// -----

// (i) A fixed slice of a larger dim is no broadcast either: the unrolled sum over k = 2 reads
// [8, 2, 4] at (d0, 0, d1) and (d0, 1, d1), each element once. The producer (two uses, and
// cheap: cloned per use) fuses through both: one kernel, reading %a at both slices.
// CHECK-LABEL: func.func @slice_reads
// CHECK-SAME: (%[[A:.+]]: tensor<8x2x4xf32>)
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[A]], %[[A]] : tensor<8x2x4xf32>, tensor<8x2x4xf32>)
// CHECK-COUNT-2: arith.negf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
#i_3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#i_k0 = affine_map<(d0, d1) -> (d0, 0, d1)>
#i_k1 = affine_map<(d0, d1) -> (d0, 1, d1)>
#i_2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @slice_reads(%a: tensor<8x2x4xf32>) -> tensor<8x4xf32> {
  %e3 = tensor.empty() : tensor<8x2x4xf32>
  %neg = linalg.generic {indexing_maps = [#i_3, #i_3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<8x2x4xf32>) outs(%e3 : tensor<8x2x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<8x2x4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %sum = linalg.generic {indexing_maps = [#i_k0, #i_k1, #i_2], iterator_types = ["parallel", "parallel"]}
      ins(%neg, %neg : tensor<8x2x4xf32>, tensor<8x2x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %sum : tensor<8x4xf32>
}

// -----

// (j) AdamW: the m and v updates feed the parameter's update and are results of their own
// (the new state). The three passes become one kernel writing p, m and v: each input read
// once, m and v never read back.
// CHECK-LABEL: func.func @adam
// CHECK-SAME: (%[[P:.+]]: tensor<8xf32>, %[[M:.+]]: tensor<8xf32>, %[[V:.+]]: tensor<8xf32>, %[[G:.+]]: tensor<8xf32>)
// CHECK: %[[U:.+]]:3 = linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return %[[U]]#{{[0-2]}}, %[[U]]#{{[0-2]}}, %[[U]]#{{[0-2]}}
#v = affine_map<(d0) -> (d0)>
func.func @adam(%p: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %g: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %b = arith.constant 0.9 : f32
  %m2 = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%m, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %a = arith.mulf %x, %b : f32
    %c = arith.addf %a, %y : f32
    linalg.yield %c : f32
  } -> tensor<8xf32>
  %v2 = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%v, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %a = arith.mulf %y, %y : f32
    %c = arith.addf %x, %a : f32
    linalg.yield %c : f32
  } -> tensor<8xf32>
  %p2 = linalg.generic {indexing_maps = [#v, #v, #v, #v], iterator_types = ["parallel"]}
      ins(%p, %m2, %v2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %o: f32):
    %s = math.sqrt %z : f32
    %d = arith.divf %y, %s : f32
    %n = arith.subf %x, %d : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  return %p2, %m2, %v2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// (k) Not kept in one kernel: exp's other use is more work (a reduction), and it comes before
// the elementwise consumer (the fused kernel, at the consumer, would come after that read).
// The exp stays a kernel of its own.
// CHECK-LABEL: func.func @use_between
// CHECK: %[[EXP:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[EXP]] : tensor<8xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[EXP]] : tensor<8xf32>)
#w = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func @use_between(%a: tensor<8xf32>, %acc: tensor<f32>) -> (tensor<f32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#w, #w], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %ex = math.exp %x : f32
    linalg.yield %ex : f32
  } -> tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#w, #s], iterator_types = ["reduction"]}
      ins(%0 : tensor<8xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %2 = linalg.generic {indexing_maps = [#w, #w], iterator_types = ["parallel"]}
      ins(%0 : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  return %1, %2 : tensor<f32>, tensor<8xf32>
}

// -----

// (l) top_k's picks on the CPU (RoutingPatterns.cpp): [8, 2] values and indices, each slot j
// selected from k = 2 slot tensors [8] by linalg.index. A pick only selects among its inputs,
// so it fuses even through a broadcast (it redoes no work), and views of it are read through
// their readers' maps: the values through an expand_shape to [8, 2, 1] by the gate scale
// broadcast over D, the first indices through a slice [8, 1] by a count over 3 experts (which
// then reads slot 0 itself: the pick's select folds at the constant index). The indices'
// element read in a scan loop (route_tokens') gets a clone before the loop, which
// --step-fuse-into-gathers computes at the read. No pick is left a kernel of its own.
// CHECK-LABEL: func.func @top_k_picks
// CHECK-SAME: (%[[V0:.+]]: tensor<8xf32>, %[[V1:.+]]: tensor<8xf32>, %[[I0:.+]]: tensor<8xi32>, %[[I1:.+]]: tensor<8xi32>, %[[Y:.+]]: tensor<8x2x4xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[SCALED:.+]] = linalg.generic
// CHECK-SAME: ins(%[[Y]], %[[V0]], %[[V1]] : tensor<8x2x4xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: arith.select
// CHECK: arith.mulf
// CHECK: %[[COUNT:.+]] = linalg.generic
// CHECK-SAME: ins(%[[I0]] : tensor<8xi32>)
// CHECK-NOT: arith.select
// CHECK: arith.addf
// CHECK: %[[CLONE:.+]] = linalg.generic
// CHECK-SAME: ins(%[[I0]], %[[I1]] : tensor<8xi32>, tensor<8xi32>)
// CHECK: scf.for
// CHECK: tensor.extract %[[CLONE]]
// CHECK: } {step.scan}
#p_row = affine_map<(d0, d1) -> (d0)>
#p_2 = affine_map<(d0, d1) -> (d0, d1)>
#p_3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#p_gate = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#p_first = affine_map<(d0, d1) -> (d0, 0)>
#p_expert = affine_map<(d0, d1) -> (d1)>
func.func @top_k_picks(%v0: tensor<8xf32>, %v1: tensor<8xf32>, %i0: tensor<8xi32>, %i1: tensor<8xi32>,
                       %y: tensor<8x2x4xf32>) -> (tensor<8x2x4xf32>, tensor<3xf32>, i32) {
  %c1 = arith.constant 1 : index
  %ev = tensor.empty() : tensor<8x2xf32>
  %values = linalg.generic {indexing_maps = [#p_row, #p_row, #p_2], iterator_types = ["parallel", "parallel"]}
      ins(%v0, %v1 : tensor<8xf32>, tensor<8xf32>) outs(%ev : tensor<8x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %j = linalg.index 1 : index
    %second = arith.cmpi eq, %j, %c1 : index
    %v = arith.select %second, %b, %a : f32
    linalg.yield %v : f32
  } -> tensor<8x2xf32>
  %ei = tensor.empty() : tensor<8x2xi32>
  %indices = linalg.generic {indexing_maps = [#p_row, #p_row, #p_2], iterator_types = ["parallel", "parallel"]}
      ins(%i0, %i1 : tensor<8xi32>, tensor<8xi32>) outs(%ei : tensor<8x2xi32>) {
  ^bb0(%a: i32, %b: i32, %o: i32):
    %j = linalg.index 1 : index
    %second = arith.cmpi eq, %j, %c1 : index
    %v = arith.select %second, %b, %a : i32
    linalg.yield %v : i32
  } -> tensor<8x2xi32>
  %gates = tensor.expand_shape %values [[0], [1, 2]] output_shape [8, 2, 1] : tensor<8x2xf32> into tensor<8x2x1xf32>
  %e3 = tensor.empty() : tensor<8x2x4xf32>
  %scaled = linalg.generic {indexing_maps = [#p_3, #p_gate, #p_3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y, %gates : tensor<8x2x4xf32>, tensor<8x2x1xf32>) outs(%e3 : tensor<8x2x4xf32>) {
  ^bb0(%a: f32, %g: f32, %o: f32):
    %m = arith.mulf %a, %g : f32
    linalg.yield %m : f32
  } -> tensor<8x2x4xf32>
  %first = tensor.extract_slice %indices[0, 0] [8, 1] [1, 1] : tensor<8x2xi32> to tensor<8x1xi32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  %count = linalg.generic {indexing_maps = [#p_first, #p_expert], iterator_types = ["reduction", "parallel"]}
      ins(%first : tensor<8x1xi32>) outs(%acc : tensor<3xf32>) {
  ^bb0(%e: i32, %o: f32):
    %x = linalg.index 1 : index
    %xi = arith.index_cast %x : index to i32
    %hit = arith.cmpi eq, %e, %xi : i32
    %one = arith.uitofp %hit : i1 to f32
    %s = arith.addf %o, %one : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c0_i32 = arith.constant 0 : i32
  %total = scf.for %t = %c0 to %c8 step %c1 iter_args(%sum = %c0_i32) -> (i32) {
    %e = tensor.extract %indices[%t, %c1] : tensor<8x2xi32>
    %next = arith.addi %sum, %e : i32
    scf.yield %next : i32
  } {step.scan}
  return %scaled, %count, %total : tensor<8x2x4xf32>, tensor<3xf32>, i32
}
