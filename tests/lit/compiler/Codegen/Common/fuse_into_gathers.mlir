// Tests --step-fuse-into-gathers: (a) a cheap elementwise producer read only by a gather
// through a collapse_shape (an MoE backward's gate-scaled dY, [T, k, D] as [T * k, D],
// gathered into expert order) is computed at the read: the row index delinearized over
// [4, 2], the inputs read there through their maps, the payload cloned; the producer is gone.
// (b) one that another kernel also reads whole stays, and (c) one whose inputs are larger than
// its result (they would live on in its place) stays; (d) a read in a scan loop is a read too,
// (e) unless the loop reads more often than the producer has elements, or is a GPU routing nest.
//
// RUN: %stepc-opt %s -split-input-file --step-fuse-into-gathers | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-fuse-into-gathers | %stepc-opt -split-input-file -o /dev/null

// CHECK-LABEL: func.func @scaled_rows
// CHECK-SAME: (%[[DY:.+]]: tensor<4x1x3xf32>, %[[G:.+]]: tensor<4x2x1xf32>, %[[IDX:.+]]: tensor<8xi32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic
// CHECK: %[[R:.+]] = arith.index_cast
// CHECK: %[[C:.+]] = linalg.index 1 : index
// CHECK: %[[K:.+]] = arith.remui %[[R]], %{{.+}} : index
// CHECK: %[[T:.+]] = arith.divui %[[R]], %{{.+}} : index
// CHECK: %[[X:.+]] = tensor.extract %[[DY]][%[[T]], %{{.+}}, %[[C]]] : tensor<4x1x3xf32>
// CHECK: %[[W:.+]] = tensor.extract %[[G]][%[[T]], %[[K]], %{{.+}}] : tensor<4x2x1xf32>
// CHECK: %[[M:.+]] = arith.mulf %[[X]], %[[W]] : f32
// CHECK: linalg.yield %[[M]]
// CHECK-NOT: linalg.generic
#p3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#dy = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
#g = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#row = affine_map<(d0, d1) -> (d0)>
#out = affine_map<(d0, d1) -> (d0, d1)>
func.func @scaled_rows(%dy: tensor<4x1x3xf32>, %g: tensor<4x2x1xf32>, %idx: tensor<8xi32>) -> tensor<8x3xf32> {
  %e3 = tensor.empty() : tensor<4x2x3xf32>
  %scaled = linalg.generic {indexing_maps = [#dy, #g, #p3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%dy, %g : tensor<4x1x3xf32>, tensor<4x2x1xf32>) outs(%e3 : tensor<4x2x3xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %m = arith.mulf %x, %w : f32
    linalg.yield %m : f32
  } -> tensor<4x2x3xf32>
  %flat = tensor.collapse_shape %scaled [[0, 1], [2]] : tensor<4x2x3xf32> into tensor<8x3xf32>
  %e = tensor.empty() : tensor<8x3xf32>
  %rows = linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "parallel"]}
      ins(%idx : tensor<8xi32>) outs(%e : tensor<8x3xf32>) {
  ^bb0(%i: i32, %o: f32):
    %r = arith.index_cast %i : i32 to index
    %c = linalg.index 1 : index
    %v = tensor.extract %flat[%r, %c] : tensor<8x3xf32>
    linalg.yield %v : f32
  } -> tensor<8x3xf32>
  return %rows : tensor<8x3xf32>
}

// -----

// CHECK-LABEL: func.func @also_read_whole
// CHECK: %[[P:.+]] = linalg.generic
// CHECK: arith.negf
// CHECK: tensor.extract %[[P]]
// CHECK: return
#b1 = affine_map<(d0) -> (d0)>
func.func @also_read_whole(%x: tensor<8xf32>, %idx: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %neg = linalg.generic {indexing_maps = [#b1, #b1], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %picked = linalg.generic {indexing_maps = [#b1, #b1], iterator_types = ["parallel"]}
      ins(%idx : tensor<8xi32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%i: i32, %o: f32):
    %r = arith.index_cast %i : i32 to index
    %v = tensor.extract %neg[%r] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %picked, %neg : tensor<8xf32>, tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @inputs_larger
// CHECK: %[[P:.+]] = linalg.generic
// CHECK: tensor.extract %[[P]]
#c_in = affine_map<(d0) -> (d0, 0)>
#c_in2 = affine_map<(d0) -> (d0, 1)>
#c1 = affine_map<(d0) -> (d0)>
func.func @inputs_larger(%x: tensor<8x4xf32>, %idx: tensor<8xi32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#c_in, #c_in2, #c1], iterator_types = ["parallel"]}
      ins(%x, %x : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %picked = linalg.generic {indexing_maps = [#c1, #c1], iterator_types = ["parallel"]}
      ins(%idx : tensor<8xi32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%i: i32, %o: f32):
    %r = arith.index_cast %i : i32 to index
    %v = tensor.extract %sum[%r] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %picked : tensor<8xf32>
}

// -----

// (d) A read in a scan loop (route_tokens' loop reading top_k's indices: the pick of slot j
// among the k slot tensors) is a gather's read too: the pick is computed there, reading both
// slots at the token, and is no kernel of its own.
// CHECK-LABEL: func.func @scan_read
// CHECK-SAME: (%[[S0:.+]]: tensor<8xi32>, %[[S1:.+]]: tensor<8xi32>)
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[A:.+]] = tensor.extract %[[S0]][%[[T]]]
// CHECK: %[[B:.+]] = tensor.extract %[[S1]][%[[T]]]
// CHECK: %[[SECOND:.+]] = arith.cmpi eq, %[[J]], %{{.+}} : index
// CHECK: %[[E:.+]] = arith.select %[[SECOND]], %[[B]], %[[A]] : i32
// CHECK: arith.addi %{{.+}}, %[[E]]
// CHECK-NOT: linalg.generic
#s_row = affine_map<(d0, d1) -> (d0)>
#s_2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @scan_read(%s0: tensor<8xi32>, %s1: tensor<8xi32>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c0_i32 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x2xi32>
  %indices = linalg.generic {indexing_maps = [#s_row, #s_row, #s_2], iterator_types = ["parallel", "parallel"]}
      ins(%s0, %s1 : tensor<8xi32>, tensor<8xi32>) outs(%e : tensor<8x2xi32>) {
  ^bb0(%a: i32, %b: i32, %o: i32):
    %j = linalg.index 1 : index
    %second = arith.cmpi eq, %j, %c1 : index
    %v = arith.select %second, %b, %a : i32
    linalg.yield %v : i32
  } -> tensor<8x2xi32>
  %total = scf.for %j = %c0 to %c2 step %c1 iter_args(%outer = %c0_i32) -> (i32) {
    %inner = scf.for %t = %c0 to %c8 step %c1 iter_args(%sum = %outer) -> (i32) {
      %x = tensor.extract %indices[%t, %j] : tensor<8x2xi32>
      %next = arith.addi %sum, %x : i32
      scf.yield %next : i32
    } {step.scan}
    scf.yield %inner : i32
  } {step.scan}
  return %total : i32
}

// -----

// (e) Not when the scan loop reads the producer more often than it has elements (here 3 x 16
// reads of 16 elements: route_experts' bisection reads each score 33 times per expert), nor in
// a GPU's routing nest (step.block_route), which BlockRoute.cpp replaces whole, finding its
// buffers by the loads it expects.
// CHECK-LABEL: func.func @scan_read_repeated
// CHECK: %[[P:.+]] = linalg.generic
// CHECK: scf.for
// CHECK: tensor.extract %[[P]]
// CHECK: %[[Q:.+]] = linalg.generic
// CHECK: scf.for
// CHECK: tensor.extract %[[Q]]
// CHECK: } {step.block_route, step.scan}
#r_row = affine_map<(d0, d1) -> (d0)>
#r_2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @scan_read_repeated(%s0: tensor<8xi32>, %s1: tensor<8xi32>) -> (i32, i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c0_i32 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x2xi32>
  %picked = linalg.generic {indexing_maps = [#r_row, #r_row, #r_2], iterator_types = ["parallel", "parallel"]}
      ins(%s0, %s1 : tensor<8xi32>, tensor<8xi32>) outs(%e : tensor<8x2xi32>) {
  ^bb0(%a: i32, %b: i32, %o: i32):
    %j = linalg.index 1 : index
    %second = arith.cmpi eq, %j, %c1 : index
    %v = arith.select %second, %b, %a : i32
    linalg.yield %v : i32
  } -> tensor<8x2xi32>
  %total = scf.for %r = %c0 to %c3 step %c1 iter_args(%acc = %c0_i32) -> (i32) {
    %outer = scf.for %j = %c0 to %c2 step %c1 iter_args(%o = %acc) -> (i32) {
      %inner = scf.for %t = %c0 to %c8 step %c1 iter_args(%sum = %o) -> (i32) {
        %x = tensor.extract %picked[%t, %j] : tensor<8x2xi32>
        %next = arith.addi %sum, %x : i32
        scf.yield %next : i32
      } {step.scan}
      scf.yield %inner : i32
    } {step.scan}
    scf.yield %outer : i32
  } {step.scan}
  %e2 = tensor.empty() : tensor<8x2xi32>
  %picked2 = linalg.generic {indexing_maps = [#r_row, #r_row, #r_2], iterator_types = ["parallel", "parallel"]}
      ins(%s0, %s1 : tensor<8xi32>, tensor<8xi32>) outs(%e2 : tensor<8x2xi32>) {
  ^bb0(%a: i32, %b: i32, %o: i32):
    %j = linalg.index 1 : index
    %second = arith.cmpi eq, %j, %c1 : index
    %v = arith.select %second, %b, %a : i32
    linalg.yield %v : i32
  } -> tensor<8x2xi32>
  %routed = scf.for %j = %c0 to %c2 step %c1 iter_args(%o = %c0_i32) -> (i32) {
    %inner = scf.for %t = %c0 to %c8 step %c1 iter_args(%sum = %o) -> (i32) {
      %x = tensor.extract %picked2[%t, %j] : tensor<8x2xi32>
      %next = arith.addi %sum, %x : i32
      scf.yield %next : i32
    } {step.scan}
    scf.yield %inner : i32
  } {step.block_route, step.scan}
  return %total, %routed : i32, i32
}
