//===- Linker.cpp - link the emitted object with the runtime --------------===//
#include "compiler/Codegen/LLVMCPU/Linker.h"

#include "llvm/Config/llvm-config.h"

#include <cstdlib>

#include "llvm/ADT/SmallString.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

namespace stepc::codegen {

std::string findRuntimeArchive(const char *argv0, std::string &searched) {
  if (const char *env = std::getenv("STEPC_RUNTIME_ARCHIVE")) {
    searched = std::string("$STEPC_RUNTIME_ARCHIVE (") + env + ")";
    return llvm::sys::fs::exists(env) ? std::string(env) : std::string();
  }
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  llvm::StringRef dir = llvm::sys::path::parent_path(exe);
  std::string candidates[] = {
      exe + ".runfiles/__main__/runtime/libstepc_rt.a",
      (dir + "/../../runtime/libstepc_rt.a").str(),
      (dir + "/../lib/stepc/libstepc_rt.a").str(),
  };
  searched.clear();
  for (const std::string &path : candidates) {
    if (llvm::sys::fs::exists(path)) return path;
    searched += (searched.empty() ? "" : ", ") + path;
  }
  return {};
}

std::string linkExecutable(const std::vector<std::string> &objects,
                           const std::string &runtimeArchive, const std::string &output) {
  std::string driver;
  if (const char *cxx = std::getenv("CXX"); cxx && *cxx) {
    driver = cxx;
  } else {
    for (const char *name : {"c++", "g++", "clang++"})
      if (auto found = llvm::sys::findProgramByName(name)) {
        driver = *found;
        break;
      }
  }
  if (driver.empty())
    return "no C++ compiler driver to link with (set $CXX, or install g++: "
           "apt-get install g++)";
  if (driver.find('/') == std::string::npos)
    if (auto found = llvm::sys::findProgramByName(driver)) driver = *found;
  std::string temporary = output + ".linking";
  // GEMMs: OpenBLAS (pthreads), linked statically so the executable runs without it.
  std::string blas = "-lopenblas";
  for (const char *path : {"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.a",
                           "/usr/lib/x86_64-linux-gnu/libopenblas.a"})
    if (llvm::sys::fs::exists(path)) {
      blas = path;
      break;
    }
  std::vector<llvm::StringRef> args = {driver, "-o", temporary};
  // LLVM's lld links the static OpenBLAS about 4x faster than the default GNU ld (0.27 vs
  // 1.14 s for byte_lm): the pinned LLVM's first, else any on the PATH, else the driver's
  // default. The driver finds `ld.lld` in the -B directory.
  std::string lldDir;
  std::string pinned = "/usr/lib/llvm-" + std::to_string(LLVM_VERSION_MAJOR) + "/bin/ld.lld";
  if (llvm::sys::fs::can_execute(pinned)) {
    lldDir = llvm::sys::path::parent_path(pinned).str();
  } else if (auto found = llvm::sys::findProgramByName("ld.lld")) {
    lldDir = llvm::sys::path::parent_path(*found).str();
  }
  std::string lldPrefix = "-B" + lldDir + "/";
  if (!lldDir.empty()) {
    args.push_back("-fuse-ld=lld");
    args.push_back(lldPrefix);
  }
  for (const std::string &object : objects) args.push_back(object);
  for (llvm::StringRef a : {llvm::StringRef(runtimeArchive), llvm::StringRef(blas),
                            llvm::StringRef("-lmvec"), llvm::StringRef("-lm"),
                            llvm::StringRef("-lpthread"),
                            llvm::StringRef("-ldl")})
    args.push_back(a);
  llvm::SmallString<128> log;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("stepc-link", "log", log))
    return "cannot create a temporary file: " + ec.message();
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(driver, args, std::nullopt, redirects, 0, 0, &error);
  std::string message;
  if (rc != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    message = "linking failed (" + driver + " exited with " + std::to_string(rc) +
              (error.empty() ? "" : ": " + error) + ")";
    if (text) message += ":\n" + (*text)->getBuffer().str();
    llvm::sys::fs::remove(temporary);
  } else if (std::error_code ec = llvm::sys::fs::rename(temporary, output)) {
    message = "cannot write '" + output + "': " + ec.message();
    llvm::sys::fs::remove(temporary);
  }
  llvm::sys::fs::remove(log);
  return message;
}

}  // namespace stepc::codegen
