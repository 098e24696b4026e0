//===- Checksum.h - CRC-32C ------------------------------------*- C++ -*-===//
//
// CRC-32C (Castagnoli, as in iSCSI, ext4 and LevelDB) detects the corruption a checkpoint can
// suffer on disk or in transfer: every burst of up to 32 flipped bits and every odd number of
// flipped bits. It is not a cryptographic hash; nothing here defends against tampering.
//
//===----------------------------------------------------------------------===//
#ifndef STEPC_RUNTIME_CHECKSUM_H
#define STEPC_RUNTIME_CHECKSUM_H

#include <cstddef>
#include <cstdint>

namespace stepc::rt {

/// Extends `crc` (the CRC-32C of the bytes before, 0 for none) by `size` bytes at `data`.
/// crc32c(crc32c(0, a), b) == crc32c(0, a + b), so large data can be summed in pieces.
uint32_t crc32c(uint32_t crc, const void *data, size_t size);

}  // namespace stepc::rt

#endif  // STEPC_RUNTIME_CHECKSUM_H
