// Helpers for runtime tests that touch files: a private temporary directory, removed with
// everything in it when the test ends, and whole-file byte I/O that fails the test loudly.
#ifndef STEPC_TESTS_UNIT_RUNTIME_TESTFILES_H
#define STEPC_TESTS_UNIT_RUNTIME_TESTFILES_H

#include <dirent.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace stepc::rt::testing {

class TempDir {
 public:
  TempDir() {
    const char *base = std::getenv("TEST_TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/stepc_rt_XXXXXX";
    if (::mkdtemp(pattern.data())) dir_ = pattern;
    EXPECT_FALSE(dir_.empty()) << "cannot create a temporary directory";
  }
  ~TempDir() {
    if (!dir_.empty())
      ::nftw(
          dir_.c_str(),
          [](const char *p, const struct stat *, int, struct FTW *) { return ::remove(p); }, 16,
          FTW_DEPTH | FTW_PHYS);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &dir() const { return dir_; }
  std::string path(const std::string &name) const { return dir_ + "/" + name; }

  // The names in the directory (hidden ones included, "." and ".." not), sorted.
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    if (DIR *d = ::opendir(dir_.c_str())) {
      while (struct dirent *e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
      }
      ::closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string dir_;
};

inline void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  ASSERT_EQ(std::fclose(f), 0);
}

inline void writeText(const std::string &path, const std::string &text) {
  writeBytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

inline std::vector<uint8_t> readBytes(const std::string &path) {
  std::vector<uint8_t> bytes;
  FILE *f = std::fopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  if (!f) return bytes;
  int c;
  while ((c = std::fgetc(f)) != EOF) bytes.push_back(static_cast<uint8_t>(c));
  std::fclose(f);
  return bytes;
}

inline void appendLe32(std::vector<uint8_t> &out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// While alive, the process cannot grow any file beyond `bytes`: writes past it fail with EFBIG
// (SIGXFSZ ignored). It makes a write fail for real midway, even for root, to test that a
// failed write leaves the old file intact.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    oldHandler_ = std::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old_);
    struct rlimit limit = old_;
    limit.rlim_cur = bytes;
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, oldHandler_);
  }

 private:
  struct rlimit old_;
  void (*oldHandler_)(int);
};

}  // namespace stepc::rt::testing

#endif  // STEPC_TESTS_UNIT_RUNTIME_TESTFILES_H
