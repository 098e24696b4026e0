//===- fake_nccl_library.h - where the tests' fake NCCL is -*- C++ -*-===//
//
// The fake libnccl (fake_nccl.cpp) lies beside the test binary (bazel-bin, or its runfiles);
// tests open it as the runtime would open NCCL, and reach its test hooks by name.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_TESTS_UNIT_RUNTIME_FAKE_NCCL_LIBRARY_H
#define STEPC_TESTS_UNIT_RUNTIME_FAKE_NCCL_LIBRARY_H

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <string>

namespace stepc::rt::cuda {

inline std::string fakeNcclLibrary() {
  char path[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  std::string self(path, n > 0 ? static_cast<size_t>(n) : 0);
  return self.substr(0, self.rfind('/') + 1) + "libfake_nccl.so";
}

// A function of the fake library (fake_nccl_last_call, ...), or null.
template <typename F>
F fakeNcclHook(const char *name) {
  void *library = dlopen(fakeNcclLibrary().c_str(), RTLD_NOW | RTLD_LOCAL);
  return library ? reinterpret_cast<F>(dlsym(library, name)) : nullptr;
}

}  // namespace stepc::rt::cuda

#endif  // STEPC_TESTS_UNIT_RUNTIME_FAKE_NCCL_LIBRARY_H
