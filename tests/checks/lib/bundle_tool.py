"""Writes and checks tensor bundles for tests/checks/bundles.sh with numpy
alone: .npz through np.savez / np.savez_compressed, safetensors by hand (an
8-byte little-endian header length, a JSON header, the data), since the
safetensors package is not installed. Also writes the hostile bundles the
readers must refuse with one line.

  bundle_tool.py inputs LIST.json OUT_DIR      values for every input of a
      model (from neuron-exec --list-inputs --json): OUT_DIR/w.npz (flax-style
      '/' keys), w.safetensors, and one .npy per input plus args.txt, the
      matching "-i NAME=FILE" arguments
  bundle_tool.py hostile OUT_DIR               the hostile bundles
"""
import json
import os
import struct
import sys
import zipfile

import numpy as np

ST_DTYPES = {"float32": "F32", "bfloat16": "BF16", "int32": "I32", "float16": "F16",
             "bool": "BOOL", "uint8": "U8", "int8": "I8", "int64": "I64", "float64": "F64",
             "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2", "uint16": "U16",
             "uint32": "U32", "int16": "I16", "uint64": "U64"}
# Types numpy lacks are held as raw bits of their width.
RAW = {"bfloat16": np.uint16, "float8_e4m3fn": np.uint8, "float8_e5m2": np.uint8}


def write_safetensors(path, arrays, dtypes):
    """arrays: {key: ndarray}; dtypes: {key: safetensors dtype name}."""
    header, offset, blobs = {}, 0, []
    for key, a in arrays.items():
        data = np.ascontiguousarray(a).tobytes()
        header[key] = {"dtype": dtypes[key], "shape": list(a.shape),
                       "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def values(rng, dtype, shape):
    if dtype == "bfloat16":
        f = (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)
        return (f.view(np.uint32) >> 16).astype(np.uint16)
    if dtype in ("int32", "int64", "int8", "int16", "uint8", "uint16", "uint32", "uint64"):
        return rng.integers(0, 8, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype in RAW:
        return rng.integers(0, 0x30, size=shape).astype(RAW[dtype])
    return (rng.standard_normal(shape) * 0.5).astype(dtype)


def flax_key(keys):
    """params/layer_0/w: the path less its leading args/kwargs and tuple
    indices, as flax's flatten_dict(sep='/') writes it."""
    i = 0
    while i < len(keys) and (keys[i] in ("args", "kwargs", "inputs") or keys[i].isdigit()):
        i += 1
    return "/".join(keys[i:]) or "/".join(keys)


def inputs(list_path, out):
    listing = json.load(open(list_path))["inputs"]
    rng = np.random.default_rng(7)
    arrays, st_types, args = {}, {}, []
    keys = [flax_key(t["keys"]) if t["keys"] else t["name"] for t in listing]
    for t, key in zip(listing, keys):
        if keys.count(key) > 1:  # not unique without its prefix: by name
            key = t["name"]
        a = values(rng, t["dtype"], tuple(t["shape"]))
        arrays[key] = a
        st_types[key] = ST_DTYPES[t["dtype"]]
        npy = os.path.join(out, "in%d.npy" % t["position"])
        np.save(npy, a)
        args.append("--input=%s=%s" % (t["name"], npy))
    np.savez(os.path.join(out, "w.npz"), **arrays)
    write_safetensors(os.path.join(out, "w.safetensors"), arrays, st_types)
    with open(os.path.join(out, "args.txt"), "w") as f:
        f.write("\n".join(args) + "\n")


def npy_bytes(a):
    import io
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def hostile(out):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    ok = {"x": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}
    data = x.tobytes()

    def st(name, header, payload=data, length=None):
        text = json.dumps(header).encode() if not isinstance(header, bytes) else header
        with open(os.path.join(out, name), "wb") as f:
            f.write(struct.pack("<Q", len(text) if length is None else length))
            f.write(text)
            f.write(payload)

    st("past_end.safetensors", {"x": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 4096]}})
    st("overlap.safetensors", {"x": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
                               "y": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]}})
    st("huge_header.safetensors", ok, length=5 << 30)
    st("header_past_end.safetensors", ok, length=1 << 20)
    st("size_disagrees.safetensors", {"x": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}})
    st("deep.safetensors", b"{" + b'"a":[' * 100000 + b"]" * 100000 + b"}")
    st("not_json.safetensors", b"{not json at all}")
    st("bad_dtype.safetensors", {"x": {"dtype": "Q7", "shape": [2, 3], "data_offsets": [0, 24]}})
    st("huge_shape.safetensors", {"x": {"dtype": "F32", "shape": [1 << 40, 1 << 40], "data_offsets": [0, 24]}})
    with open(os.path.join(out, "truncated.safetensors"), "wb") as f:
        f.write(b"\x10\x00\x00")
    # .npz: a member whose size disagrees with its header's shape, one that
    # is no .npy, a truncated archive, and a zip bomb: a member whose header
    # says 6 floats followed by 256 MiB of deflated zeros.
    with zipfile.ZipFile(os.path.join(out, "size_disagrees.npz"), "w") as z:
        z.writestr("x.npy", npy_bytes(x)[:-4])
    with zipfile.ZipFile(os.path.join(out, "not_npy.npz"), "w") as z:
        z.writestr("x.txt", b"hello")
    with open(os.path.join(out, "w_ok.npz"), "wb") as f:
        np.savez(f, x=x)
    blob = open(os.path.join(out, "w_ok.npz"), "rb").read()
    with open(os.path.join(out, "truncated.npz"), "wb") as f:
        f.write(blob[: len(blob) // 2])
    with zipfile.ZipFile(os.path.join(out, "bomb.npz"), "w", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("x.npy", "w", force_zip64=True) as m:
            m.write(npy_bytes(x))
            zeros = bytes(1 << 20)
            for _ in range(256):
                m.write(zeros)
    with zipfile.ZipFile(os.path.join(out, "huge_npy_header.npz"), "w") as z:
        z.writestr("x.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFF0) + b"{")


if __name__ == "__main__":
    if sys.argv[1] == "inputs":
        inputs(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "hostile":
        hostile(sys.argv[2])
    else:
        sys.exit("usage: bundle_tool.py inputs LIST.json OUT_DIR | hostile OUT_DIR")
