// Whole-file reads, atomic writes and CRC-32C.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "runtime/base/Checksum.h"
#include "runtime/base/FileIO.h"
#include "tests/unit/runtime/TestFiles.h"

namespace stepc::rt {
namespace {

using testing::FileSizeLimit;
using testing::TempDir;

std::vector<uint8_t> bytesOf(const std::string &text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

TEST(ReadFile, ReadsEveryByte) {
  TempDir tmp;
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 3000000; ++i) bytes.push_back(static_cast<uint8_t>(i * 31 + (i >> 9)));
  testing::writeBytes(tmp.path("f"), bytes);
  std::vector<uint8_t> read;
  Status status = readFile(tmp.path("f"), read);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(read, bytes);
}

TEST(ReadFile, ReadsAnEmptyFile) {
  TempDir tmp;
  testing::writeBytes(tmp.path("empty"), {});
  std::vector<uint8_t> read{1};
  EXPECT_TRUE(readFile(tmp.path("empty"), read).ok());
  EXPECT_TRUE(read.empty());
}

TEST(ReadFile, MissingFileIsNamed) {
  TempDir tmp;
  std::vector<uint8_t> read{1, 2};
  Status status = readFile(tmp.path("nope"), read);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), tmp.path("nope") + ": no such file");
  EXPECT_TRUE(read.empty());
}

TEST(ReadFile, DirectoryIsRefused) {
  TempDir tmp;
  std::vector<uint8_t> read;
  Status status = readFile(tmp.dir(), read);
  EXPECT_EQ(status.message(), tmp.dir() + ": is a directory, not a file");
}

// /proc/self/mem opens as a file, but reading its offset 0 (never mapped) fails with EIO: the
// path a failing disk takes.
TEST(ReadFile, ReadErrorIsReported) {
  std::vector<uint8_t> read;
  Status status = readFile("/proc/self/mem", read);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/proc/self/mem: cannot read: "), std::string::npos)
      << status.message();
  EXPECT_TRUE(read.empty());
}

TEST(WriteFileAtomically, WritesPiecesAndReplacesTheOldFile) {
  TempDir tmp;
  testing::writeText(tmp.path("out"), "old contents, longer than the new ones");
  std::string a = "hello ", b = "world";
  Status status = writeFileAtomically(tmp.path("out"),
                                      {{a.data(), a.size()}, {nullptr, 0}, {b.data(), b.size()}});
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(testing::readBytes(tmp.path("out")), bytesOf("hello world"));
  // Nothing but the target is left in the directory, and it is an ordinary readable file.
  EXPECT_EQ(tmp.list(), std::vector<std::string>{"out"});
  struct stat info;
  ASSERT_EQ(::stat(tmp.path("out").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
}

TEST(WriteFileAtomically, BareFileNameWritesInTheWorkingDirectory) {
  TempDir tmp;
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(::chdir(tmp.dir().c_str()), 0);
  std::string text = "x";
  Status status = writeFileAtomically("bare", {{text.data(), text.size()}});
  ASSERT_EQ(::chdir(cwd), 0);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(testing::readBytes(tmp.path("bare")), bytesOf("x"));
}

TEST(WriteFileAtomically, MissingDirectoryFailsClearly) {
  TempDir tmp;
  std::string text = "x";
  Status status = writeFileAtomically(tmp.path("no/such/dir/f"), {{text.data(), text.size()}});
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot create a temporary file next to it"), std::string::npos)
      << status.message();
}

// A write that fails midway (here: the file-size limit, as with a full disk) leaves the old
// file untouched and no temporary file behind.
TEST(WriteFileAtomically, FailedWriteLeavesTheOldFileIntact) {
  TempDir tmp;
  testing::writeText(tmp.path("out"), "the previous checkpoint");
  std::vector<uint8_t> big(1 << 20, 7);
  Status status;
  {
    FileSizeLimit limit(4096);
    status = writeFileAtomically(tmp.path("out"), {{big.data(), big.size()}});
  }
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find(tmp.path("out") + ": cannot write"), std::string::npos)
      << status.message();
  EXPECT_EQ(testing::readBytes(tmp.path("out")), bytesOf("the previous checkpoint"));
  EXPECT_EQ(tmp.list(), std::vector<std::string>{"out"});
}

// Renaming over a non-empty directory fails after the data was written: the temporary file
// must still be removed.
TEST(WriteFileAtomically, FailedRenameRemovesTheTemporaryFile) {
  TempDir tmp;
  ASSERT_EQ(::mkdir(tmp.path("target").c_str(), 0755), 0);
  testing::writeText(tmp.path("target/inside"), "x");
  std::string text = "new";
  Status status = writeFileAtomically(tmp.path("target"), {{text.data(), text.size()}});
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot rename the temporary file over it"), std::string::npos)
      << status.message();
  EXPECT_EQ(tmp.list(), std::vector<std::string>{"target"});
}

TEST(WriteFileAtomically, PathEndingInSlashIsRefused) {
  TempDir tmp;
  Status status = writeFileAtomically(tmp.dir() + "/", {});
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("names a directory"), std::string::npos);
}

// Known answers: RFC 3720 (iSCSI) appendix B.4 and the usual "123456789" check value.
TEST(Crc32c, KnownAnswers) {
  EXPECT_EQ(crc32c(0, "123456789", 9), 0xe3069283u);
  EXPECT_EQ(crc32c(0, "", 0), 0u);
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xff), up(32), down(32);
  for (int i = 0; i < 32; ++i)
    up[i] = static_cast<uint8_t>(i), down[i] = static_cast<uint8_t>(31 - i);
  EXPECT_EQ(crc32c(0, zeros.data(), 32), 0x8a9136aau);
  EXPECT_EQ(crc32c(0, ones.data(), 32), 0x62a8ab43u);
  EXPECT_EQ(crc32c(0, up.data(), 32), 0x46dd794eu);
  EXPECT_EQ(crc32c(0, down.data(), 32), 0x113fdb5cu);
}

// Summing in pieces of any size, at any alignment, gives the sum of the whole.
TEST(Crc32c, PiecewiseEqualsWhole) {
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
  uint32_t whole = crc32c(0, data.data(), data.size());
  for (size_t split : {0, 1, 5, 8, 13, 500, 999, 1000}) {
    uint32_t crc = crc32c(0, data.data(), split);
    EXPECT_EQ(crc32c(crc, data.data() + split, data.size() - split), whole) << split;
  }
  // Any single flipped bit changes it.
  for (size_t i = 0; i < data.size(); i += 37) {
    data[i] ^= 0x10;
    EXPECT_NE(crc32c(0, data.data(), data.size()), whole);
    data[i] ^= 0x10;
  }
}

}  // namespace
}  // namespace stepc::rt
