// Expert choice's routing on a GPU (BlockRoute.h): RoutingPatterns.cpp's loop nest in its
// block form (as --emit=buffers shows it for --target=cuda: benchmarks/moe/moe_vs_dense.py's
// expert-choice layer at T = 3000 tokens, E = 5 experts, k = 2, so C = 1200) becomes one
// kernel of one block, which --step-emulate-gpu runs in lock-step: segments of 3 tokens per
// thread, 4 radix rounds and 2 block scans per expert. The scores have 17 distinct values
// (heavy ties at every expert's threshold, which go to the lower tokens), negative ones,
// -0.0 beside 0.0, and NaN (above every number). The outputs start as garbage and are
// compared for equality with the same nest run in order on the host (@reference, the nest
// without its marks; lower_to_linalg_run_routing.mlir checks the nest against the op's
// definition): no mismatch. Without the barriers the histograms and scans are read before
// they are complete (NOBARRIER).
//
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu --step-emulate-gpu | %linalg-to-llvm | %run-cpu | FileCheck %s
// RUN: %stepc-opt %s --step-outline-kernels --step-kernels-to-gpu | sed '/gpu.barrier/d' | %stepc-opt --step-emulate-gpu | %linalg-to-llvm | %run-cpu | FileCheck %s --check-prefix=NOBARRIER

// GPU: gpu.launch_func @stepc_kernels::@kernel_0_scan blocks in (%c1{{(_[0-9]+)?}}, %{{.+}}, %{{.+}}) threads in (%c1024, %{{.+}}, %{{.+}})
// GPU: gpu.func @kernel_0_scan
// GPU-SAME: workgroup(%{{.+}} : memref<256xi32, #gpu.address_space<workgroup>>, %{{.+}} : memref<2xi32, #gpu.address_space<workgroup>>
// GPU: memref.atomic_rmw addi
// GPU: gpu.shuffle up
// GPU: gpu.barrier
// GPU-NOT: step.block_route_experts

// CHECK: tokens of expert 4 at its threshold's value
// CHECK-NEXT: {{[1-9][0-9]+}}
// CHECK-NEXT: mismatches
// CHECK-NEXT: 0
// NOBARRIER: mismatches
// NOBARRIER-NEXT: {{[1-9][0-9]*}}

module {
  func.func @stepc_profile_enter(%id: i64) { return }
  func.func @stepc_profile_exit(%id: i64) { return }
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func private @printString(!llvm.ptr)
  llvm.mlir.global internal constant @ties("tokens of expert 4 at its threshold's value\0A\00")
  llvm.mlir.global internal constant @mismatches("mismatches\0A\00")

  // As --emit=buffers shows it for --target=cuda.
  func.func @route(%arg0: memref<3000xi32>, %arg1: memref<3000x2xi32>, %arg2: memref<3000x2xi32>, %arg3: memref<3000x5xf32>, %arg4: memref<5x1200xi32>) {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c-1_i32 = arith.constant -1 : i32
    %c1 = arith.constant 1 : index
    %c3000 = arith.constant 3000 : index
    %c1_i64 = arith.constant 1 : i64
    %c2147483647_i32 = arith.constant 2147483647 : i32
    %c2_i32 = arith.constant 2 : i32
    %c1200_i32 = arith.constant 1200 : i32
    %c32 = arith.constant 32 : index
    %c-2147483648_i64 = arith.constant -2147483648 : i64
    %c2147483648_i64 = arith.constant 2147483648 : i64
    %c1199_i32 = arith.constant 1199 : i32
    %c1_i32 = arith.constant 1 : i32
    %c1200 = arith.constant 1200 : index
    %c5 = arith.constant 5 : index
    scf.for %arg5 = %c0 to %c5 step %c1 {
      scf.for %arg6 = %c0 to %c3000 step %c1 {
        %3 = arith.cmpi eq, %arg5, %c0 : index
        %4 = memref.load %arg0[%arg6] : memref<3000xi32>
        %5 = arith.select %3, %c0_i32, %4 : i32
        memref.store %5, %arg0[%arg6] : memref<3000xi32>
        %6 = memref.load %arg1[%arg6, %c0] : memref<3000x2xi32>
        %7 = arith.select %3, %c-1_i32, %6 : i32
        memref.store %7, %arg1[%arg6, %c0] : memref<3000x2xi32>
        %8 = memref.load %arg2[%arg6, %c0] : memref<3000x2xi32>
        %9 = arith.select %3, %c-1_i32, %8 : i32
        memref.store %9, %arg2[%arg6, %c0] : memref<3000x2xi32>
        %10 = memref.load %arg1[%arg6, %c1] : memref<3000x2xi32>
        %11 = arith.select %3, %c-1_i32, %10 : i32
        memref.store %11, %arg1[%arg6, %c1] : memref<3000x2xi32>
        %12 = memref.load %arg2[%arg6, %c1] : memref<3000x2xi32>
        %13 = arith.select %3, %c-1_i32, %12 : i32
        memref.store %13, %arg2[%arg6, %c1] : memref<3000x2xi32>
      } {step.scan}
      %0:3 = scf.for %arg6 = %c0 to %c32 step %c1 iter_args(%arg7 = %c-2147483648_i64, %arg8 = %c2147483648_i64, %arg9 = %c0_i32) -> (i64, i64, i32) {
        %3 = arith.subi %arg8, %arg7 : i64
        %4 = arith.shrsi %3, %c1_i64 : i64
        %5 = arith.addi %arg7, %4 : i64
        %6 = scf.for %arg10 = %c0 to %c3000 step %c1 iter_args(%arg11 = %c0_i32) -> (i32) {
          %11 = memref.load %arg3[%arg10, %arg5] : memref<3000x5xf32>
          %12 = arith.bitcast %11 : f32 to i32
          %13 = arith.xori %12, %c2147483647_i32 : i32
          %14 = arith.cmpi slt, %12, %c0_i32 : i32
          %15 = arith.select %14, %13, %12 : i32
          %16 = arith.extsi %15 : i32 to i64
          %17 = arith.cmpi sge, %16, %5 : i64
          %18 = memref.load %arg0[%arg10] : memref<3000xi32>
          %19 = arith.cmpi slt, %18, %c2_i32 : i32
          %20 = arith.andi %19, %17 : i1
          %21 = arith.extui %20 : i1 to i32
          %22 = arith.addi %arg11, %21 : i32
          scf.yield %22 : i32
        } {step.scan}
        %7 = arith.cmpi sge, %6, %c1200_i32 : i32
        %8 = arith.select %7, %5, %arg7 : i64
        %9 = arith.select %7, %arg8, %5 : i64
        %10 = arith.select %7, %arg9, %6 : i32
        scf.yield %8, %9, %10 : i64, i64, i32
      } {step.scan}
      %1 = arith.subi %c1200_i32, %0#2 : i32
      %2:2 = scf.for %arg6 = %c0 to %c3000 step %c1 iter_args(%arg7 = %c0_i32, %arg8 = %1) -> (i32, i32) {
        %3 = memref.load %arg0[%arg6] : memref<3000xi32>
        %4 = arith.cmpi slt, %3, %c2_i32 : i32
        %5 = memref.load %arg3[%arg6, %arg5] : memref<3000x5xf32>
        %6 = arith.bitcast %5 : f32 to i32
        %7 = arith.xori %6, %c2147483647_i32 : i32
        %8 = arith.cmpi slt, %6, %c0_i32 : i32
        %9 = arith.select %8, %7, %6 : i32
        %10 = arith.extsi %9 : i32 to i64
        %11 = arith.cmpi sgt, %10, %0#0 : i64
        %12 = arith.cmpi sgt, %arg8, %c0_i32 : i32
        %13 = arith.cmpi eq, %10, %0#0 : i64
        %14 = arith.andi %13, %12 : i1
        %15 = arith.ori %11, %14 : i1
        %16 = arith.andi %4, %15 : i1
        %17 = arith.cmpi sle, %10, %0#0 : i64
        %18 = arith.andi %16, %17 : i1
        %19 = arith.minsi %arg7, %c1199_i32 : i32
        %20 = arith.index_cast %19 : i32 to index
        %21 = arith.minsi %3, %c1_i32 : i32
        %22 = arith.index_cast %21 : i32 to index
        %23 = arith.index_cast %arg6 : index to i32
        %24 = arith.muli %23, %c2_i32 : i32
        %25 = arith.addi %24, %3 : i32
        %26 = arith.index_cast %arg5 : index to i32
        %27 = arith.muli %26, %c1200_i32 : i32
        %28 = arith.addi %27, %arg7 : i32
        %29 = memref.load %arg4[%arg5, %20] : memref<5x1200xi32>
        %30 = arith.select %16, %25, %29 : i32
        memref.store %30, %arg4[%arg5, %20] : memref<5x1200xi32>
        %31 = memref.load %arg1[%arg6, %22] : memref<3000x2xi32>
        %32 = arith.select %16, %28, %31 : i32
        memref.store %32, %arg1[%arg6, %22] : memref<3000x2xi32>
        %33 = memref.load %arg2[%arg6, %22] : memref<3000x2xi32>
        %34 = arith.select %16, %26, %33 : i32
        memref.store %34, %arg2[%arg6, %22] : memref<3000x2xi32>
        %35 = arith.extui %16 : i1 to i32
        %36 = arith.addi %3, %35 : i32
        memref.store %36, %arg0[%arg6] : memref<3000xi32>
        %37 = arith.addi %arg7, %35 : i32
        %38 = arith.extui %18 : i1 to i32
        %39 = arith.subi %arg8, %38 : i32
        scf.yield %37, %39 : i32, i32
      } {step.scan}
      scf.for %arg6 = %c0 to %c1200 step %c1 {
        %3 = arith.index_cast %arg6 : index to i32
        %4 = arith.cmpi sge, %3, %2#0 : i32
        %5 = memref.load %arg4[%arg5, %arg6] : memref<5x1200xi32>
        %6 = arith.select %4, %c-1_i32, %5 : i32
        memref.store %6, %arg4[%arg5, %arg6] : memref<5x1200xi32>
      } {step.scan}
    } {step.block_route_experts, step.scan}
    return
  }

  // The same nest unmarked: the host runs it in order.
  func.func @reference(%arg0: memref<3000xi32>, %arg1: memref<3000x2xi32>, %arg2: memref<3000x2xi32>, %arg3: memref<3000x5xf32>, %arg4: memref<5x1200xi32>) {
    %c0 = arith.constant 0 : index
    %c0_i32 = arith.constant 0 : i32
    %c-1_i32 = arith.constant -1 : i32
    %c1 = arith.constant 1 : index
    %c3000 = arith.constant 3000 : index
    %c1_i64 = arith.constant 1 : i64
    %c2147483647_i32 = arith.constant 2147483647 : i32
    %c2_i32 = arith.constant 2 : i32
    %c1200_i32 = arith.constant 1200 : i32
    %c32 = arith.constant 32 : index
    %c-2147483648_i64 = arith.constant -2147483648 : i64
    %c2147483648_i64 = arith.constant 2147483648 : i64
    %c1199_i32 = arith.constant 1199 : i32
    %c1_i32 = arith.constant 1 : i32
    %c1200 = arith.constant 1200 : index
    %c5 = arith.constant 5 : index
    scf.for %arg5 = %c0 to %c5 step %c1 {
      scf.for %arg6 = %c0 to %c3000 step %c1 {
        %3 = arith.cmpi eq, %arg5, %c0 : index
        %4 = memref.load %arg0[%arg6] : memref<3000xi32>
        %5 = arith.select %3, %c0_i32, %4 : i32
        memref.store %5, %arg0[%arg6] : memref<3000xi32>
        %6 = memref.load %arg1[%arg6, %c0] : memref<3000x2xi32>
        %7 = arith.select %3, %c-1_i32, %6 : i32
        memref.store %7, %arg1[%arg6, %c0] : memref<3000x2xi32>
        %8 = memref.load %arg2[%arg6, %c0] : memref<3000x2xi32>
        %9 = arith.select %3, %c-1_i32, %8 : i32
        memref.store %9, %arg2[%arg6, %c0] : memref<3000x2xi32>
        %10 = memref.load %arg1[%arg6, %c1] : memref<3000x2xi32>
        %11 = arith.select %3, %c-1_i32, %10 : i32
        memref.store %11, %arg1[%arg6, %c1] : memref<3000x2xi32>
        %12 = memref.load %arg2[%arg6, %c1] : memref<3000x2xi32>
        %13 = arith.select %3, %c-1_i32, %12 : i32
        memref.store %13, %arg2[%arg6, %c1] : memref<3000x2xi32>
      }
      %0:3 = scf.for %arg6 = %c0 to %c32 step %c1 iter_args(%arg7 = %c-2147483648_i64, %arg8 = %c2147483648_i64, %arg9 = %c0_i32) -> (i64, i64, i32) {
        %3 = arith.subi %arg8, %arg7 : i64
        %4 = arith.shrsi %3, %c1_i64 : i64
        %5 = arith.addi %arg7, %4 : i64
        %6 = scf.for %arg10 = %c0 to %c3000 step %c1 iter_args(%arg11 = %c0_i32) -> (i32) {
          %11 = memref.load %arg3[%arg10, %arg5] : memref<3000x5xf32>
          %12 = arith.bitcast %11 : f32 to i32
          %13 = arith.xori %12, %c2147483647_i32 : i32
          %14 = arith.cmpi slt, %12, %c0_i32 : i32
          %15 = arith.select %14, %13, %12 : i32
          %16 = arith.extsi %15 : i32 to i64
          %17 = arith.cmpi sge, %16, %5 : i64
          %18 = memref.load %arg0[%arg10] : memref<3000xi32>
          %19 = arith.cmpi slt, %18, %c2_i32 : i32
          %20 = arith.andi %19, %17 : i1
          %21 = arith.extui %20 : i1 to i32
          %22 = arith.addi %arg11, %21 : i32
          scf.yield %22 : i32
        }
        %7 = arith.cmpi sge, %6, %c1200_i32 : i32
        %8 = arith.select %7, %5, %arg7 : i64
        %9 = arith.select %7, %arg8, %5 : i64
        %10 = arith.select %7, %arg9, %6 : i32
        scf.yield %8, %9, %10 : i64, i64, i32
      }
      %1 = arith.subi %c1200_i32, %0#2 : i32
      %2:2 = scf.for %arg6 = %c0 to %c3000 step %c1 iter_args(%arg7 = %c0_i32, %arg8 = %1) -> (i32, i32) {
        %3 = memref.load %arg0[%arg6] : memref<3000xi32>
        %4 = arith.cmpi slt, %3, %c2_i32 : i32
        %5 = memref.load %arg3[%arg6, %arg5] : memref<3000x5xf32>
        %6 = arith.bitcast %5 : f32 to i32
        %7 = arith.xori %6, %c2147483647_i32 : i32
        %8 = arith.cmpi slt, %6, %c0_i32 : i32
        %9 = arith.select %8, %7, %6 : i32
        %10 = arith.extsi %9 : i32 to i64
        %11 = arith.cmpi sgt, %10, %0#0 : i64
        %12 = arith.cmpi sgt, %arg8, %c0_i32 : i32
        %13 = arith.cmpi eq, %10, %0#0 : i64
        %14 = arith.andi %13, %12 : i1
        %15 = arith.ori %11, %14 : i1
        %16 = arith.andi %4, %15 : i1
        %17 = arith.cmpi sle, %10, %0#0 : i64
        %18 = arith.andi %16, %17 : i1
        %19 = arith.minsi %arg7, %c1199_i32 : i32
        %20 = arith.index_cast %19 : i32 to index
        %21 = arith.minsi %3, %c1_i32 : i32
        %22 = arith.index_cast %21 : i32 to index
        %23 = arith.index_cast %arg6 : index to i32
        %24 = arith.muli %23, %c2_i32 : i32
        %25 = arith.addi %24, %3 : i32
        %26 = arith.index_cast %arg5 : index to i32
        %27 = arith.muli %26, %c1200_i32 : i32
        %28 = arith.addi %27, %arg7 : i32
        %29 = memref.load %arg4[%arg5, %20] : memref<5x1200xi32>
        %30 = arith.select %16, %25, %29 : i32
        memref.store %30, %arg4[%arg5, %20] : memref<5x1200xi32>
        %31 = memref.load %arg1[%arg6, %22] : memref<3000x2xi32>
        %32 = arith.select %16, %28, %31 : i32
        memref.store %32, %arg1[%arg6, %22] : memref<3000x2xi32>
        %33 = memref.load %arg2[%arg6, %22] : memref<3000x2xi32>
        %34 = arith.select %16, %26, %33 : i32
        memref.store %34, %arg2[%arg6, %22] : memref<3000x2xi32>
        %35 = arith.extui %16 : i1 to i32
        %36 = arith.addi %3, %35 : i32
        memref.store %36, %arg0[%arg6] : memref<3000xi32>
        %37 = arith.addi %arg7, %35 : i32
        %38 = arith.extui %18 : i1 to i32
        %39 = arith.subi %arg8, %38 : i32
        scf.yield %37, %39 : i32, i32
      }
      scf.for %arg6 = %c0 to %c1200 step %c1 {
        %3 = arith.index_cast %arg6 : index to i32
        %4 = arith.cmpi sge, %3, %2#0 : i32
        %5 = memref.load %arg4[%arg5, %arg6] : memref<5x1200xi32>
        %6 = arith.select %4, %c-1_i32, %5 : i32
        memref.store %6, %arg4[%arg5, %arg6] : memref<5x1200xi32>
      }
    }
    return
  }

  // A count of the elements where two [n, m] buffers differ.
  func.func @differ2(%a: memref<?x?xi32>, %b: memref<?x?xi32>) -> i64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %z = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %n = memref.dim %a, %c0 : memref<?x?xi32>
    %m = memref.dim %a, %c1 : memref<?x?xi32>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> i64 {
      %r2 = scf.for %j = %c0 to %m step %c1 iter_args(%acc2 = %acc) -> i64 {
        %x = memref.load %a[%i, %j] : memref<?x?xi32>
        %y = memref.load %b[%i, %j] : memref<?x?xi32>
        %ne = arith.cmpi ne, %x, %y : i32
        %inc = arith.select %ne, %one, %z : i64
        %s = arith.addi %acc2, %inc : i64
        scf.yield %s : i64
      }
      scf.yield %r2 : i64
    }
    return %r : i64
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c13 = arith.constant 13 : index
    %c17 = arith.constant 17 : index
    %c997 = arith.constant 997 : index
    %c1200 = arith.constant 1200 : index
    %c3000 = arith.constant 3000 : index
    %z = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %garbage = arith.constant 12345 : i32
    %quarter = arith.constant 0.25 : f32
    %two = arith.constant 2.0 : f32
    %zerof = arith.constant 0.0 : f32
    %nan = arith.constant 0x7FC00000 : f32
    %scores = memref.alloc() : memref<3000x5xf32>
    // scores[t, e] = ((7t + 13e) mod 17) / 4 - 2: -2 .. 2 in steps of 1/4; 0 is -0.0 at odd
    // t; NaN at expert 2 for every 997th token.
    scf.for %t = %c0 to %c3000 step %c1 {
      scf.for %e = %c0 to %c5 step %c1 {
        %t7 = arith.muli %t, %c7 : index
        %e13 = arith.muli %e, %c13 : index
        %s0 = arith.addi %t7, %e13 : index
        %s1 = arith.remui %s0, %c17 : index
        %si = arith.index_cast %s1 : index to i32
        %sf = arith.sitofp %si : i32 to f32
        %q = arith.mulf %sf, %quarter : f32
        %v0 = arith.subf %q, %two : f32
        %isZero = arith.cmpf oeq, %v0, %zerof : f32
        %todd = arith.remui %t, %c2 : index
        %odd = arith.cmpi eq, %todd, %c1 : index
        %negZero = arith.andi %isZero, %odd : i1
        %nz = arith.negf %zerof : f32
        %v1 = arith.select %negZero, %nz, %v0 : f32
        %tm = arith.remui %t, %c997 : index
        %e2 = arith.cmpi eq, %e, %c2 : index
        %t0 = arith.cmpi eq, %tm, %c0 : index
        %isNan = arith.andi %e2, %t0 : i1
        %v = arith.select %isNan, %nan, %v1 : f32
        memref.store %v, %scores[%t, %e] : memref<3000x5xf32>
      }
    }
    %taken = memref.alloc() : memref<3000xi32>
    %slots = memref.alloc() : memref<3000x2xi32>
    %chosen = memref.alloc() : memref<3000x2xi32>
    %choices = memref.alloc() : memref<5x1200xi32>
    %wantTaken = memref.alloc() : memref<3000xi32>
    %wantSlots = memref.alloc() : memref<3000x2xi32>
    %wantChosen = memref.alloc() : memref<3000x2xi32>
    %wantChoices = memref.alloc() : memref<5x1200xi32>
    scf.for %t = %c0 to %c3000 step %c1 {
      memref.store %garbage, %taken[%t] : memref<3000xi32>
      scf.for %j = %c0 to %c2 step %c1 {
        memref.store %garbage, %slots[%t, %j] : memref<3000x2xi32>
        memref.store %garbage, %chosen[%t, %j] : memref<3000x2xi32>
      }
    }
    scf.for %e = %c0 to %c5 step %c1 {
      scf.for %p = %c0 to %c1200 step %c1 {
        memref.store %garbage, %choices[%e, %p] : memref<5x1200xi32>
      }
    }
    call @route(%taken, %slots, %chosen, %scores, %choices) : (memref<3000xi32>, memref<3000x2xi32>, memref<3000x2xi32>, memref<3000x5xf32>, memref<5x1200xi32>) -> ()
    call @reference(%wantTaken, %wantSlots, %wantChosen, %scores, %wantChoices) : (memref<3000xi32>, memref<3000x2xi32>, memref<3000x2xi32>, memref<3000x5xf32>, memref<5x1200xi32>) -> ()
    // The value expert 4 took last (its threshold), and how many tokens have it there.
    %c1199 = arith.constant 1199 : index
    %lastChoice = memref.load %wantChoices[%c4, %c1199] : memref<5x1200xi32>
    %lastIdx = arith.index_cast %lastChoice : i32 to index
    %lastToken = arith.divui %lastIdx, %c2 : index
    %theta = memref.load %scores[%lastToken, %c4] : memref<3000x5xf32>
    %nt = scf.for %t = %c0 to %c3000 step %c1 iter_args(%acc = %z) -> i64 {
      %v = memref.load %scores[%t, %c4] : memref<3000x5xf32>
      %vb = arith.bitcast %v : f32 to i32
      %tb = arith.bitcast %theta : f32 to i32
      %eq = arith.cmpi eq, %vb, %tb : i32
      %inc = arith.select %eq, %one, %z : i64
      %s = arith.addi %acc, %inc : i64
      scf.yield %s : i64
    }
    %s2 = memref.cast %slots : memref<3000x2xi32> to memref<?x?xi32>
    %ws2 = memref.cast %wantSlots : memref<3000x2xi32> to memref<?x?xi32>
    %ch2 = memref.cast %chosen : memref<3000x2xi32> to memref<?x?xi32>
    %wch2 = memref.cast %wantChosen : memref<3000x2xi32> to memref<?x?xi32>
    %cs2 = memref.cast %choices : memref<5x1200xi32> to memref<?x?xi32>
    %wcs2 = memref.cast %wantChoices : memref<5x1200xi32> to memref<?x?xi32>
    %m0 = call @differ2(%s2, %ws2) : (memref<?x?xi32>, memref<?x?xi32>) -> i64
    %m1 = call @differ2(%ch2, %wch2) : (memref<?x?xi32>, memref<?x?xi32>) -> i64
    %m2 = call @differ2(%cs2, %wcs2) : (memref<?x?xi32>, memref<?x?xi32>) -> i64
    %m3 = scf.for %t = %c0 to %c3000 step %c1 iter_args(%acc = %z) -> i64 {
      %x = memref.load %taken[%t] : memref<3000xi32>
      %y = memref.load %wantTaken[%t] : memref<3000xi32>
      %ne = arith.cmpi ne, %x, %y : i32
      %inc = arith.select %ne, %one, %z : i64
      %s = arith.addi %acc, %inc : i64
      scf.yield %s : i64
    }
    %m01 = arith.addi %m0, %m1 : i64
    %m23 = arith.addi %m2, %m3 : i64
    %m = arith.addi %m01, %m23 : i64
    %p0 = llvm.mlir.addressof @ties : !llvm.ptr
    call @printString(%p0) : (!llvm.ptr) -> ()
    call @printI64(%nt) : (i64) -> ()
    call @printNewline() : () -> ()
    %p1 = llvm.mlir.addressof @mismatches : !llvm.ptr
    call @printString(%p1) : (!llvm.ptr) -> ()
    call @printI64(%m) : (i64) -> ()
    call @printNewline() : () -> ()
    return
  }
}
