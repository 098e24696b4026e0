//===- Checkpoint.cpp - training checkpoints -----------------------------===//
#include "runtime/formats/Checkpoint.h"

#include <cstdio>
#include <cstring>
#include <set>

#include "runtime/base/Checksum.h"
#include "runtime/base/FileIO.h"

namespace stepc::rt {
namespace {

constexpr const char *kFormatKey = "stepc.format";
constexpr const char *kFormat = "checkpoint";
constexpr const char *kVersionKey = "stepc.version";
constexpr const char *kFingerprintKey = "stepc.fingerprint";
constexpr const char *kTrainingKey = "stepc.training";
constexpr const char *kStepKey = "stepc.step";
constexpr const char *kSeedKey = "stepc.seed";
constexpr const char *kDataSeedKey = "stepc.data.seed";
constexpr const char *kDataStepKey = "stepc.data.step";
constexpr const char *kDataSourceKey = "stepc.data.source";
constexpr const char *kChecksumKey = "stepc.checksum";
constexpr size_t kChecksumDigits = 8;

// The checksum's value sits right after this text in the compact header JSON the writer
// produces. A JSON string cannot contain it unescaped, so it only occurs as the metadata member.
const std::string &checksumPrefix() {
  static const std::string kPrefix = std::string("\"") + kChecksumKey + "\":\"";
  return kPrefix;
}

// The offset of the checksum digits in the header text [8, 8 + headerBytes) of a safetensors
// image, or npos if the prefix is absent, repeated or not followed by 8 characters and '"'.
size_t findChecksumDigits(const uint8_t *image, size_t imageSize) {
  if (imageSize < 8) return std::string::npos;
  uint64_t headerBytes;
  std::memcpy(&headerBytes, image, 8);
  if (headerBytes > imageSize - 8) return std::string::npos;
  std::string_view header(reinterpret_cast<const char *>(image) + 8, headerBytes);
  size_t at = header.find(checksumPrefix());
  if (at == std::string_view::npos ||
      header.find(checksumPrefix(), at + 1) != std::string_view::npos)
    return std::string::npos;
  size_t digits = at + checksumPrefix().size();
  if (digits + kChecksumDigits >= header.size() || header[digits + kChecksumDigits] != '"')
    return std::string::npos;
  return 8 + digits;
}

std::string hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "%08x", value);
  return text;
}

bool parseUint64(const std::string &text, uint64_t &out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - d) / 10) return false;
    value = value * 10 + d;
  }
  out = value;
  return true;
}

// Reads, parses and checks a checkpoint: format, version, checksum, info fields.
Status loadCheckpoint(const std::string &path, SafetensorsFile &file, CheckpointInfo &info) {
  std::vector<uint8_t> bytes;
  Status status = readFile(path, bytes);
  if (!status.ok()) return status;
  // Sum the file now with the digits zeroed, as the writer did; parsing takes the bytes.
  size_t digits = findChecksumDigits(bytes.data(), bytes.size());
  std::string stored;
  uint32_t computed = 0;
  if (digits != std::string::npos) {
    stored.assign(reinterpret_cast<const char *>(bytes.data()) + digits, kChecksumDigits);
    std::memset(bytes.data() + digits, '0', kChecksumDigits);
    computed = crc32c(0, bytes.data(), bytes.size());
    std::memcpy(bytes.data() + digits, stored.data(), kChecksumDigits);
  }
  status = SafetensorsFile::parse(std::move(bytes), path, file);
  if (!status.ok()) return Status::error("not a readable checkpoint: " + status.message());

  auto fail = [&](const std::string &message) { return Status::error(path + ": " + message); };
  const std::map<std::string, std::string> &meta = file.metadata();
  auto value = [&](const char *key) -> const std::string * {
    auto it = meta.find(key);
    return it == meta.end() ? nullptr : &it->second;
  };
  const std::string *format = value(kFormatKey);
  if (!format || *format != kFormat)
    return fail(
        "not a stepc checkpoint (its safetensors metadata lacks stepc.format = \"checkpoint\")");
  const std::string *version = value(kVersionKey);
  if (!version || *version != std::to_string(kCheckpointVersion))
    return fail("checkpoint format version '" + (version ? *version : std::string("none")) +
                "' is not supported (this runtime reads version " +
                std::to_string(kCheckpointVersion) + ")");
  const std::string *checksum = value(kChecksumKey);
  if (!checksum || digits == std::string::npos || *checksum != stored)
    return fail("damaged checkpoint: the checksum field is missing or was rewritten");
  if (*checksum != hex32(computed))
    return fail("damaged checkpoint: checksum mismatch (stored " + *checksum +
                ", the contents give " + hex32(computed) + ")");

  CheckpointInfo read;
  struct Field {
    const char *key;
    uint64_t *out;
  };
  for (Field field : {Field{kStepKey, &read.step}, Field{kSeedKey, &read.seed},
                      Field{kDataSeedKey, &read.data.seed}, Field{kDataStepKey, &read.data.step}}) {
    const std::string *text = value(field.key);
    if (!text || !parseUint64(*text, *field.out))
      return fail(std::string("damaged checkpoint: ") + field.key +
                  " is missing or not a non-negative integer");
  }
  const std::string *fingerprint = value(kFingerprintKey);
  const std::string *source = value(kDataSourceKey);
  if (!fingerprint || fingerprint->empty() || !source)
    return fail("damaged checkpoint: the fingerprint or data source is missing");
  read.fingerprint = *fingerprint;
  read.data.source = *source;
  if (const std::string *training = value(kTrainingKey)) read.training = *training;
  info = std::move(read);
  return {};
}

std::string describe(const CheckpointTensor &tensor) {
  if (tensor.slot.empty()) return "parameter '" + tensor.name + "'";
  return "optimizer state '" + tensor.slot + "' of parameter '" + tensor.name + "'";
}

}  // namespace

std::string checkpointTensorName(const std::string &slot, const std::string &name) {
  return slot.empty() ? "param/" + name : "state/" + slot + "/" + name;
}

Status writeCheckpoint(const std::string &path, const CheckpointInfo &info,
                       const std::vector<CheckpointTensor> &tensors) {
  auto fail = [&](const std::string &message) { return Status::error(path + ": " + message); };
  if (info.fingerprint.empty()) return fail("a checkpoint needs a model fingerprint");
  std::vector<TensorView> views;
  for (const CheckpointTensor &tensor : tensors) {
    if (tensor.name.empty()) return fail("a checkpoint tensor has an empty name");
    // A '/' in a slot would make "state/a/b/c" ambiguous between slots "a" and "a/b".
    if (tensor.slot.find('/') != std::string::npos)
      return fail("optimizer-state slot '" + tensor.slot + "' contains '/'");
    views.push_back(TensorView{checkpointTensorName(tensor.slot, tensor.name), tensor.dtype,
                               tensor.shape, tensor.data});
  }
  std::map<std::string, std::string> metadata = {
      {kFormatKey, kFormat},
      {kVersionKey, std::to_string(kCheckpointVersion)},
      {kFingerprintKey, info.fingerprint},
      {kStepKey, std::to_string(info.step)},
      {kSeedKey, std::to_string(info.seed)},
      {kDataSeedKey, std::to_string(info.data.seed)},
      {kDataStepKey, std::to_string(info.data.step)},
      {kDataSourceKey, info.data.source},
      {kTrainingKey, info.training},
      {kChecksumKey, std::string(kChecksumDigits, '0')},
  };
  SafetensorsLayout layout;
  Status status = layoutSafetensors(views, metadata, layout);
  if (!status.ok()) return status.withContext(path);
  size_t digits = findChecksumDigits(reinterpret_cast<const uint8_t *>(layout.header.data()),
                                     layout.header.size());
  if (digits == std::string::npos) return fail("internal error: checksum field not found");
  uint32_t crc = crc32c(0, layout.header.data(), layout.header.size());
  for (const ByteSpan &piece : layout.data) crc = crc32c(crc, piece.data, piece.size);
  layout.header.replace(digits, kChecksumDigits, hex32(crc));
  std::vector<ByteSpan> pieces{{layout.header.data(), layout.header.size()}};
  pieces.insert(pieces.end(), layout.data.begin(), layout.data.end());
  return writeFileAtomically(path, pieces);
}

Status readCheckpointInfo(const std::string &path, CheckpointInfo &info) {
  SafetensorsFile file;
  return loadCheckpoint(path, file, info);
}

Status readCheckpoint(const std::string &path, const std::string &fingerprint,
                      const std::vector<CheckpointTensor> &tensors, CheckpointInfo &info) {
  SafetensorsFile file;
  CheckpointInfo read;
  Status status = loadCheckpoint(path, file, read);
  if (!status.ok()) return status;
  auto fail = [&](const std::string &message) { return Status::error(path + ": " + message); };
  if (read.fingerprint != fingerprint)
    return fail("checkpoint of another model: its fingerprint is '" + read.fingerprint +
                "', this model's is '" + fingerprint + "'");
  // Check everything before copying anything, so a refused checkpoint leaves the caller's
  // buffers as they were.
  std::set<std::string> wanted;
  for (const CheckpointTensor &tensor : tensors) {
    std::string name = checkpointTensorName(tensor.slot, tensor.name);
    wanted.insert(name);
    const SafetensorsEntry *entry = file.find(name);
    if (!entry) return fail("checkpoint lacks the " + describe(tensor));
    if (entry->dtype != tensor.dtype || entry->shape != tensor.shape)
      return fail(describe(tensor) + " is " + formatShape(entry->shape) + " " +
                  dtypeName(entry->dtype) + " in the checkpoint, " + formatShape(tensor.shape) +
                  " " + dtypeName(tensor.dtype) + " in this model");
    if (entry->end > entry->begin && !tensor.data)
      return fail("no buffer given for the " + describe(tensor));
  }
  for (const SafetensorsEntry &entry : file.tensors())
    if (!wanted.count(entry.name))
      return fail("checkpoint holds tensor '" + entry.name + "', which this model does not have");
  for (const CheckpointTensor &tensor : tensors) {
    status = file.copyTo(checkpointTensorName(tensor.slot, tensor.name), tensor.dtype, tensor.shape,
                         tensor.data);
    if (!status.ok()) return status;
  }
  info = std::move(read);
  return {};
}

}  // namespace stepc::rt
