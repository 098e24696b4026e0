// Checkpoints: round trips, the documented safetensors layout, refusal of other models,
// damaged, truncated and unknown-version files, and atomic replacement.
#include "runtime/formats/Checkpoint.h"

#include <gtest/gtest.h>

#include <cstring>

#include "runtime/formats/Safetensors.h"
#include "tests/unit/runtime/TestFiles.h"

namespace stepc::rt {
namespace {

using testing::FileSizeLimit;
using testing::TempDir;

// A small model's state: two parameters and Adam's two slots for each, filled with distinct
// values derived from `salt`.
struct ModelState {
  std::vector<float> w, b, mw, mb, vw, vb;
  std::vector<int32_t> counter;  // a non-float tensor, to show dtypes are kept

  explicit ModelState(float salt, size_t wSize = 6)
      : w(wSize), b(3), mw(wSize), mb(3), vw(wSize), vb(3), counter(1) {
    float x = salt;
    for (auto *v : {&w, &b, &mw, &mb, &vw, &vb})
      for (float &e : *v) e = (x += 0.25f);
    counter[0] = static_cast<int32_t>(salt * 100);
  }

  std::vector<CheckpointTensor> tensors() {
    int64_t n = static_cast<int64_t>(w.size());
    return {{"", "layer.w", DType::kF32, {n / 3, 3}, w.data()},
            {"", "layer.b", DType::kF32, {3}, b.data()},
            {"m", "layer.w", DType::kF32, {n / 3, 3}, mw.data()},
            {"m", "layer.b", DType::kF32, {3}, mb.data()},
            {"v", "layer.w", DType::kF32, {n / 3, 3}, vw.data()},
            {"v", "layer.b", DType::kF32, {3}, vb.data()},
            {"", "counter", DType::kI32, {}, counter.data()}};
  }

  bool operator==(const ModelState &o) const {
    return w == o.w && b == o.b && mw == o.mw && mb == o.mb && vw == o.vw && vb == o.vb &&
           counter == o.counter;
  }
};

CheckpointInfo sampleInfo(uint64_t step = 1234) {
  CheckpointInfo info;
  info.fingerprint = "byte_lm_residual:3f2a9c";
  info.step = step;
  info.seed = UINT64_MAX;
  info.data = {9, step + 1, "bytes:1000:crc32c=0123abcd"};
  return info;
}

void writeOk(const std::string &path, ModelState &state, const CheckpointInfo &info) {
  Status status = writeCheckpoint(path, info, state.tensors());
  ASSERT_TRUE(status.ok()) << status.message();
}

std::string readError(const std::string &path, const std::string &fingerprint = "byte_lm_residual:3f2a9c") {
  ModelState into(0);
  ModelState untouched(0);
  CheckpointInfo info;
  info.step = 77;
  Status status = readCheckpoint(path, fingerprint, into.tensors(), info);
  EXPECT_FALSE(status.ok());
  // A refused checkpoint changes nothing.
  EXPECT_TRUE(into == untouched);
  EXPECT_EQ(info.step, 77u);
  return status.message();
}

TEST(Checkpoint, RoundTripsTensorsAndInfo) {
  TempDir tmp;
  ModelState saved(1.0f);
  writeOk(tmp.path("ckpt"), saved, sampleInfo());
  ModelState loaded(0.0f);
  CheckpointInfo info;
  Status status = readCheckpoint(tmp.path("ckpt"), "byte_lm_residual:3f2a9c", loaded.tensors(), info);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(loaded == saved);
  EXPECT_EQ(info.fingerprint, "byte_lm_residual:3f2a9c");
  EXPECT_EQ(info.step, 1234u);
  EXPECT_EQ(info.seed, UINT64_MAX);
  EXPECT_EQ(info.data.seed, 9u);
  EXPECT_EQ(info.data.step, 1235u);
  EXPECT_EQ(info.data.source, "bytes:1000:crc32c=0123abcd");
  CheckpointInfo only;
  ASSERT_TRUE(readCheckpointInfo(tmp.path("ckpt"), only).ok());
  EXPECT_EQ(only.step, 1234u);
  EXPECT_EQ(only.fingerprint, "byte_lm_residual:3f2a9c");
  EXPECT_EQ(tmp.list(), std::vector<std::string>{"ckpt"});
}

TEST(Checkpoint, RoundTripsMegabytes) {
  TempDir tmp;
  ModelState saved(2.0f, 3 << 18);
  writeOk(tmp.path("big"), saved, sampleInfo());
  ModelState loaded(0.0f, 3 << 18);
  CheckpointInfo info;
  ASSERT_TRUE(readCheckpoint(tmp.path("big"), "byte_lm_residual:3f2a9c", loaded.tensors(), info).ok());
  EXPECT_TRUE(loaded == saved);
}

// The documented layout: a safetensors file PyTorch can open, tensors named by role.
TEST(Checkpoint, IsASafetensorsFileWithTheDocumentedNames) {
  TempDir tmp;
  ModelState saved(1.0f);
  writeOk(tmp.path("ckpt"), saved, sampleInfo());
  SafetensorsFile file;
  ASSERT_TRUE(SafetensorsFile::read(tmp.path("ckpt"), file).ok());
  std::vector<std::string> names;
  for (const SafetensorsEntry &entry : file.tensors()) names.push_back(entry.name);
  EXPECT_EQ(names, (std::vector<std::string>{"param/counter", "param/layer.b", "param/layer.w",
                                             "state/m/layer.b", "state/m/layer.w",
                                             "state/v/layer.b", "state/v/layer.w"}));
  std::vector<float> w;
  ASSERT_TRUE(file.readFloats("param/layer.w", w).ok());
  EXPECT_EQ(w, saved.w);
  const auto &meta = file.metadata();
  EXPECT_EQ(meta.at("stepc.format"), "checkpoint");
  EXPECT_EQ(meta.at("stepc.version"), "1");
  EXPECT_EQ(meta.at("stepc.fingerprint"), "byte_lm_residual:3f2a9c");
  EXPECT_EQ(meta.at("stepc.step"), "1234");
  EXPECT_EQ(meta.at("stepc.seed"), "18446744073709551615");
  EXPECT_EQ(meta.at("stepc.data.seed"), "9");
  EXPECT_EQ(meta.at("stepc.data.step"), "1235");
  EXPECT_EQ(meta.at("stepc.data.source"), "bytes:1000:crc32c=0123abcd");
  EXPECT_EQ(meta.at("stepc.checksum").size(), 8u);
  EXPECT_EQ(checkpointTensorName("", "w"), "param/w");
  EXPECT_EQ(checkpointTensorName("m", "w"), "state/m/w");
}

TEST(Checkpoint, AnotherModelsCheckpointIsRefused) {
  TempDir tmp;
  ModelState saved(1.0f);
  writeOk(tmp.path("ckpt"), saved, sampleInfo());
  EXPECT_EQ(readError(tmp.path("ckpt"), "gpt2:77"),
            tmp.path("ckpt") +
                ": checkpoint of another model: its fingerprint is "
                "'byte_lm_residual:3f2a9c', this model's is 'gpt2:77'");
}

TEST(Checkpoint, TensorsMustMatchTheModel) {
  TempDir tmp;
  ModelState saved(1.0f);
  std::vector<CheckpointTensor> tensors = saved.tensors();
  std::string p = tmp.path("ckpt") + ": ";
  auto writeAndRead = [&](std::vector<CheckpointTensor> written) {
    EXPECT_TRUE(writeCheckpoint(tmp.path("ckpt"), sampleInfo(), written).ok());
    return readError(tmp.path("ckpt"));
  };
  EXPECT_EQ(writeAndRead({tensors.begin(), tensors.end() - 1}),
            p + "checkpoint lacks the parameter 'counter'");
  EXPECT_EQ(writeAndRead({tensors[0], tensors[1], tensors[2], tensors[4], tensors[5], tensors[6]}),
            p + "checkpoint lacks the optimizer state 'm' of parameter 'layer.b'");
  std::vector<CheckpointTensor> extra = tensors;
  extra.push_back({"", "layer.extra", DType::kF32, {1}, saved.b.data()});
  EXPECT_EQ(writeAndRead(extra),
            p + "checkpoint holds tensor 'param/layer.extra', which this model does not have");
  std::vector<CheckpointTensor> reshaped = tensors;
  reshaped[0].shape = {3, 2};
  EXPECT_EQ(writeAndRead(reshaped),
            p + "parameter 'layer.w' is [3, 2] F32 in the checkpoint, [2, 3] F32 in this model");
  std::vector<CheckpointTensor> retyped = tensors;
  retyped[6].dtype = DType::kU32;
  EXPECT_EQ(writeAndRead(retyped),
            p + "parameter 'counter' is [] U32 in the checkpoint, [] I32 in this model");
}

// A flipped byte anywhere (header, metadata, padding, checksum or data) is caught: as
// malformed if it breaks the format, by the checksum if the file still parses.
TEST(Checkpoint, EveryCorruptedByteIsDetected) {
  TempDir tmp;
  ModelState saved(1.0f);
  writeOk(tmp.path("good"), saved, sampleInfo());
  std::vector<uint8_t> good = testing::readBytes(tmp.path("good"));
  uint64_t headerBytes;
  std::memcpy(&headerBytes, good.data(), 8);
  size_t dataStart = 8 + headerBytes;
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x04;
    testing::writeBytes(tmp.path("bad"), bad);
    std::string message = readError(tmp.path("bad"));
    // Damage to the data (the weights) never shows in the format: only the checksum sees it.
    if (i >= dataStart) {
      EXPECT_EQ(
          message.rfind(tmp.path("bad") + ": damaged checkpoint: checksum mismatch (stored ", 0),
          0u)
          << i << ": " << message;
    }
  }
}

TEST(Checkpoint, EveryTruncationIsDetected) {
  TempDir tmp;
  ModelState saved(1.0f);
  writeOk(tmp.path("good"), saved, sampleInfo());
  std::vector<uint8_t> good = testing::readBytes(tmp.path("good"));
  for (size_t n = 0; n < good.size(); ++n) {
    testing::writeBytes(tmp.path("cut"), std::vector<uint8_t>(good.begin(), good.begin() + n));
    readError(tmp.path("cut"));
  }
  testing::writeBytes(tmp.path("cut"), std::vector<uint8_t>(good.begin(), good.end() - 4));
  EXPECT_EQ(readError(tmp.path("cut")),
            "not a readable checkpoint: " + tmp.path("cut") + ": the tensors cover " +
                std::to_string(6 * 4 * 3 + 3 * 4 * 3 + 4) + " bytes of data but the file holds " +
                std::to_string(6 * 4 * 3 + 3 * 4 * 3) + " (truncated?)");
  EXPECT_EQ(readError(tmp.path("missing")), tmp.path("missing") + ": no such file");
}

TEST(Checkpoint, OnlyKnownFormatVersionsAreRead) {
  TempDir tmp;
  float x = 1;
  ASSERT_TRUE(writeSafetensors(tmp.path("v2"), {{"param/x", DType::kF32, {1}, &x}},
                               {{"stepc.format", "checkpoint"}, {"stepc.version", "2"}})
                  .ok());
  EXPECT_EQ(readError(tmp.path("v2")),
            tmp.path("v2") +
                ": checkpoint format version '2' is not supported (this runtime "
                "reads version 1)");
  ASSERT_TRUE(
      writeSafetensors(tmp.path("plain"), {{"x", DType::kF32, {1}, &x}}, {{"format", "pt"}}).ok());
  EXPECT_EQ(readError(tmp.path("plain")),
            tmp.path("plain") +
                ": not a stepc checkpoint (its safetensors metadata lacks "
                "stepc.format = \"checkpoint\")");
  CheckpointInfo info;
  EXPECT_FALSE(readCheckpointInfo(tmp.path("plain"), info).ok());
}

TEST(Checkpoint, ANewCheckpointReplacesTheOld) {
  TempDir tmp;
  ModelState first(1.0f), second(5.0f);
  writeOk(tmp.path("ckpt"), first, sampleInfo(100));
  writeOk(tmp.path("ckpt"), second, sampleInfo(200));
  ModelState loaded(0.0f);
  CheckpointInfo info;
  ASSERT_TRUE(readCheckpoint(tmp.path("ckpt"), "byte_lm_residual:3f2a9c", loaded.tensors(), info).ok());
  EXPECT_TRUE(loaded == second);
  EXPECT_EQ(info.step, 200u);
  EXPECT_EQ(tmp.list(), std::vector<std::string>{"ckpt"});
}

// A write that fails midway (the file-size limit stands in for a full disk) leaves the previous
// checkpoint readable and unchanged, and no temporary file behind.
TEST(Checkpoint, AFailedWriteLeavesTheOldCheckpointIntact) {
  TempDir tmp;
  ModelState old(1.0f);
  writeOk(tmp.path("ckpt"), old, sampleInfo(100));
  std::vector<uint8_t> before = testing::readBytes(tmp.path("ckpt"));
  ModelState big(5.0f, 3 << 16);
  Status status;
  {
    FileSizeLimit limit(before.size() + 100);
    status = writeCheckpoint(tmp.path("ckpt"), sampleInfo(200), big.tensors());
  }
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find(tmp.path("ckpt") + ": cannot write: "), std::string::npos)
      << status.message();
  EXPECT_EQ(testing::readBytes(tmp.path("ckpt")), before);
  EXPECT_EQ(tmp.list(), std::vector<std::string>{"ckpt"});
  ModelState loaded(0.0f);
  CheckpointInfo info;
  ASSERT_TRUE(readCheckpoint(tmp.path("ckpt"), "byte_lm_residual:3f2a9c", loaded.tensors(), info).ok());
  EXPECT_TRUE(loaded == old);
  EXPECT_EQ(info.step, 100u);
}

TEST(Checkpoint, RefusesToWriteBadInput) {
  TempDir tmp;
  ModelState state(1.0f);
  std::string p = tmp.path("ckpt") + ": ";
  CheckpointInfo noFingerprint = sampleInfo();
  noFingerprint.fingerprint.clear();
  EXPECT_EQ(writeCheckpoint(tmp.path("ckpt"), noFingerprint, state.tensors()).message(),
            p + "a checkpoint needs a model fingerprint");
  std::vector<CheckpointTensor> tensors = state.tensors();
  tensors[2].slot = "m/x";
  EXPECT_EQ(writeCheckpoint(tmp.path("ckpt"), sampleInfo(), tensors).message(),
            p + "optimizer-state slot 'm/x' contains '/'");
  tensors = state.tensors();
  tensors.push_back(tensors[0]);
  EXPECT_EQ(writeCheckpoint(tmp.path("ckpt"), sampleInfo(), tensors).message(),
            p + "tensor name 'param/layer.w' appears twice");
  tensors = state.tensors();
  tensors[0].name.clear();
  EXPECT_EQ(writeCheckpoint(tmp.path("ckpt"), sampleInfo(), tensors).message(),
            p + "a checkpoint tensor has an empty name");
  EXPECT_FALSE(writeCheckpoint(tmp.path("no/dir/ckpt"), sampleInfo(), state.tensors()).ok());
  EXPECT_TRUE(tmp.list().empty());
}

}  // namespace
}  // namespace stepc::rt
