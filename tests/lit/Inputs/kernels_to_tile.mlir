// Outlined kernels (step.kernel) of the shapes --step-tile-kernels distinguishes, and a host
// function calling two of them; used by the tile / parallelize / dispatch tests in backend/.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  // Row sums of a 64x1024 matrix: 64 rows, one tile each.
  func.func private @kernel_0_generic(%x: memref<64x1024xf32>, %y: memref<64xf32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<64x1024xf32>) outs(%y : memref<64xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    }
    return
  }
  // 7 x 64 x 96: 7 rows of tile size 1, then the 64 in chunks of 8.
  func.func private @kernel_1_generic(%x: memref<7x64x96xf32>, %y: memref<7x64x96xf32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x : memref<7x64x96xf32>) outs(%y : memref<7x64x96xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.mulf %a, %a : f32
      linalg.yield %s : f32
    }
    return
  }
  // Too small to split.
  func.func private @kernel_2_generic(%x: memref<4x4xf32>, %y: memref<4x4xf32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<4x4xf32>) outs(%y : memref<4x4xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    }
    return
  }
  // Column sums (the reduction comes first): no leading parallel dimension, stays whole.
  func.func private @kernel_3_generic(%x: memref<1024x64xf32>, %y: memref<64xf32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
        ins(%x : memref<1024x64xf32>) outs(%y : memref<64xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    }
    return
  }
  // The taps of a [11, 32, 96] weight reversed and transposed: the input's index 10 - d0 is
  // one tiling cannot slice (a tile's slice would start at 10 - d0 and the kept map add 10
  // again), so no dimension from it on is tiled.
  func.func private @kernel_4_generic(%w: memref<11x32x96xf32>, %f: memref<11x96x32xf32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (10 - d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%w : memref<11x32x96xf32>) outs(%f : memref<11x96x32xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    }
    return
  }
  // A shifted read, x[d0, d1 + 2]: its index is 2 at the origin, so no loop is tiled, not even
  // d0, which it does not depend on (linalg slices the untiled dimension too, at offset 2,
  // and the kept map adds 2 again: the grouped convolution's input gradient read so).
  func.func private @kernel_5_generic(%x: memref<64x66xf32>, %y: memref<64x64xf32>) attributes {step.kernel} {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 + 2)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<64x66xf32>) outs(%y : memref<64x64xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    }
    return
  }
  // Not a kernel: left alone.
  func.func @host(%x: memref<64x1024xf32>, %y: memref<64xf32>, %a: memref<7x64x96xf32>, %b: memref<7x64x96xf32>) {
    call @kernel_0_generic(%x, %y) : (memref<64x1024xf32>, memref<64xf32>) -> ()
    call @kernel_1_generic(%a, %b) : (memref<7x64x96xf32>, memref<7x64x96xf32>) -> ()
    call @kernel_0_generic(%x, %y) : (memref<64x1024xf32>, memref<64xf32>) -> ()
    return
  }
}
