//===- Safetensors.h - the safetensors tensor file format -------*- C++ -*-===//
//
// safetensors (Hugging Face) is how parameters move between stepc and PyTorch, matched by name:
//
//   u64 little-endian N | N bytes of JSON header | data buffer
//   header: {"__metadata__": {"key": "value", ...},                     (optional, strings only)
//            "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
//
// data_offsets are byte offsets into the data buffer; tensors are row-major, little endian,
// and tile the buffer exactly (no gaps, no overlaps), as the reference implementation demands.
// Reading validates all of that and reports what is wrong with which file; F32, F16, BF16 and
// F64 tensors convert to float or double. Writing lays files out as the reference library does
// (compact JSON padded with spaces to 8 bytes; tensors by dtype, largest elements first, then by
// name, so each is aligned to its element size) and writes them atomically.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_SAFETENSORS_H
#define STEPC_RUNTIME_SAFETENSORS_H

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/FileIO.h"
#include "runtime/base/Status.h"

namespace stepc::rt {

/// The element types safetensors names, in the reference's order (by element size; the writer
/// sorts by it). Every one can be read and copied raw; F64, F32, F16 and BF16 also convert to
/// float/double.
enum class DType : uint8_t {
  kBool,
  kU8,
  kI8,
  kF8E5M2,
  kF8E4M3,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kF64,
  kI64,
  kU64,
};

/// The header spelling ("F32", "BF16", ...).
const char *dtypeName(DType dtype);
/// Bytes per element.
size_t dtypeSize(DType dtype);
/// Parses a header spelling; false if unknown.
bool parseDType(std::string_view name, DType &out);

/// Elements of `shape` (1 for a scalar []); false if a dim is negative or the count overflows.
bool countElements(const std::vector<int64_t> &shape, uint64_t &out);
/// "[2, 3]" for messages.
std::string formatShape(const std::vector<int64_t> &shape);

/// One tensor of a file that was read.
struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte range in the data buffer
};

/// A safetensors file in memory, validated.
class SafetensorsFile {
 public:
  /// Reads and validates the file at `path`. Errors name the file and the problem.
  static Status read(const std::string &path, SafetensorsFile &out);
  /// Validates a file image already in memory; `source` names it in errors.
  static Status parse(std::vector<uint8_t> bytes, const std::string &source, SafetensorsFile &out);

  const std::string &source() const { return source_; }
  /// Every tensor, sorted by name.
  const std::vector<SafetensorsEntry> &tensors() const { return tensors_; }
  /// The `__metadata__` strings (empty if the file has none).
  const std::map<std::string, std::string> &metadata() const { return metadata_; }
  /// The tensor `name`, or null.
  const SafetensorsEntry *find(const std::string &name) const;
  /// The first byte of a tensor's data (its size is end - begin).
  const uint8_t *data(const SafetensorsEntry &entry) const;

  /// The tensor `name` as floats (from F32, F16, BF16 or F64; F64 rounds to nearest), with
  /// its shape in `shape` if given.
  Status readFloats(const std::string &name, std::vector<float> &out,
                    std::vector<int64_t> *shape = nullptr) const;
  /// The tensor `name` as doubles (from F64, F32, F16 or BF16; exact).
  Status readDoubles(const std::string &name, std::vector<double> &out,
                     std::vector<int64_t> *shape = nullptr) const;
  /// Copies the tensor `name` raw into `dst` (elements(shape) * dtypeSize(dtype) bytes) after
  /// checking it has exactly that dtype and shape.
  Status copyTo(const std::string &name, DType dtype, const std::vector<int64_t> &shape,
                void *dst) const;

 private:
  std::string source_;
  std::vector<uint8_t> bytes_;
  uint64_t dataStart_ = 0;
  std::vector<SafetensorsEntry> tensors_;
  std::map<std::string, std::string> metadata_;
};

/// A tensor to write. The caller owns `data`: elements(shape) * dtypeSize(dtype) bytes, row
/// major, little endian (null only when that is 0 bytes).
struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
};

/// A file image to write: the header (length prefix and padded JSON) and the tensors' bytes in
/// file order (pointing into the views' memory).
struct SafetensorsLayout {
  std::string header;
  std::vector<ByteSpan> data;
};

/// Lays out `tensors` and `metadata` as writeSafetensors writes them. Errors: an empty,
/// duplicate or reserved ("__metadata__") name, a negative dim, missing data.
Status layoutSafetensors(const std::vector<TensorView> &tensors,
                         const std::map<std::string, std::string> &metadata,
                         SafetensorsLayout &out);

/// Writes a safetensors file atomically (see writeFileAtomically).
Status writeSafetensors(const std::string &path, const std::vector<TensorView> &tensors,
                        const std::map<std::string, std::string> &metadata = {});

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_SAFETENSORS_H
