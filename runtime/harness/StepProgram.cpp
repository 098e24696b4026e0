//===- StepProgram.cpp - the training step the executable drives ----------===//
#include "runtime/harness/StepProgram.h"


namespace stepc::rt {

StepMetrics emptyMetrics(const ProgramInfo &info) {
  StepMetrics m;
  for (const std::string &name : info.extraMetrics) m.extra.push_back({name, 0.0});
  return m;
}

void setMetric(StepMetrics &metrics, const std::string &name, double value) {
  if (name == "loss") metrics.loss = value;
  else if (name == "lr") metrics.lr = value;
  else if (name == "grad_norm") metrics.gradNorm = value;
  else
    for (auto &[extra, v] : metrics.extra)
      if (extra == name) v = value;
}

}  // namespace stepc::rt
