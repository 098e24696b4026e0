//===- Session.cpp - the process's CUDA device, context and stream --------===//
#include "runtime/hal/cuda/Session.h"

namespace stepc::rt::cuda {
namespace {

Loader *gLoader = nullptr;
int gOrdinal = 0;
std::unique_ptr<Session> *gSession() {
  static std::unique_ptr<Session> session;
  return &session;
}

}  // namespace

Session &Session::get() {
  std::unique_ptr<Session> &session = *gSession();
  if (!session) session.reset(new Session(gLoader ? *gLoader : systemLoader()));
  return *session;
}

void Session::useDevice(int ordinal) { gOrdinal = ordinal; }

void Session::useLoaderForTesting(Loader *loader) {
  gLoader = loader;
  gSession()->reset();
}

Session::Session(Loader &loader) {
  status_ = Driver::load(loader, driver_);
  if (!status_.ok()) return;
  int count = 0;
  status_ = driver_->deviceCount(count);
  if (status_.ok() && count == 0) status_ = Status::error("no CUDA device: the driver reports 0 GPUs");
  if (status_.ok() && gOrdinal >= count)
    status_ = Status::error("this rank's GPU is device " + std::to_string(gOrdinal) +
                            " (its local rank), but the driver reports " + std::to_string(count) +
                            " GPU(s): start at most one rank per GPU on each node");
  if (status_.ok()) status_ = driver_->describe(gOrdinal, device_);
  const Api &api = driver_->api();
  CUdevice device = 0;
  if (status_.ok()) status_ = driver_->check(api.cuDeviceGet(&device, gOrdinal), "cuDeviceGet");
  if (status_.ok())
    status_ = driver_->check(api.cuDevicePrimaryCtxRetain(&context_, device),
                             "cuDevicePrimaryCtxRetain");
  if (status_.ok()) status_ = driver_->check(api.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  if (status_.ok()) status_ = driver_->check(api.cuStreamCreate(&stream_, 0), "cuStreamCreate");
}

void Session::recordError(Status error) {
  if (pending_.ok()) pending_ = std::move(error);
}

Status Session::takeError() {
  Status error = pending_;
  pending_ = Status();
  return error;
}

}  // namespace stepc::rt::cuda
