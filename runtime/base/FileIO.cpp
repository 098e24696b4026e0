//===- FileIO.cpp - whole-file reads and atomic writes -------------------===//
//
// POSIX calls rather than iostreams: they report why something failed (errno), and fsync and
// directory handles have no iostream equivalent.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/FileIO.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stepc::rt {
namespace {

Status errnoStatus(const std::string &path, const char *what, int error) {
  return Status::error(path + ": " + what + ": " + std::strerror(error));
}

// A read()/write() moves at most this much per call on Linux; larger requests are split anyway.
constexpr size_t kMaxIo = size_t{1} << 30;

// Closes a descriptor on scope exit unless released (error paths must not leak it).
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  // Closes now and reports close()'s result: on some file systems a failed write only shows
  // up here.
  int closeNow() {
    int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

Status writeAll(int fd, const std::string &path, const ByteSpan &piece) {
  const char *data = static_cast<const char *>(piece.data);
  size_t left = piece.size;
  while (left > 0) {
    ssize_t written = ::write(fd, data, left < kMaxIo ? left : kMaxIo);
    if (written < 0) {
      if (errno == EINTR) continue;
      return errnoStatus(path, "cannot write", errno);
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
  return {};
}

// The directory holding `path` ("." for a bare file name) and the file's own name.
void splitPath(const std::string &path, std::string &dir, std::string &base) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    dir = ".";
    base = path;
  } else {
    dir = slash == 0 ? "/" : path.substr(0, slash);
    base = path.substr(slash + 1);
  }
}

// Makes the rename of a file in `dir` durable.
Status syncDirectory(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errnoStatus(dir, "cannot open the directory to sync it", errno);
  FdCloser closer(fd);
  // Some file systems cannot sync a directory (EINVAL); the rename is then as durable as that
  // file system makes it, which is not an error of ours.
  if (::fsync(fd) != 0 && errno != EINVAL)
    return errnoStatus(dir, "cannot sync the directory", errno);
  return {};
}

}  // namespace

Status readFile(const std::string &path, std::vector<uint8_t> &out) {
  out.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::error(path + ": no such file");
    return errnoStatus(path, "cannot open", errno);
  }
  FdCloser closer(fd);
  struct stat info;
  if (::fstat(fd, &info) != 0) return errnoStatus(path, "cannot stat", errno);
  if (S_ISDIR(info.st_mode)) return Status::error(path + ": is a directory, not a file");
  // The size is a hint only (files in /proc report 0): read until end of file. The extra chunk
  // lets the final read (the one that sees the end) fit without reallocating the whole file.
  constexpr size_t kChunk = size_t{1} << 20;
  if (S_ISREG(info.st_mode) && info.st_size > 0)
    out.reserve(static_cast<size_t>(info.st_size) + kChunk);
  for (;;) {
    size_t used = out.size();
    out.resize(used + kChunk);
    ssize_t got = ::read(fd, out.data() + used, kChunk);
    if (got < 0) {
      out.resize(used);
      if (errno == EINTR) continue;
      int error = errno;
      out.clear();
      return errnoStatus(path, "cannot read", error);
    }
    out.resize(used + static_cast<size_t>(got));
    if (got == 0) break;
  }
  return {};
}

Status writeFileAtomically(const std::string &path, const std::vector<ByteSpan> &pieces) {
  std::string dir, base;
  splitPath(path, dir, base);
  if (base.empty()) return Status::error(path + ": names a directory, not a file");
  // A hidden name in the target's directory, unique per writer (mkstemp), so concurrent or
  // crashed writers never share a temporary file and never touch `path` before the rename.
  std::string temp = (dir == "/" ? "" : dir) + "/." + base + ".tmp.XXXXXX";
  int fd = ::mkstemp(temp.data());
  if (fd < 0) return errnoStatus(path, "cannot create a temporary file next to it", errno);
  FdCloser closer(fd);
  auto fail = [&](Status status) {
    ::unlink(temp.c_str());
    return status;
  };
  // mkstemp makes the file private (0600); a checkpoint or export is an ordinary file.
  if (::fchmod(fd, 0644) != 0)
    return fail(errnoStatus(path, "cannot set permissions of the temporary file", errno));
  for (const ByteSpan &piece : pieces) {
    Status status = writeAll(fd, path, piece);
    if (!status.ok()) return fail(status);
  }
  if (::fsync(fd) != 0) return fail(errnoStatus(path, "cannot sync the temporary file", errno));
  if (closer.closeNow() != 0)
    return fail(errnoStatus(path, "cannot close the temporary file", errno));
  if (::rename(temp.c_str(), path.c_str()) != 0)
    return fail(errnoStatus(path, "cannot rename the temporary file over it", errno));
  return syncDirectory(dir);
}

}  // namespace stepc::rt
