//===- Session.h - the process's CUDA device, context and stream -*- C++ -*-===//
//
// What a CUDA step runs in: the driver (Driver.h), the primary context of device 0 (or the
// one useDevice names) made current, and one stream every kernel launch and library call of the step goes to, in
// program order. Opened on first use; a failure (no driver, no device) is kept and returned
// to every caller, so the step refuses with that one line instead of crashing.
//
// The host plan that `stepc compile --target=cuda` lowers calls MLIR's GPU runtime ABI
// (mgpuModuleLoad, mgpuLaunchKernel, ...), implemented on this session in MlirGpuAbi.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_CUDA_SESSION_H
#define STEPC_RUNTIME_CUDA_SESSION_H

#include <memory>

#include "runtime/hal/cuda/Driver.h"

namespace stepc::rt::cuda {

class Session {
 public:
  /// The process's session, opened with `loader` the first time (systemLoader() unless a test
  /// set another with useLoaderForTesting).
  static Session &get();
  /// The device the session opens (default 0): a data-parallel rank's local rank, set before
  /// the first get().
  static void useDevice(int ordinal);
  /// Replaces the loader and forgets the current session (tests only).
  static void useLoaderForTesting(Loader *loader);

  /// Ok once the driver, device 0, its context and the stream are ready.
  const Status &status() const { return status_; }
  const Driver &driver() const { return *driver_; }
  CUstream stream() const { return stream_; }
  const DeviceInfo &device() const { return device_; }

  /// The first failure of an asynchronous call (a launch), kept until taken: launches return
  /// nothing, so the step checks this after its calls.
  void recordError(Status error);
  Status takeError();

 private:
  explicit Session(Loader &loader);
  Status status_;
  std::unique_ptr<Driver> driver_;
  DeviceInfo device_;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  Status pending_;
};

}  // namespace stepc::rt::cuda

#endif  // STEPC_RUNTIME_CUDA_SESSION_H
