// Structure of --step-lower-to-linalg's output, one case per op family; the numbers are checked
// by the lower_to_linalg_run_*.mlir tests, which execute the lowered code.
//
// RUN: %stepc-opt %s -split-input-file --step-lower-to-linalg | FileCheck %s
// RUN: %stepc-opt %s -split-input-file --step-lower-to-linalg | %stepc-opt -split-input-file | FileCheck %s

// Tests that a unary op is one all-parallel linalg.generic over a tensor.empty with the scalar
// formula in its body, that bf16 computes in f32 and rounds once, and that integer neg/abs use
// integer arithmetic.
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @unary
// CHECK-NOT: step.
// CHECK:       %[[E0:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK:       %[[SIG:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<2x3xf32>) outs(%[[E0]] : tensor<2x3xf32>)
// CHECK:         arith.negf
// CHECK-NEXT:    math.exp
// CHECK:         arith.addf
// CHECK:         arith.divf
// CHECK-NEXT:    linalg.yield
// CHECK:       %[[GELU:.+]] = linalg.generic
// CHECK:         arith.constant 0.707106769 : f32
// CHECK:         math.erf
// CHECK:       %[[TANH:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]]], iterator_types = ["parallel"]} ins(%arg1 : tensor<4xbf16>)
// CHECK-NEXT:  ^bb0(%[[IN:.+]]: bf16, %{{.+}}: bf16):
// CHECK-NEXT:    %[[W:.+]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:    %[[T:.+]] = math.tanh %[[W]] : f32
// CHECK-NEXT:    %[[N:.+]] = arith.truncf %[[T]] : f32 to bf16
// CHECK-NEXT:    linalg.yield %[[N]] : bf16
// CHECK:       %[[NEG:.+]] = linalg.generic
// CHECK:         arith.subi
// CHECK:       %[[ABS:.+]] = linalg.generic
// CHECK:         math.absi
// CHECK:       %[[LEAKY:.+]] = linalg.generic
// CHECK:         arith.constant 2.000000e-01 : f32
// CHECK:         arith.cmpf ogt
// CHECK:         arith.select
// CHECK:       %[[RELU:.+]] = linalg.generic
// CHECK:         arith.maximumf
// CHECK:       return %[[SIG]], %[[GELU]], %[[TANH]], %[[NEG]], %[[ABS]], %[[LEAKY]], %[[RELU]]
func.func @unary(%x: tensor<2x3xf32>, %h: tensor<4xbf16>, %i: tensor<3xi32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xbf16>, tensor<3xi32>, tensor<3xi32>,
        tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = step.sigmoid %x : tensor<2x3xf32>
  %1 = step.gelu %x {approximate = "erf"} : tensor<2x3xf32>
  %2 = step.tanh %h : tensor<4xbf16>
  %3 = step.neg %i : tensor<3xi32>
  %4 = step.abs %i : tensor<3xi32>
  %5 = step.leaky_relu %x {alpha = 0.2} : tensor<2x3xf32>
  %6 = step.relu %x : tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xbf16>,
      tensor<3xi32>, tensor<3xi32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Tests NumPy broadcasting through indexing maps: a size-1 dim that stretches reads index 0,
// missing leading dims are dropped, a rank-0 operand reads (); compare gives i1 (`ne` is the
// unordered predicate), select takes three broadcast operands, casts convert per element.
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SCALAR:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @binary
// CHECK:       %[[DIV:.+]] = linalg.generic {indexing_maps = [#[[COL]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x1xf32>, tensor<3xf32>) outs(%{{.+}} : tensor<4x3xf32>)
// CHECK:         arith.divf
// CHECK:       %[[CMP:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ID]]], {{.*}} ins(%[[DIV]], %arg2 : tensor<4x3xf32>, tensor<f32>) outs(%{{.+}} : tensor<4x3xi1>)
// CHECK:         arith.cmpf une
// CHECK:       %[[SEL:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[SCALAR]], #[[ID]]], {{.*}} ins(%[[CMP]], %[[DIV]], %arg2 : tensor<4x3xi1>, tensor<4x3xf32>, tensor<f32>)
// CHECK:         arith.select
// CHECK:       %[[IDIV:.+]] = linalg.generic
// CHECK:         arith.divsi
// CHECK:       %[[IMAX:.+]] = linalg.generic
// CHECK:         arith.maxsi
// CHECK:       %[[FMIN:.+]] = linalg.generic
// CHECK:         arith.minimumf
// CHECK:       %[[CAST:.+]] = linalg.generic
// CHECK:         arith.fptosi %{{.+}} : f32 to i32
// CHECK:       %[[BOOL:.+]] = linalg.generic
// CHECK:         arith.cmpi ne
// CHECK:       %[[C:.+]] = arith.constant dense<{{\[}}1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK:       return %[[DIV]], %[[CMP]], %[[SEL]], %[[IDIV]], %[[IMAX]], %[[FMIN]], %[[CAST]], %[[BOOL]], %[[C]]
func.func @binary(%x: tensor<4x1xf32>, %y: tensor<3xf32>, %s: tensor<f32>, %i: tensor<4x3xi32>,
                  %j: tensor<3xi32>)
    -> (tensor<4x3xf32>, tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xi32>, tensor<4x3xi32>,
        tensor<4x3xf32>, tensor<4x3xi32>, tensor<4x3xi1>, tensor<3xf32>) {
  %0 = step.div %x, %y : tensor<4x1xf32>, tensor<3xf32>
  %1 = step.compare %0, %s {predicate = "ne"} : tensor<4x3xf32>, tensor<f32>
  %2 = step.select %1, %0, %s : tensor<4x3xi1>, tensor<4x3xf32>, tensor<f32>
  %3 = step.div %i, %j : tensor<4x3xi32>, tensor<3xi32>
  %4 = step.max %i, %j : tensor<4x3xi32>, tensor<3xi32>
  %5 = step.min %0, %y : tensor<4x3xf32>, tensor<3xf32>
  %6 = step.cast %0 {to = i32} : tensor<4x3xf32>
  %7 = step.cast %6 {to = i1} : tensor<4x3xi32>
  %8 = step.constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>}
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4x3xf32>, tensor<4x3xi1>, tensor<4x3xf32>,
      tensor<4x3xi32>, tensor<4x3xi32>, tensor<4x3xf32>, tensor<4x3xi32>, tensor<4x3xi1>,
      tensor<3xf32>
}

// -----

// Tests that a reduction is a generic with "reduction" iterators on the reduced axes into a
// filled accumulator without them (-inf for a float max), that keepdim expands the result, and
// that mean divides the sum by the reduced count.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @reduce
// CHECK:       %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK:       %[[ACC:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<3xf32>) -> tensor<3xf32>
// CHECK:       %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["reduction", "parallel", "reduction"]} ins(%arg0 : tensor<2x3x4xf32>) outs(%[[ACC]] : tensor<3xf32>)
// CHECK:         arith.maximumf
// CHECK:       %[[KEEP:.+]] = tensor.expand_shape %[[MAX]] {{\[\[}}0, 1, 2]] output_shape [1, 3, 1] : tensor<3xf32> into tensor<1x3x1xf32>
// CHECK:       %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK:         arith.addf
// CHECK:       %[[MEAN:.+]] = linalg.generic
// CHECK:         arith.constant 8.000000e+00 : f32
// CHECK:         arith.divf
// CHECK:       %[[ALL:.+]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "reduction"]} ins(%arg0 : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<f32>)
// CHECK:       return %[[KEEP]], %[[MEAN]], %[[ALL]]
func.func @reduce(%x: tensor<2x3x4xf32>) -> (tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>) {
  %0 = step.reduce_max %x {axes = [0, 2], keepdim} : tensor<2x3x4xf32>
  %1 = step.mean %x {axes = [0, -1]} : tensor<2x3x4xf32>
  %2 = step.sum %x {axes = [0, 1, 2]} : tensor<2x3x4xf32>
  return %0, %1, %2 : tensor<1x3x1xf32>, tensor<3xf32>, tensor<f32>
}

// -----

// Tests contractions: a 3-D lhs against a shared 2-D rhs collapses to one linalg.matmul and
// expands back; a plain rank-3 batch_matmul is linalg.batch_matmul; transposed operands become
// a linalg.generic whose maps read the operand transposed; accumulators are zero-filled.
// CHECK-DAG: #[[Q:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[KT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[O:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @contract
// CHECK:       %[[L:.+]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x5x3xf32> into tensor<10x3xf32>
// CHECK:       %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<10x4xf32>)
// CHECK:       %[[MM:.+]] = linalg.matmul ins(%[[L]], %arg1 : tensor<10x3xf32>, tensor<3x4xf32>) outs(%[[Z]] : tensor<10x4xf32>)
// CHECK:       %[[R:.+]] = tensor.expand_shape %[[MM]] {{\[\[}}0, 1], [2]] output_shape [2, 5, 4] : tensor<10x4xf32> into tensor<2x5x4xf32>
// CHECK:       %[[S:.+]] = linalg.generic {indexing_maps = [#[[Q]], #[[KT]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg2, %arg3 : tensor<2x5x3xf32>, tensor<2x6x3xf32>)
// CHECK:         arith.mulf
// CHECK-NEXT:    arith.addf
// CHECK:       %[[BMM:.+]] = linalg.batch_matmul ins(%arg2, %arg4 : tensor<2x5x3xf32>, tensor<2x3x6xf32>) outs(%{{.+}} : tensor<2x5x6xf32>)
// CHECK:       %[[T2:.+]] = linalg.generic {{.*}} ins(%arg1, %arg5 : tensor<3x4xf32>, tensor<3x2xf32>) outs(%{{.+}} : tensor<4x2xf32>)
// CHECK:       return %[[R]], %[[S]], %[[BMM]], %[[T2]]
func.func @contract(%x: tensor<2x5x3xf32>, %w: tensor<3x4xf32>, %q: tensor<2x5x3xf32>,
                    %k: tensor<2x6x3xf32>, %v: tensor<2x3x6xf32>, %u: tensor<3x2xf32>)
    -> (tensor<2x5x4xf32>, tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<4x2xf32>) {
  %0 = step.matmul %x, %w : tensor<2x5x3xf32>, tensor<3x4xf32>
  %1 = step.batch_matmul %q, %k {transpose_rhs} : tensor<2x5x3xf32>, tensor<2x6x3xf32>
  %2 = step.batch_matmul %q, %v : tensor<2x5x3xf32>, tensor<2x3x6xf32>
  %3 = step.matmul %w, %u {transpose_lhs} : tensor<3x4xf32>, tensor<3x2xf32>
  return %0, %1, %2, %3 : tensor<2x5x4xf32>, tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<4x2xf32>
}

// -----

// Tests shape ops: reshape by one collapse (dims group) or through 1-D (they do not), transpose,
// broadcast as a copying generic, strided slice, pad as fill + insert_slice, concat as
// insert_slices at running offsets.
// CHECK-DAG: #[[BC:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @shape
// CHECK:       %[[R0:.+]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:       %[[F:.+]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK:       %[[R1:.+]] = tensor.expand_shape %[[F]] {{\[\[}}0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK:       %[[T:.+]] = linalg.transpose ins(%arg0 : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK:       %[[B:.+]] = linalg.generic {indexing_maps = [#[[BC]], #{{.+}}], {{.*}} ins(%arg1 : tensor<4xf32>) outs(%{{.+}} : tensor<2x3x4xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:    linalg.yield %[[IN]] : f32
// CHECK:       %[[S:.+]] = tensor.extract_slice %arg0[0, 1, 0] [2, 2, 2] [1, 1, 2] : tensor<2x3x4xf32> to tensor<2x2x2xf32>
// CHECK:       %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK:       %[[FILL:.+]] = linalg.fill ins(%[[TWO]] : f32) outs(%{{.+}} : tensor<4x3x4xf32>)
// CHECK:       %[[P:.+]] = tensor.insert_slice %arg0 into %[[FILL]][1, 0, 0] [2, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> into tensor<4x3x4xf32>
// CHECK:       %[[E:.+]] = tensor.empty() : tensor<2x3x8xf32>
// CHECK:       %[[C0:.+]] = tensor.insert_slice %arg0 into %[[E]][0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK:       %[[C1:.+]] = tensor.insert_slice %[[B]] into %[[C0]][0, 0, 4] [2, 3, 4] [1, 1, 1]
// CHECK:       return %[[R0]], %[[R1]], %[[T]], %[[B]], %[[S]], %[[P]], %[[C1]]
func.func @shape(%x: tensor<2x3x4xf32>, %b: tensor<4xf32>)
    -> (tensor<6x4xf32>, tensor<4x6xf32>, tensor<4x2x3xf32>, tensor<2x3x4xf32>,
        tensor<2x2x2xf32>, tensor<4x3x4xf32>, tensor<2x3x8xf32>) {
  %0 = step.reshape %x {shape = [-1, 4]} : tensor<2x3x4xf32>
  %1 = step.reshape %x {shape = [4, 6]} : tensor<2x3x4xf32>
  %2 = step.transpose %x {perm = [2, 0, 1]} : tensor<2x3x4xf32>
  %3 = step.broadcast %b {shape = [2, 3, 4]} : tensor<4xf32>
  %4 = step.slice %x {start = [0, 1, 0], limit = [2, 3, 4], strides = [1, 1, 2]} : tensor<2x3x4xf32>
  %5 = step.pad %x {low = [1, 0, 0], high = [1, 0, 0], value = 2.0} : tensor<2x3x4xf32>
  %6 = step.concat %x, %3 {axis = -1} : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<6x4xf32>, tensor<4x6xf32>, tensor<4x2x3xf32>,
      tensor<2x3x4xf32>, tensor<2x2x2xf32>, tensor<4x3x4xf32>, tensor<2x3x8xf32>
}

// -----

// Tests that split takes one extract_slice per part at running offsets and that iota is a
// generic without inputs over linalg.index of its axis, plus the offset, in the dtype.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @split_iota
// CHECK:       %[[A:.+]] = tensor.extract_slice %arg0[0, 0] [2, 2] [1, 1] : tensor<2x6xf32> to tensor<2x2xf32>
// CHECK:       %[[B:.+]] = tensor.extract_slice %arg0[0, 2] [2, 2] [1, 1] : tensor<2x6xf32> to tensor<2x2xf32>
// CHECK:       %[[C:.+]] = tensor.extract_slice %arg0[0, 4] [2, 2] [1, 1] : tensor<2x6xf32> to tensor<2x2xf32>
// CHECK:       %[[I:.+]] = linalg.generic {indexing_maps = [#[[ID]]], iterator_types = ["parallel", "parallel"]} outs(%{{.+}} : tensor<2x6xi32>)
// CHECK-NEXT:  ^bb0(%{{.+}}: i32):
// CHECK-NEXT:    %[[IDX:.+]] = linalg.index 1 : index
// CHECK-NEXT:    %[[I64:.+]] = arith.index_cast %[[IDX]] : index to i64
// CHECK-NEXT:    %[[OFF:.+]] = arith.constant 3 : i64
// CHECK-NEXT:    %[[SUM:.+]] = arith.addi %[[I64]], %[[OFF]] : i64
// CHECK-NEXT:    %[[V:.+]] = arith.trunci %[[SUM]] : i64 to i32
// CHECK-NEXT:    linalg.yield %[[V]] : i32
// CHECK:       return %[[A]], %[[B]], %[[C]], %[[I]]
func.func @split_iota(%x: tensor<2x6xf32>)
    -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x6xi32>) {
  %0, %1, %2 = step.split %x {axis = -1, parts = 3} : tensor<2x6xf32>
  %3 = step.iota %x {axis = -1, dtype = i32, offset = 3} : tensor<2x6xf32>
  return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x6xi32>
}

// -----

// Tests softmax along axis 0: the maximum over the axis (kept as size 1 and broadcast back),
// exp of the difference, its sum, and the quotient; log_softmax ends in (x - m) - log(sum).
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ACC:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @softmax
// CHECK:       %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ACC]]], iterator_types = ["reduction", "parallel"]} ins(%arg0 : tensor<2x3xf32>)
// CHECK:         arith.maximumf
// CHECK:       %[[M:.+]] = tensor.expand_shape %[[MAX]] {{\[\[}}0, 1]] output_shape [1, 3] : tensor<3xf32> into tensor<1x3xf32>
// CHECK:       %[[D:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], {{.*}} ins(%arg0, %[[M]] : tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK:         arith.subf
// CHECK:       %[[E:.+]] = linalg.generic {{.*}} ins(%[[D]] : tensor<2x3xf32>)
// CHECK:         math.exp
// CHECK:       %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ACC]]], iterator_types = ["reduction", "parallel"]} ins(%[[E]] : tensor<2x3xf32>)
// CHECK:         arith.addf
// CHECK:       %[[S:.+]] = tensor.expand_shape %[[SUM]]
// CHECK:       %[[P:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], {{.*}} ins(%[[E]], %[[S]] : tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK:         arith.divf
// CHECK:       %[[L:.+]] = linalg.generic {{.*}} ins(%{{[0-9]+}}, %expanded{{.*}} : tensor<2x3xf32>, tensor<1x3xf32>)
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    %[[LOG:.+]] = math.log
// CHECK-NEXT:    arith.subf %{{.+}}, %[[LOG]]
// CHECK:       return %[[P]], %[[L]]
func.func @softmax(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = step.softmax %x {axis = 0} : tensor<2x3xf32>
  %1 = step.log_softmax %x {axis = 0} : tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Tests cross_entropy: log_softmax over the last axis, then a generic over the targets that
// reads each position's target entry with tensor.extract and negates it, then a reduction over
// every position into a rank-0 accumulator and, for the mean, a division by the count.
// CHECK-DAG: #[[T:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[ALL:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @cross_entropy
// CHECK:       math.log
// CHECK:       %[[LOSSES:.+]] = linalg.generic {indexing_maps = [#[[T]], #[[T]]], iterator_types = ["parallel"]} ins(%arg1 : tensor<3xi32>) outs(%{{.+}} : tensor<3xf32>)
// CHECK-NEXT:  ^bb0(%[[TGT:.+]]: i32, %{{.+}}: f32):
// CHECK-NEXT:    %[[ROW:.+]] = linalg.index 0 : index
// The target is clamped to the 5 classes: no read out of bounds.
// CHECK-NEXT:    %[[T0:.+]] = arith.index_cast %[[TGT]] : i32 to index
// CHECK:         %[[T1:.+]] = arith.maxsi %[[T0]], %{{.+}} : index
// CHECK-NEXT:    %[[COL:.+]] = arith.minsi %[[T1]], %{{.+}} : index
// CHECK-NEXT:    %[[V:.+]] = tensor.extract %{{.+}}[%[[ROW]], %[[COL]]] : tensor<3x5xf32>
// CHECK-NEXT:    %[[NEG:.+]] = arith.negf %[[V]] : f32
// CHECK-NEXT:    linalg.yield %[[NEG]] : f32
// CHECK:       %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[T]], #[[ALL]]], iterator_types = ["reduction"]} ins(%[[LOSSES]] : tensor<3xf32>) outs(%{{.+}} : tensor<f32>)
// CHECK:       %[[MEAN:.+]] = linalg.generic
// CHECK:         arith.constant 3.000000e+00 : f32
// CHECK:         arith.divf
// CHECK:       return %[[MEAN]], %{{.+}}
func.func @cross_entropy(%logits: tensor<3x5xf32>, %targets: tensor<3xi32>)
    -> (tensor<f32>, tensor<3xf32>) {
  %0 = step.cross_entropy %logits, %targets : tensor<3x5xf32>, tensor<3xi32>
  %1 = step.cross_entropy %logits, %targets {reduction = "none"} : tensor<3x5xf32>, tensor<3xi32>
  return %0, %1 : tensor<f32>, tensor<3xf32>
}

// -----

// Tests layer_norm over the last dimension: the row sum (kept as size 1) gives the centred
// values, the sum of their squares the scale 1 / sqrt(var + eps), then one generic applies
// scale, gamma and beta; rms_norm skips the centring.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @norms
// CHECK:       %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<2x3xf32>)
// CHECK:       %[[S:.+]] = tensor.expand_shape %[[SUM]] {{\[\[}}0, 1]] output_shape [2, 1]
// CHECK:       %[[CEN:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]], {{.*}} ins(%arg0, %[[S]] : tensor<2x3xf32>, tensor<2x1xf32>)
// CHECK:         arith.constant 3.000000e+00 : f32
// CHECK:         arith.divf
// CHECK:         arith.subf
// CHECK:       %[[SQ:.+]] = linalg.generic {{.*}} ins(%[[CEN]] : tensor<2x3xf32>)
// CHECK:       %[[SSQ:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[SQ]] : tensor<2x3xf32>)
// CHECK:       %[[V:.+]] = tensor.expand_shape %[[SSQ]]
// CHECK:       %[[LN:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[C]], #[[C]], #[[ID]]], {{.*}} ins(%[[CEN]], %[[V]], %arg1, %arg2 : tensor<2x3xf32>, tensor<2x1xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK:         arith.constant 9.99999974E-6 : f32
// CHECK:         math.sqrt
// CHECK:       %[[RMS:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[C]], #[[ID]]], {{.*}} ins(%arg0, %{{.+}}, %arg1 : tensor<2x3xf32>, tensor<2x1xf32>, tensor<3xf32>)
// CHECK:       return %[[LN]], %[[RMS]]
func.func @norms(%x: tensor<2x3xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = step.layer_norm %x, %g, %b : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
  %1 = step.rms_norm %x, %g : tensor<2x3xf32>, tensor<3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Tests that embedding is a generic over the result whose id operand drops the last loop, and
// whose body reads table[clamp(id, 0, 6), d] with tensor.extract (no read out of bounds).
// CHECK-DAG: #[[IDS:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @embedding
// CHECK:       %[[G:.+]] = linalg.generic {indexing_maps = [#[[IDS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<2x3xi64>) outs(%{{.+}} : tensor<2x3x4xf32>)
// CHECK-NEXT:  ^bb0(%[[ID:.+]]: i64, %{{.+}}: f32):
// CHECK-NEXT:    %[[R0:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C6:.+]] = arith.constant 6 : index
// CHECK:         %[[R1:.+]] = arith.maxsi %[[R0]], %[[C0]] : index
// CHECK-NEXT:    %[[ROW:.+]] = arith.minsi %[[R1]], %[[C6]] : index
// CHECK-NEXT:    %[[COL:.+]] = linalg.index 2 : index
// CHECK-NEXT:    %[[V:.+]] = tensor.extract %arg0[%[[ROW]], %[[COL]]] : tensor<7x4xf32>
// CHECK-NEXT:    linalg.yield %[[V]] : f32
// CHECK:       return %[[G]]
func.func @embedding(%table: tensor<7x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = step.embedding %table, %ids : tensor<7x4xf32>, tensor<2x3xi64>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Tests that cumsum is an scf.for over the axis carrying the running sum (a slice with the axis
// of size 1, accumulated in place) and the result; reverse counts the index down from the end.
// CHECK-LABEL: func.func @cumsum_reverse
// CHECK-DAG:   %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:   %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:   %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG:   %[[C2:.+]] = arith.constant 2 : index
// CHECK:       %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x1xf32>)
// CHECK:       %[[E:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK:       %[[L:.+]]:2 = scf.for %[[I:[^ ,]+]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[S:[^ ,]+]] = %[[Z]], %[[R:[^ ,]+]] = %[[E]])
// CHECK:         %[[T:.+]] = arith.subi %[[C2]], %[[I]] : index
// CHECK:         %[[X:.+]] = tensor.extract_slice %arg0[0, %[[T]]] [2, 1] [1, 1] : tensor<2x3xf32> to tensor<2x1xf32>
// CHECK:         %[[N:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<2x1xf32>) outs(%[[S]] : tensor<2x1xf32>)
// CHECK:           arith.addf
// CHECK:         %[[U:.+]] = tensor.insert_slice %[[N]] into %[[R]][0, %[[T]]] [2, 1] [1, 1]
// CHECK:         scf.yield %[[N]], %[[U]]
// CHECK:       return %[[L]]#1
func.func @cumsum_reverse(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = step.cumsum %x {axis = -1, reverse} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Tests that an integer cumsum adds with arith.addi and a forward one uses the index as is.
// CHECK-LABEL: func.func @cumsum_i32
// CHECK:       scf.for %[[I:[^ ]+]] =
// CHECK-NOT:     arith.subi
// CHECK:         tensor.extract_slice %arg0[%[[I]], 0] [1, 4] [1, 1] : tensor<3x4xi32> to tensor<1x4xi32>
// CHECK:           arith.addi
func.func @cumsum_i32(%x: tensor<3x4xi32>) -> tensor<3x4xi32> {
  %0 = step.cumsum %x {axis = 0} : tensor<3x4xi32>
  return %0 : tensor<3x4xi32>
}

// -----

// Tests that embedding_grad collapses the gradient to [N, D] and the ids to [N], zero-fills the
// [vocab, D] result and adds gradient row n into row ids[n] (clamped to the rows: no write
// out of bounds) in an scf.for over the ids.
// CHECK-LABEL: func.func @embedding_grad
// CHECK:       %[[G:.+]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:       %[[IDS:.+]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1]] : tensor<2x3xi32> into tensor<6xi32>
// CHECK:       %[[Z:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<5x4xf32>)
// CHECK:       %[[L:.+]] = scf.for %[[N:[^ ,]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[R:[^ ,]+]] = %[[Z]]) -> (tensor<5x4xf32>)
// CHECK:         %[[ID:.+]] = tensor.extract %[[IDS]][%[[N]]] : tensor<6xi32>
// CHECK:         %[[V0:.+]] = arith.index_cast %[[ID]] : i32 to index
// CHECK:         %[[V1:.+]] = arith.maxsi %[[V0]], %{{.+}} : index
// CHECK:         %[[V:.+]] = arith.minsi %[[V1]], %{{.+}} : index
// CHECK:         %[[ROW:.+]] = tensor.extract_slice %[[G]][%[[N]], 0] [1, 4] [1, 1] : tensor<6x4xf32> to tensor<1x4xf32>
// CHECK:         %[[CUR:.+]] = tensor.extract_slice %[[R]][%[[V]], 0] [1, 4] [1, 1] : tensor<5x4xf32> to tensor<1x4xf32>
// The add is in place: the result's row is the generic's output.
// CHECK:         %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[ROW]] : tensor<1x4xf32>) outs(%[[CUR]] : tensor<1x4xf32>)
// CHECK:           arith.addf
// CHECK:         %[[U:.+]] = tensor.insert_slice %[[SUM]] into %[[R]][%[[V]], 0] [1, 4] [1, 1]
// CHECK:         scf.yield %[[U]]
// CHECK:       } {step.scan}
// CHECK:       return %[[L]]
func.func @embedding_grad(%g: tensor<2x3x4xf32>, %ids: tensor<2x3xi32>) -> tensor<5x4xf32> {
  %0 = step.embedding_grad %g, %ids {vocab = 5} : tensor<2x3x4xf32>, tensor<2x3xi32>
  return %0 : tensor<5x4xf32>
}

// -----

// Tests that repeat is an scf.for carrying the carried values and the stacked results: reverse
// counts down, `over` operands are sliced at the iteration (rank-reducing extract_slice), the
// body's step ops are lowered inside the loop, stacked yields are inserted at the iteration (a
// stacked iteration input first, before the layer, which may then overwrite the carried value in
// place) and the carried value is copied into its iteration argument.
// CHECK-LABEL: func.func @repeat_reverse
// CHECK-DAG:   %[[EMPTY:.+]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK-DAG:   %[[C3:.+]] = arith.constant 3 : index
// CHECK:       %[[L:.+]]:2 = scf.for %[[I:[^ ,]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[H:[^ ,]+]] = %arg0, %[[S:[^ ,]+]] = %[[EMPTY]]) -> (tensor<2x3xf32>, tensor<4x2x3xf32>)
// CHECK:         %[[AT:.+]] = arith.subi %[[C3]], %[[I]] : index
// CHECK:         %[[W:.+]] = tensor.extract_slice %arg1[%[[AT]], 0, 0] [1, 3, 3] [1, 1, 1] : tensor<4x3x3xf32> to tensor<3x3xf32>
// CHECK:         %[[U:.+]] = tensor.insert_slice %[[H]] into %[[S]][%[[AT]], 0, 0] [1, 2, 3] [1, 1, 1] : tensor<2x3xf32> into tensor<4x2x3xf32>
// CHECK:         %[[M:.+]] = linalg.matmul ins(%[[H]], %[[W]] : tensor<2x3xf32>, tensor<3x3xf32>)
// CHECK:         %[[T:.+]] = linalg.generic {{.+}} ins(%[[M]] : tensor<2x3xf32>)
// CHECK:           math.tanh
// CHECK:         %[[C:.+]] = linalg.copy ins(%[[T]] : tensor<2x3xf32>) outs(%[[H]] : tensor<2x3xf32>)
// CHECK:         scf.yield %[[C]], %[[U]]
// CHECK-NOT:   step.
// CHECK:       return %[[L]]#0, %[[L]]#1
func.func @repeat_reverse(%x: tensor<2x3xf32>, %ws: tensor<4x3x3xf32>)
    -> (tensor<2x3xf32>, tensor<4x2x3xf32>) {
  %h, %saved = step.repeat "layer" 4 (%a = %x : tensor<2x3xf32>) over (%w = %ws : tensor<4x3x3xf32>) reverse {
    %m = step.matmul %a, %w : tensor<2x3xf32>, tensor<3x3xf32>
    %t = step.tanh %m : tensor<2x3xf32>
    step.yield %t, %a : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %h, %saved : tensor<2x3xf32>, tensor<4x2x3xf32>
}

// -----

// Tests that conv1d pads the input explicitly (causal: K - 1 zeros on the left) and is one
// generic over (b, t, o, k, c) reading x[b, t + k, g(o) * Cin/groups + c] and w[k, c, o].
// CHECK-DAG:   #[[XMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d3, (d2 floordiv 3) * 2 + d4)>
// CHECK-DAG:   #[[WMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d2)>
// CHECK-DAG:   #[[YMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-DAG:   #[[GMAP:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d4, d2 * 6 + d5)>
// CHECK-DAG:   #[[EWMAP:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d2, d5, d3)>
// CHECK-DAG:   #[[DXMAP:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[DWXMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4 + d0, (d2 floordiv 6) * 4 + d1)>
// CHECK-LABEL: func.func @conv1d_causal_groups
// Only the pad rows are zero-filled; the input is copied over the rest.
// CHECK:       %[[E:.+]] = tensor.empty() : tensor<2x7x4xf32>
// CHECK:       %[[PAD:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x2x4xf32>)
// CHECK:       %[[Z:.+]] = tensor.insert_slice %[[PAD]] into %[[E]][0, 0, 0] [2, 2, 4] [1, 1, 1]
// CHECK:       %[[XP:.+]] = tensor.insert_slice %arg0 into %[[Z]][0, 2, 0] [2, 5, 4] [1, 1, 1]
// CHECK:       %[[ACC:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x5x6xf32>)
// CHECK:       %[[Y:.+]] = linalg.generic {indexing_maps = [#[[XMAP]], #[[WMAP]], #[[YMAP]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[XP]], %arg1 : tensor<2x7x4xf32>, tensor<3x2x6xf32>) outs(%[[ACC]] : tensor<2x5x6xf32>)
// CHECK:         arith.mulf
// CHECK:         arith.addf
// CHECK:       return %[[Y]]
func.func @conv1d_causal_groups(%x: tensor<2x5x4xf32>, %w: tensor<3x2x6xf32>) -> tensor<2x5x6xf32> {
  %0 = step.conv1d %x, %w {groups = 2} : tensor<2x5x4xf32>, tensor<3x2x6xf32>
  return %0 : tensor<2x5x6xf32>
}

// (f64: the shifted-GEMM form below takes f32 with one group; this is the general form.)
// Tests that conv1d_grad_input pads the gradient (valid: K - 1 on both sides) and computes
// [B, S, groups, Cin/groups] from the taps flipped and transposed (wf[k, o, i] = w[2-k, i, o],
// read in the body) and expanded to [K, groups, Cout/groups, Cin/groups], then collapses it:
// every index is an increasing sum of loops (s + k), which kernel tiling slices correctly.
// CHECK-LABEL: func.func @conv1d_grad_input_valid
// CHECK:       %[[E:.+]] = tensor.empty() : tensor<2x7x6xf64>
// CHECK:       %[[LEFT:.+]] = linalg.fill ins(%{{.+}} : f64) outs(%{{.+}} : tensor<2x2x6xf64>)
// CHECK:       %[[Z:.+]] = tensor.insert_slice %[[LEFT]] into %[[E]][0, 0, 0] [2, 2, 6] [1, 1, 1]
// CHECK:       %[[G:.+]] = tensor.insert_slice %arg0 into %[[Z]][0, 2, 0] [2, 3, 6] [1, 1, 1]
// CHECK:       %[[RIGHT:.+]] = linalg.fill ins(%{{.+}} : f64) outs(%{{.+}} : tensor<2x2x6xf64>)
// CHECK:       %[[GP:.+]] = tensor.insert_slice %[[RIGHT]] into %[[G]][0, 5, 0] [2, 2, 6] [1, 1, 1]
// CHECK:       %[[FLIP:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<3x6x4xf64>)
// CHECK:         %[[TAP:.+]] = arith.subi %c2, %{{.+}} : index
// CHECK:         tensor.extract %arg1[%[[TAP]], %{{.+}}, %{{.+}}] : tensor<3x4x6xf64>
// CHECK:       %[[W:.+]] = tensor.expand_shape %[[FLIP]] {{\[\[}}0], [1, 2], [3]] output_shape [3, 1, 6, 4] : tensor<3x6x4xf64> into tensor<3x1x6x4xf64>
// CHECK:       %[[D:.+]] = linalg.generic {indexing_maps = [#[[GMAP]], #[[EWMAP]], #[[DXMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[GP]], %[[W]] : tensor<2x7x6xf64>, tensor<3x1x6x4xf64>)
// CHECK:       %[[DX:.+]] = tensor.collapse_shape %[[D]] {{\[\[}}0], [1], [2, 3]] : tensor<2x5x1x4xf64> into tensor<2x5x4xf64>
// CHECK:       return %[[DX]]
func.func @conv1d_grad_input_valid(%g: tensor<2x3x6xf64>, %w: tensor<3x4x6xf64>) -> tensor<2x5x4xf64> {
  %0 = step.conv1d_grad_input %g, %w {padding = "valid"} : tensor<2x3x6xf64>, tensor<3x4x6xf64>
  return %0 : tensor<2x5x4xf64>
}

// Tests that conv1d_grad_weight is one generic over (k, c, o, b, t) reading the padded input
// and the gradient.
// CHECK-LABEL: func.func @conv1d_grad_weight_causal
// CHECK:       %[[XP:.+]] = tensor.insert_slice %arg0 into %{{.+}}[0, 2, 0] [2, 5, 4] [1, 1, 1]
// CHECK:       %[[DW:.+]] = linalg.generic {indexing_maps = [#[[DWXMAP]], #[[WMAP]], #[[YMAP]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[XP]], %arg1 : tensor<2x7x4xf64>, tensor<2x5x6xf64>) outs(%{{.+}} : tensor<3x4x6xf64>)
// CHECK:       return %[[DW]]
func.func @conv1d_grad_weight_causal(%x: tensor<2x5x4xf64>, %g: tensor<2x5x6xf64>) -> tensor<3x4x6xf64> {
  %0 = step.conv1d_grad_weight %x, %g {kernel = 3} : tensor<2x5x4xf64>, tensor<2x5x6xf64>
  return %0 : tensor<3x4x6xf64>
}

// Tests that an f32 conv1d with one group is GEMMs over row windows of the flattened padded
// input, one per tap: rows [k, k + R) with R = (B-1)·P + T = 1·7 + 5 = 12, each a 2-D
// contraction with w[k], accumulated, then cut back to [B, T, Cout].
// CHECK-LABEL: func.func @conv1d_as_gemms
// CHECK:       %[[XP:.+]] = tensor.insert_slice %arg0 into %{{.+}}[0, 2, 0] [2, 5, 4] [1, 1, 1]
// CHECK:       %[[ROWS:.+]] = tensor.collapse_shape %[[XP]] {{\[\[}}0, 1], [2]] : tensor<2x7x4xf32> into tensor<14x4xf32>
// CHECK:       tensor.extract_slice %arg1[0, 0, 0] [1, 4, 6] [1, 1, 1] : tensor<3x4x6xf32> to tensor<4x6xf32>
// CHECK:       tensor.extract_slice %[[ROWS]][0, 0] [12, 4] [1, 1]
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}}outs(%{{.+}} : tensor<12x6xf32>)
// CHECK:       tensor.extract_slice %[[ROWS]][1, 0] [12, 4] [1, 1]
// CHECK:       linalg.generic
// CHECK:       tensor.extract_slice %[[ROWS]][2, 0] [12, 4] [1, 1]
// CHECK:       linalg.generic
// CHECK-NOT:   linalg.generic
// CHECK:       tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [2, 7, 6] : tensor<14x6xf32> into tensor<2x7x6xf32>
// CHECK:       tensor.extract_slice %{{.+}}[0, 0, 0] [2, 5, 6] [1, 1, 1] : tensor<2x7x6xf32> to tensor<2x5x6xf32>
func.func @conv1d_as_gemms(%x: tensor<2x5x4xf32>, %w: tensor<3x4x6xf32>) -> tensor<2x5x6xf32> {
  %0 = step.conv1d %x, %w : tensor<2x5x4xf32>, tensor<3x4x6xf32>
  return %0 : tensor<2x5x6xf32>
}

// -----

// Tests that unused ops are lowered too (every step op a function can hold has a pattern now:
// the last ones were dropout and bf16 softmax), and that a step.model is left alone.
// CHECK-LABEL: func.func @partial
// CHECK-NOT:   step.
// CHECK:       %[[E:.+]] = linalg.generic
// CHECK:         math.exp
// CHECK:       %[[LN:.+]] = linalg.generic {{.*}}ins(%[[E]] : tensor<2x3xf32>)
// CHECK:       linalg.generic {{.*}}ins(%arg3 : tensor<2x3x5xf32>)
// CHECK:       linalg.generic {{.*}}ins(%arg0, %arg0 : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK:         arith.addf
// CHECK:       linalg.generic {{.*}}ins(%arg2 : tensor<4xbf16>) outs(%{{.+}} : tensor<4xf32>)
// CHECK-NOT:   step.
// CHECK:       return %[[LN]], %{{.+}}
func.func @partial(%x: tensor<2x3xf32>, %g: tensor<1x4x3xf32>, %h: tensor<4xbf16>,
                    %k: tensor<2x3x5xf32>) -> (tensor<2x3xf32>, tensor<4xbf16>) {
  %0 = step.exp %x : tensor<2x3xf32>
  %2 = step.dropout %0 {rate = 0.1, seed = 7} : tensor<2x3xf32>
  %3 = step.dropout %k {rate = 0.5, seed = 1} : tensor<2x3x5xf32>
  %4 = step.add %x, %x : tensor<2x3xf32>, tensor<2x3xf32>
  %5 = step.softmax %h : tensor<4xbf16>
  return %2, %5 : tensor<2x3xf32>, tensor<4xbf16>
}
// CHECK-LABEL: step.model @untouched
// CHECK:         step.relu
// CHECK-NOT:     linalg
step.model @untouched dims(B = 2, D = 3) {
  %x, %y = step.input "data" [B, D] f32 = classification(classes = 3)
  %r = step.relu %x
  %s = step.sum %r {axes = [0, 1]}
  step.loss %s
}

// -----

// Tests that dropout is one all-parallel generic drawing Philox4x32-10 from (seed, step,
// row-major index): the index from linalg.index, 10 rounds of two 32x32->64 multiplies, and
// keep = bits >= ceil(rate * 2^53) (rate 0.5: 2^52 = 4503599627370496), then x * 2 or 0.
// CHECK-LABEL: func.func @dropout
// CHECK-NOT: step.
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<i64>)
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK-COUNT-20: arith.muli %{{.+}}, %{{.+}} : i64
// CHECK: %[[MIN:.+]] = arith.constant 4503599627370496 : i64
// CHECK: arith.cmpi uge, %{{.+}}, %[[MIN]] : i64
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: arith.select
func.func @dropout(%x: tensor<2x3xf32>, %step: tensor<i64>) -> tensor<2x3xf32> {
  %0 = step.dropout %x, %step {rate = 0.5, seed = 7} : tensor<2x3xf32>, tensor<i64>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that jitter is one all-parallel generic drawing Philox4x32-10 from (seed, the jitter
// stream of the step: step ^ (6 << 56) = 432345564227567616, row-major index), and multiplies by
// 1 - eps + 2 eps u with u = (word 0 >> 8) * 2^-24 (5.96e-08) in f32; a bf16 tensor is
// multiplied in f32 and rounded once.
// CHECK-LABEL: func.func @jitter
// CHECK-NOT: step.
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<i64>)
// CHECK: arith.constant 432345564227567616 : i64
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK-COUNT-20: arith.muli %{{.+}}, %{{.+}} : i64
// CHECK: %[[EIGHT:.+]] = arith.constant 8 : i32
// CHECK: %[[W:.+]] = arith.shrui %{{.+}}, %[[EIGHT]] : i32
// CHECK: %[[UI:.+]] = arith.uitofp %[[W]] : i32 to f32
// CHECK: %[[U:.+]] = arith.mulf %[[UI]], %{{.+}} : f32
// CHECK: %[[S:.+]] = arith.mulf %[[U]], %{{.+}} : f32
// CHECK: %[[F:.+]] = arith.addf %{{.+}}, %[[S]] : f32
// CHECK: arith.mulf %{{.+}}, %[[F]] : f32
// CHECK: linalg.generic
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: arith.mulf %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @jitter(%x: tensor<2x3xf32>, %step: tensor<i64>, %b: tensor<4xbf16>) -> (tensor<2x3xf32>, tensor<4xbf16>) {
  %0 = step.jitter %x, %step {eps = 0.01, seed = 5} : tensor<2x3xf32>, tensor<i64>
  %1 = step.jitter %b {eps = 0.25, seed = 5} : tensor<4xbf16>
  return %0, %1 : tensor<2x3xf32>, tensor<4xbf16>
}

// -----

// Tests that a custom_grad's forward region is inlined and lowered (its backward region was
// applied by autodiff already).
// CHECK-LABEL: func.func @custom_grad
// CHECK-NOT: step.
// CHECK: linalg.generic
// CHECK: math.tanh
// CHECK-NOT: step.
func.func @custom_grad(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = step.custom_grad (%a = %x : tensor<4xf32>) {
    %t = step.tanh %a : tensor<4xf32>
    step.yield %t : tensor<4xf32>
  } backward (%a2, %dy) {
    step.yield %dy : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Tests that a bf16 layer norm and softmax compute in f32 between casts: the input is extended
// once, the statistics are f32 reductions, and the result is truncated once.
// CHECK-LABEL: func.func @narrow_norm
// CHECK-NOT: step.
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<2x8xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: math.exp %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: return %{{.+}} : tensor<2x8xbf16>
func.func @narrow_norm(%x: tensor<2x8xbf16>, %g: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<2x8xbf16> {
  %0 = step.layer_norm %x, %g, %b {eps = 1.0e-5} : tensor<2x8xbf16>, tensor<8xbf16>, tensor<8xbf16>
  %1 = step.softmax %0 {axis = -1} : tensor<2x8xbf16>
  return %1 : tensor<2x8xbf16>
}

// -----

// Tests that step.all_reduce is a linalg.copy into a fresh tensor marked step.collective (one
// rank's value; --step-collectives-to-runtime makes it the runtime's call after bufferization).
// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[G:.+]]: tensor<4x8xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[R:.+]] = linalg.copy {step.collective = "all_reduce_sum"} ins(%[[G]] : tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: return %[[R]]
func.func @all_reduce(%g: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = step.all_reduce %g : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
