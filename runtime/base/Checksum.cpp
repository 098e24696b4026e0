//===- Checksum.cpp - CRC-32C, slicing by 8 ------------------------------===//
//
// Table-driven, eight bytes per step ("slicing by 8", Intel 2008): about 2 GB/s in portable
// C++, so summing a multi-gigabyte checkpoint costs a second, not ten as bytewise would.
//
//===----------------------------------------------------------------------===//
#include "runtime/base/Checksum.h"

#include <array>

namespace stepc::rt {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78u;  // CRC-32C, bit-reversed

using Tables = std::array<std::array<uint32_t, 256>, 8>;

// tables[0] is the bytewise table; tables[k][b] is the CRC of byte b followed by k zero bytes.
Tables makeTables() {
  Tables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kPolynomial : 0u);
    tables[0][b] = crc;
  }
  for (uint32_t b = 0; b < 256; ++b)
    for (int k = 1; k < 8; ++k)
      tables[k][b] = (tables[k - 1][b] >> 8) ^ tables[0][tables[k - 1][b] & 0xffu];
  return tables;
}

const Tables &tables() {
  static const Tables kTables = makeTables();
  return kTables;
}

}  // namespace

uint32_t crc32c(uint32_t crc, const void *data, size_t size) {
  const Tables &t = tables();
  const uint8_t *p = static_cast<const uint8_t *>(data);
  crc = ~crc;
  // Eight bytes at a time, read bytewise so the result does not depend on the host's byte
  // order or on alignment.
  while (size >= 8) {
    uint32_t lo =
        crc ^ (uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24);
    crc = t[7][lo & 0xffu] ^ t[6][(lo >> 8) & 0xffu] ^ t[5][(lo >> 16) & 0xffu] ^ t[4][lo >> 24] ^
          t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xffu];
  return ~crc;
}

}  // namespace stepc::rt
