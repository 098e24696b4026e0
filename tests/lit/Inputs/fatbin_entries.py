#!/usr/bin/env python3
"""Lists the entries of the CUDA fatbins embedded in a file: one line per entry, "ptx sm_90" or
"cubin sm_90". Reads the fatbin container's headers (magic 0xBA55ED50): after the 16-byte
container header come entries, each a header (kind: 1 PTX, 2 ELF cubin; header size; payload
size; sm version) and its payload.

Usage: fatbin_entries.py FILE
"""
import struct
import sys


def entries(data):
    out = []
    start = 0
    while True:
        at = data.find(struct.pack("<I", 0xBA55ED50), start)
        if at < 0:
            return out
        magic, version, header_size, fat_size = struct.unpack_from("<IHHQ", data, at)
        pos, end = at + header_size, at + header_size + fat_size
        while pos + 64 <= end:
            kind, _ver, eh_size, padded = struct.unpack_from("<HHII", data, pos)
            sm = struct.unpack_from("<I", data, pos + 28)[0]
            if kind not in (1, 2) or eh_size < 32:
                break
            out.append(("ptx" if kind == 1 else "cubin", sm))
            pos += eh_size + padded
        start = at + 4


def main():
    found = entries(open(sys.argv[1], "rb").read())
    for kind, sm in found:
        print(f"{kind} sm_{sm}")
    if not found:
        print("no fatbin")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
