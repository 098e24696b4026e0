#!/usr/bin/env python3
"""Checks that every F32 tensor of the given safetensors files (parameters, checkpoints) holds
finite values only; prints `N files finite` or names the first file and tensor that does not."""
import json
import math
import struct
import sys

for path in sys.argv[1:]:
    data = open(path, "rb").read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] != "F32":
            continue
        begin, end = entry["data_offsets"]
        values = struct.unpack(f"<{(end - begin) // 4}f", body[begin:end])
        bad = [i for i, v in enumerate(values) if not math.isfinite(v)]
        if bad:
            print(f"{path}: tensor '{name}' is not finite at element {bad[0]}")
            sys.exit(1)
print(f"{len(sys.argv) - 1} files finite")
