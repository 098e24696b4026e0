//===- Safetensors.cpp - the safetensors tensor file format --------------===//
//
// Validation follows the reference implementation (huggingface/safetensors, tensor.rs): header
// length bounded, header a JSON object, every tensor's byte size equal to its shape times its
// element size, tensors tiling the data buffer exactly. A file that passes can be indexed
// without further bounds checks.
//
//===----------------------------------------------------------------------===//
#include "runtime/formats/Safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/base/Json.h"

// Tensor data is little endian in the file and copied as raw bytes.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "stepc's runtime assumes little endian");

namespace stepc::rt {
namespace {

// The reference implementation refuses larger headers; so do we, so a garbage length cannot
// make us parse (or allocate for) gigabytes of "JSON".
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr const char *kMetadataKey = "__metadata__";

struct DTypeInfo {
  DType dtype;
  const char *name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kBool, "BOOL", 1},      {DType::kU8, "U8", 1},          {DType::kI8, "I8", 1},
    {DType::kF8E5M2, "F8_E5M2", 1}, {DType::kF8E4M3, "F8_E4M3", 1}, {DType::kI16, "I16", 2},
    {DType::kU16, "U16", 2},        {DType::kF16, "F16", 2},        {DType::kBF16, "BF16", 2},
    {DType::kI32, "I32", 4},        {DType::kU32, "U32", 4},        {DType::kF32, "F32", 4},
    {DType::kF64, "F64", 8},        {DType::kI64, "I64", 8},        {DType::kU64, "U64", 8},
};

const DTypeInfo &info(DType dtype) {
  for (const DTypeInfo &entry : kDTypes)
    if (entry.dtype == dtype) return entry;
  return kDTypes[0];  // unreachable: every enumerator is in the table
}

// IEEE half to float, exactly (every half is a float).
float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  uint32_t bits = exponent == 0x1f ? sign | 0x7f800000u | (mantissa << 13)  // inf, NaN
                                   : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// bfloat16 is the top half of a float.
float bf16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t{b} << 16;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// Double to float with round to nearest even, including the overflow to infinity that a plain
// cast leaves undefined.
float doubleToFloat(double d) {
  constexpr double kMax = std::numeric_limits<float>::max();
  constexpr double kInfinityFrom = 0x1p128 - 0x1p103;  // FLT_MAX + half an ulp rounds up
  if (std::isfinite(d) && std::fabs(d) > kMax) {
    float magnitude = std::fabs(d) >= kInfinityFrom ? std::numeric_limits<float>::infinity()
                                                    : std::numeric_limits<float>::max();
    return d < 0 ? -magnitude : magnitude;
  }
  return static_cast<float>(d);
}

template <typename Out>
Out fromDouble(double d) {
  if constexpr (std::is_same_v<Out, float>)
    return doubleToFloat(d);
  else
    return d;
}

template <typename T>
T load(const uint8_t *p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

// Converts a floating-point tensor element by element.
template <typename Out>
Status convert(const SafetensorsFile &file, const std::string &name, std::vector<Out> &out,
               std::vector<int64_t> *shape) {
  out.clear();
  const SafetensorsEntry *entry = file.find(name);
  if (!entry) return Status::error(file.source() + ": no tensor named '" + name + "'");
  const uint8_t *p = file.data(*entry);
  size_t count = static_cast<size_t>((entry->end - entry->begin) / dtypeSize(entry->dtype));
  out.resize(count);
  switch (entry->dtype) {
    case DType::kF32:
      for (size_t i = 0; i < count; ++i) out[i] = static_cast<Out>(load<float>(p + 4 * i));
      break;
    case DType::kF64:
      for (size_t i = 0; i < count; ++i) out[i] = fromDouble<Out>(load<double>(p + 8 * i));
      break;
    case DType::kF16:
      for (size_t i = 0; i < count; ++i) out[i] = halfToFloat(load<uint16_t>(p + 2 * i));
      break;
    case DType::kBF16:
      for (size_t i = 0; i < count; ++i) out[i] = bf16ToFloat(load<uint16_t>(p + 2 * i));
      break;
    default:
      out.clear();
      return Status::error(file.source() + ": tensor '" + name + "' is " + dtypeName(entry->dtype) +
                           ", not a floating-point type (F64, F32, F16, BF16)");
  }
  if (shape) *shape = entry->shape;
  return {};
}

// One tensor's header entry, checked: known dtype, non-negative integer dims, two offsets in
// order whose difference is the tensor's byte size.
Status parseEntry(const std::string &name, const JsonValue &value, SafetensorsEntry &out) {
  auto bad = [&](const std::string &what) {
    return Status::error("tensor '" + name + "': " + what);
  };
  if (!value.isObject()) return bad("expected an object with dtype, shape and data_offsets");
  const JsonValue *dtype = value.find("dtype");
  const JsonValue *shape = value.find("shape");
  const JsonValue *offsets = value.find("data_offsets");
  if (!dtype || !dtype->isString()) return bad("expected a string \"dtype\"");
  if (!parseDType(dtype->text, out.dtype)) return bad("unknown dtype '" + dtype->text + "'");
  if (!shape || !shape->isArray()) return bad("expected an array \"shape\"");
  out.name = name;
  out.shape.clear();
  for (const JsonValue &dim : shape->items) {
    uint64_t d;
    if (!dim.toUint64(d) || d > static_cast<uint64_t>(INT64_MAX))
      return bad("expected non-negative integer dims in \"shape\"");
    out.shape.push_back(static_cast<int64_t>(d));
  }
  if (!offsets || !offsets->isArray() || offsets->items.size() != 2 ||
      !offsets->items[0].toUint64(out.begin) || !offsets->items[1].toUint64(out.end))
    return bad("expected \"data_offsets\" as [begin, end] byte offsets");
  if (out.end < out.begin) return bad("data_offsets end before they begin");
  uint64_t elements;
  if (!countElements(out.shape, elements) || elements > UINT64_MAX / dtypeSize(out.dtype))
    return bad("shape " + formatShape(out.shape) + " is too large");
  uint64_t bytes = elements * dtypeSize(out.dtype);
  if (out.end - out.begin != bytes)
    return bad("shape " + formatShape(out.shape) + " of " + dtypeName(out.dtype) + " needs " +
               std::to_string(bytes) + " bytes, data_offsets give " +
               std::to_string(out.end - out.begin));
  return {};
}

Status parseMetadata(const JsonValue &value, std::map<std::string, std::string> &out) {
  if (!value.isObject()) return Status::error("__metadata__: expected an object of strings");
  for (const JsonMember &member : value.members) {
    if (!member.value.isString())
      return Status::error("__metadata__: '" + member.key + "' is not a string");
    out[member.key] = member.value.text;
  }
  return {};
}

// The tensors must tile [0, dataSize) exactly: a gap or overlap means a damaged or hostile file.
Status checkTiling(const std::vector<SafetensorsEntry> &tensors, uint64_t dataSize) {
  std::vector<const SafetensorsEntry *> byOffset;
  for (const SafetensorsEntry &entry : tensors) byOffset.push_back(&entry);
  std::sort(byOffset.begin(), byOffset.end(), [](const auto *a, const auto *b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  for (const SafetensorsEntry *entry : byOffset) {
    if (entry->begin != covered)
      return Status::error("tensor '" + entry->name + "' starts at data byte " +
                           std::to_string(entry->begin) + ", expected " + std::to_string(covered) +
                           (entry->begin < covered ? " (overlap)" : " (gap)"));
    covered = entry->end;
  }
  if (covered != dataSize)
    return Status::error("the tensors cover " + std::to_string(covered) +
                         " bytes of data but the file holds " + std::to_string(dataSize) +
                         (covered > dataSize ? " (truncated?)" : " (trailing bytes)"));
  return {};
}

}  // namespace

const char *dtypeName(DType dtype) { return info(dtype).name; }
size_t dtypeSize(DType dtype) { return info(dtype).size; }

bool parseDType(std::string_view name, DType &out) {
  for (const DTypeInfo &entry : kDTypes)
    if (name == entry.name) {
      out = entry.dtype;
      return true;
    }
  return false;
}

bool countElements(const std::vector<int64_t> &shape, uint64_t &out) {
  uint64_t count = 1;
  bool zero = false;
  for (int64_t dim : shape) {
    if (dim < 0) return false;
    if (dim == 0)
      zero = true;
    else if (count > UINT64_MAX / static_cast<uint64_t>(dim))
      return false;
    else
      count *= static_cast<uint64_t>(dim);
  }
  out = zero ? 0 : count;
  return true;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

Status SafetensorsFile::read(const std::string &path, SafetensorsFile &out) {
  std::vector<uint8_t> bytes;
  Status status = readFile(path, bytes);
  if (!status.ok()) return status;
  return parse(std::move(bytes), path, out);
}

Status SafetensorsFile::parse(std::vector<uint8_t> bytes, const std::string &source,
                              SafetensorsFile &out) {
  // Built aside and moved to `out` only when valid, so a failed parse leaves `out` empty.
  out = SafetensorsFile();
  SafetensorsFile file;
  auto fail = [&](const Status &status) { return status.withContext(source); };
  if (bytes.size() < 8)
    return fail(Status::error("not a safetensors file: " + std::to_string(bytes.size()) +
                              " bytes, too short for the 8-byte header length"));
  uint64_t headerBytes = load<uint64_t>(bytes.data());
  if (headerBytes > kMaxHeaderBytes)
    return fail(Status::error("not a safetensors file: header length " +
                              std::to_string(headerBytes) + " exceeds the limit of " +
                              std::to_string(kMaxHeaderBytes)));
  if (headerBytes > bytes.size() - 8)
    return fail(Status::error("truncated: the header should be " + std::to_string(headerBytes) +
                              " bytes, the file holds only " + std::to_string(bytes.size() - 8) +
                              " after the length"));
  JsonValue header;
  std::string_view text(reinterpret_cast<const char *>(bytes.data() + 8), headerBytes);
  Status status = parseJson(text, header);
  if (!status.ok()) return fail(status.withContext("header"));
  if (!header.isObject()) return fail(Status::error("header: expected a JSON object"));
  for (const JsonMember &member : header.members) {
    if (member.key == kMetadataKey) {
      status = parseMetadata(member.value, file.metadata_);
    } else {
      file.tensors_.emplace_back();
      status = parseEntry(member.key, member.value, file.tensors_.back());
    }
    if (!status.ok()) return fail(status);
  }
  file.dataStart_ = 8 + headerBytes;
  status = checkTiling(file.tensors_, bytes.size() - file.dataStart_);
  if (!status.ok()) return fail(status);
  std::sort(file.tensors_.begin(), file.tensors_.end(),
            [](const auto &a, const auto &b) { return a.name < b.name; });
  file.source_ = source;
  file.bytes_ = std::move(bytes);
  out = std::move(file);
  return {};
}

const SafetensorsEntry *SafetensorsFile::find(const std::string &name) const {
  auto it =
      std::lower_bound(tensors_.begin(), tensors_.end(), name,
                       [](const SafetensorsEntry &e, const std::string &n) { return e.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

const uint8_t *SafetensorsFile::data(const SafetensorsEntry &entry) const {
  return bytes_.data() + dataStart_ + entry.begin;
}

Status SafetensorsFile::readFloats(const std::string &name, std::vector<float> &out,
                                   std::vector<int64_t> *shape) const {
  return convert(*this, name, out, shape);
}

Status SafetensorsFile::readDoubles(const std::string &name, std::vector<double> &out,
                                    std::vector<int64_t> *shape) const {
  return convert(*this, name, out, shape);
}

Status SafetensorsFile::copyTo(const std::string &name, DType dtype,
                               const std::vector<int64_t> &shape, void *dst) const {
  const SafetensorsEntry *entry = find(name);
  if (!entry) return Status::error(source_ + ": no tensor named '" + name + "'");
  if (entry->dtype != dtype || entry->shape != shape)
    return Status::error(source_ + ": tensor '" + name + "' is " + formatShape(entry->shape) + " " +
                         dtypeName(entry->dtype) + ", expected " + formatShape(shape) + " " +
                         dtypeName(dtype));
  if (entry->end > entry->begin) std::memcpy(dst, data(*entry), entry->end - entry->begin);
  return {};
}

Status layoutSafetensors(const std::vector<TensorView> &tensors,
                         const std::map<std::string, std::string> &metadata,
                         SafetensorsLayout &out) {
  out = SafetensorsLayout();
  // The reference library's order: by dtype, latest in the enum (largest elements) first, then
  // by name. It keeps every tensor aligned to its element size, given the data's 8-byte-aligned
  // start, and makes our files byte-identical to the reference's for the same tensors.
  std::vector<const TensorView *> order;
  for (const TensorView &view : tensors) order.push_back(&view);
  std::stable_sort(order.begin(), order.end(), [](const TensorView *a, const TensorView *b) {
    return a->dtype != b->dtype ? a->dtype > b->dtype : a->name < b->name;
  });
  std::vector<std::string> names;
  for (const TensorView &view : tensors) names.push_back(view.name);
  std::sort(names.begin(), names.end());
  auto duplicate = std::adjacent_find(names.begin(), names.end());
  if (duplicate != names.end())
    return Status::error("tensor name '" + *duplicate + "' appears twice");
  JsonValue header = JsonValue::object();
  if (!metadata.empty()) {
    JsonValue meta = JsonValue::object();
    for (const auto &[key, value] : metadata) meta.add(key, JsonValue::string(value));
    header.add(kMetadataKey, std::move(meta));
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const TensorView &view = *order[i];
    if (view.name.empty() || view.name == kMetadataKey)
      return Status::error("tensor name '" + view.name + "' is reserved or empty");
    uint64_t elements;
    if (!countElements(view.shape, elements) || elements > UINT64_MAX / dtypeSize(view.dtype))
      return Status::error("tensor '" + view.name + "' has an invalid shape " +
                           formatShape(view.shape));
    uint64_t bytes = elements * dtypeSize(view.dtype);
    if (bytes > 0 && !view.data) return Status::error("tensor '" + view.name + "' has no data");
    JsonValue entry = JsonValue::object();
    entry.add("dtype", JsonValue::string(dtypeName(view.dtype)));
    JsonValue shape = JsonValue::array();
    for (int64_t dim : view.shape) shape.items.push_back(JsonValue::number(dim));
    entry.add("shape", std::move(shape));
    JsonValue offsets = JsonValue::array();
    offsets.items.push_back(JsonValue::number(offset));
    offsets.items.push_back(JsonValue::number(offset + bytes));
    entry.add("data_offsets", std::move(offsets));
    header.add(view.name, std::move(entry));
    out.data.push_back(ByteSpan{view.data, static_cast<size_t>(bytes)});
    offset += bytes;
  }
  std::string json = writeJson(header);
  json.append((8 - json.size() % 8) % 8, ' ');
  uint64_t length = json.size();
  out.header.assign(reinterpret_cast<const char *>(&length), 8);
  out.header += json;
  return {};
}

Status writeSafetensors(const std::string &path, const std::vector<TensorView> &tensors,
                        const std::map<std::string, std::string> &metadata) {
  SafetensorsLayout layout;
  Status status = layoutSafetensors(tensors, metadata, layout);
  if (!status.ok()) return status.withContext(path);
  std::vector<ByteSpan> pieces{{layout.header.data(), layout.header.size()}};
  pieces.insert(pieces.end(), layout.data.begin(), layout.data.end());
  return writeFileAtomically(path, pieces);
}

}  // namespace stepc::rt
