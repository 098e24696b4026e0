// Tests --step-fuse-elementwise: upstream elementwise fusion restricted to single-use producers
// that are not fused into contractions nor read through a broadcast. The positive case (a)
// shows that fusion does happen; the negative cases (b)-(d) each check that both generics
// survive and that the consumer still reads the producer's result, so a pass that fused them
// fails the test (upstream's default rule, mlir-opt --linalg-fuse-elementwise-ops, fuses (b)
// and (c); (d) guards the single-use rule against being loosened).
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
