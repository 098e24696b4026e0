//===- Passes.td - autodiff passes -------------------------*- tablegen -*-===//
#ifndef STEPC_AUTODIFF_PASSES_TD
#define STEPC_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def Differentiate : Pass<"step-differentiate", "mlir::ModuleOp"> {
  let summary = "Appends reverse-mode gradients to functions marked `step.differentiate`";
  let description = [{
    For every `func.func` with the unit attribute `step.differentiate`, whose first result is a
    rank-0 float loss, appends the gradient of that loss with respect to each float argument as
    extra results, computed in step ops by reverse mode (see Autodiff.h). Gradients that no
    result needs are pruned. Used to test VJPs against finite differences and to inspect them.

    Before:
    ```mlir
    func.func @f(%x: tensor<3xf32>) -> tensor<f32> attributes {step.differentiate} {
      %0 = step.mul %x, %x : tensor<3xf32>, tensor<3xf32>
      %1 = step.sum %0 {axes = [0]} : tensor<3xf32>
      return %1 : tensor<f32>
    }
    ```
    After: `@f(%x) -> (tensor<f32>, tensor<3xf32>)` returning the loss and 2·x.
  }];
  let dependentDialects = ["::stepc::step::StepDialect"];
}

#endif // STEPC_AUTODIFF_PASSES_TD
