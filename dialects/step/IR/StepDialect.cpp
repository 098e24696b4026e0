//===- StepDialect.cpp - the `step` dialect ------------------------------===//
#include "dialects/step/IR/StepDialect.h"

#include "dialects/step/IR/StepDialect.cpp.inc"
#include "dialects/step/IR/StepInterfaces.cpp.inc"

namespace stepc::step {

void StepDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/step/IR/StepOps.cpp.inc"
      >();
}

}  // namespace stepc::step
