"""Cross-checks shardkit's safetensors files with the reference Python library.

Usage: interop.py OURS THEIRS
Reads OURS (written by shardkit), checks every tensor and the metadata against the
tensor set defined below (python_interop_test.cpp defines the same set), then writes
the same set to THEIRS with the reference writer. Prints OK on success.
"""
import sys

import numpy as np
import safetensors
from safetensors import deserialize, safe_open

# (header dtype, name the reference's serialize takes, numpy dtype or None)
DTYPES = [
    ("BOOL", "bool", np.bool_), ("U8", "uint8", np.uint8), ("I8", "int8", np.int8),
    ("I16", "int16", np.int16), ("U16", "uint16", np.uint16), ("F16", "float16", np.float16),
    ("BF16", "bfloat16", None), ("I32", "int32", np.int32), ("U32", "uint32", np.uint32),
    ("F32", "float32", np.float32), ("F64", "float64", np.float64), ("I64", "int64", np.int64),
    ("U64", "uint64", np.uint64), ("F8_E5M2", "float8_e5m2", None), ("F8_E4M3", "float8_e4m3fn", None),
]
# One key only: the reference writes its metadata map in hash order, so with several
# keys its bytes are not reproducible run to run.
METADATA = {"format": "pt"}


def values(code, count):
    """The element values of tensor t.<code>, as shardkit writes them."""
    if code == "BOOL":
        return [k % 2 == 1 for k in range(count)]
    if code.startswith("U"):
        return [k * 3 for k in range(count)]
    if code.startswith("I"):
        return [k - 2 for k in range(count)]
    return [(k - 2) * 0.5 for k in range(count)]


def raw(code, np_dtype, shape):
    count = int(np.prod(shape)) if shape else 1
    if code.startswith("F8"):
        return bytes((k * 17 + 1) % 256 for k in range(count))
    if code == "BF16":
        bits = np.array(values(code, count), dtype="<f4").view("<u4") >> 16
        return bits.astype("<u2").tobytes()
    return np.array(values(code, count), dtype=np.dtype(np_dtype).newbyteorder("<")).tobytes()


def expected():
    """name -> (header dtype, serialize name, numpy dtype, shape, bytes)."""
    out = {}
    for code, torch_name, np_dtype in DTYPES:
        out["t." + code] = (code, torch_name, np_dtype, [2, 3], raw(code, np_dtype, [2, 3]))
    out["scalar"] = ("F64", "float64", np.float64, [], raw("F64", np.float64, []))
    out["empty"] = ("I32", "int32", np.int32, [3, 0], b"")
    return out


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check_ours(path, want):
    with open(path, "rb") as f:
        got = {name: info for name, info in deserialize(f.read())}
    if set(got) != set(want):
        fail(f"{path}: tensor names {sorted(got)} != {sorted(want)}")
    for name, (code, _, np_dtype, shape, data) in want.items():
        info = got[name]
        if info["dtype"] != code or list(info["shape"]) != shape or bytes(info["data"]) != data:
            fail(f"{path}: tensor {name} is {info['dtype']} {info['shape']} with other bytes than expected")
    with safe_open(path, framework="numpy") as f:
        if f.metadata() != METADATA:
            fail(f"{path}: metadata {f.metadata()} != {METADATA}")
        for name, (code, _, np_dtype, shape, data) in want.items():
            if np_dtype is None:
                continue  # numpy has no such type; the bytes were compared above
            array = f.get_tensor(name)
            count = int(np.prod(shape)) if shape else 1
            reference = np.array(values(code, count), dtype=np_dtype).reshape(shape)
            if array.dtype != np_dtype or not np.array_equal(array, reference):
                fail(f"{path}: tensor {name} reads as {array!r}, expected {reference!r}")


def write_theirs(path, want):
    keep = []
    tensors = {}
    for name, (_, torch_name, _, shape, data) in want.items():
        if hasattr(safetensors, "TensorSpec"):  # safetensors >= 0.8 takes raw pointers
            buf = np.frombuffer(data, dtype=np.uint8).copy() if data else np.zeros(1, np.uint8)
            keep.append(buf)
            tensors[name] = safetensors.TensorSpec(dtype=torch_name, shape=shape,
                                                   data_ptr=buf.ctypes.data, data_len=len(data))
        else:
            tensors[name] = {"dtype": torch_name, "shape": shape, "data": data}
    safetensors.serialize_file(tensors, path, metadata=METADATA)


def main():
    ours, theirs = sys.argv[1], sys.argv[2]
    want = expected()
    check_ours(ours, want)
    write_theirs(theirs, want)
    print(f"OK safetensors {safetensors.__version__}")


if __name__ == "__main__":
    main()
