//===- StepTypes.td - tensor type constraints of `step` ----*- tablegen -*-===//
//
// `step` uses MLIR's builtin ranked tensor type; this file names the element types it accepts.
//
//===----------------------------------------------------------------------===//
#ifndef STEP_TYPES_TD
#define STEP_TYPES_TD

include "mlir/IR/CommonTypeConstraints.td"

def Step_FloatElement : AnyTypeOf<[F32, BF16, F16, F64]>;
def Step_IntElement : AnyTypeOf<[I32, I64]>;
def Step_Element : AnyTypeOf<[F32, BF16, F16, F64, I32, I64, I1]>;

def Step_Tensor : RankedTensorOf<[F32, BF16, F16, F64, I32, I64, I1]>;
def Step_NumericTensor : RankedTensorOf<[F32, BF16, F16, F64, I32, I64]>;
def Step_FloatTensor : RankedTensorOf<[F32, BF16, F16, F64]>;
def Step_IndexTensor : RankedTensorOf<[I32, I64]>;
def Step_MaskTensor : RankedTensorOf<[I1]>;
def Step_ScalarFloat : 0DTensorOf<[F32, BF16, F16, F64]>;

#endif // STEP_TYPES_TD
