//===- StepInterfaces.td - op interfaces of `step` ---------*- tablegen -*-===//
#ifndef STEP_INTERFACES_TD
#define STEP_INTERFACES_TD

include "mlir/IR/OpBase.td"

// Ops that declare a named, user-visible tensor of the model: parameters and inputs. The model
// verifier uses it for name uniqueness; `--batch` uses it to find the shapes to rewrite.
def Step_DeclOpInterface : OpInterface<"DeclOpInterface"> {
  let cppNamespace = "::stepc::step";
  let description = [{
    A declaration of a named model tensor whose shape is written in the model file.
  }];
  let methods = [
    InterfaceMethod<"The full name, unique among declarations of its kind in a model.",
      "std::string", "getDeclName">,
    InterfaceMethod<"The shape and dtype written in the model file.",
      "::mlir::RankedTensorType", "getDeclaredType">,
  ];
}

#endif // STEP_INTERFACES_TD
