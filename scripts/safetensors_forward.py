#!/usr/bin/env python3
"""conv4's forward pass from a model.safetensors of `trmaml export`, with numpy only.

usage: safetensors_forward.py MODEL.safetensors BATCH.f32 N

BATCH.f32 holds N images as raw little-endian float32 in (n, h, w, c) order,
trmaml's layout; the model's metadata gives h, w, c. Prints the logits, one
line per image, as PyTorch would compute them from the same tensors: NCHW
images, 3x3 convolutions with padding 1 (OIHW kernels), batch norm with the
batch's statistics (eps 1e-5), ReLU, 2x2 max-pool, flatten, linear [out, in].
"""
import json
import struct
import sys

import numpy as np


def read_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = raw[8 + n:]
    tensors = {}
    for name, e in header.items():
        assert e["dtype"] == "F32", name
        b, end = e["data_offsets"]
        tensors[name] = np.frombuffer(data[b:end], dtype="<f4").reshape(e["shape"]).astype(np.float64)
    return tensors, meta


def conv3x3(x, k, b):
    n, c, h, w = x.shape
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, k.shape[0], h, w))
    for kh in range(3):
        for kw in range(3):
            out += np.einsum("nchw,oc->nohw", p[:, :, kh:kh + h, kw:kw + w], k[:, :, kh, kw])
    return out + b[None, :, None, None]


def forward(t, x):
    blocks = len({name.split(".")[1] for name in t if name.startswith("blocks.")})
    for l in range(blocks):
        p = "blocks.%d." % l
        z = conv3x3(x, t[p + "conv.weight"], t[p + "conv.bias"])
        mean = z.mean(axis=(0, 2, 3), keepdims=True)
        var = z.var(axis=(0, 2, 3), keepdims=True)
        z = (z - mean) / np.sqrt(var + 1e-5) * t[p + "bn.weight"][None, :, None, None] + t[p + "bn.bias"][None, :, None, None]
        z = np.maximum(z, 0)
        n, c, h, w = z.shape
        z = z[:, :, :h // 2 * 2, :w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
        x = z
    return x.reshape(x.shape[0], -1) @ t["head.weight"].T + t["head.bias"]


def main():
    tensors, meta = read_safetensors(sys.argv[1])
    h, w, c = (int(v) for v in meta["io"].split()[:3])
    n = int(sys.argv[3])
    x = np.fromfile(sys.argv[2], dtype="<f4").astype(np.float64).reshape(n, h, w, c).transpose(0, 3, 1, 2)
    for row in forward(tensors, x):
        print(" ".join("%.9g" % v for v in row))


if __name__ == "__main__":
    main()
