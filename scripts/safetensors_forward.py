#!/usr/bin/env python3
"""conv4's forward pass from a model.safetensors of `trmaml export`, with numpy only.

usage: safetensors_forward.py MODEL.safetensors BATCH.f32 N

BATCH.f32 holds N images as raw little-endian float32 in (n, h, w, c) order,
trmaml's layout; the model's metadata gives h, w, c and the model section
(model.conv4.pool). Prints the logits, one line per image, as PyTorch would
compute them from the same tensors: NCHW images, per block a 3x3 convolution
with padding 1 (OIHW kernels; stride 2 under pool stride), batch norm with
the batch's statistics (eps 1e-5) where the file has bn tensors, ReLU, 2x2
max-pool under pool max; then flatten, the hidden Linear and a ReLU where
the file has hidden tensors, and the head Linear [out, in].
"""
import json
import re
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


def conv3x3(x, k, b, stride):
    n, c, h, w = x.shape
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, k.shape[0], h, w))
    for kh in range(3):
        for kw in range(3):
            out += np.einsum("nchw,oc->nohw", p[:, :, kh:kh + h, kw:kw + w], k[:, :, kh, kw])
    # stride 2, padding 1: the outputs centred on even rows and columns,
    # ceil(h/2) x ceil(w/2) as PyTorch's Conv2d(stride=2, padding=1)
    return out[:, :, ::stride, ::stride] + b[None, :, None, None]


def forward(t, x, pool):
    blocks = len({name.split(".")[1] for name in t if name.startswith("blocks.")})
    for l in range(blocks):
        p = "blocks.%d." % l
        z = conv3x3(x, t[p + "conv.weight"], t[p + "conv.bias"], 2 if pool == "stride" else 1)
        if p + "bn.weight" in t:
            mean = z.mean(axis=(0, 2, 3), keepdims=True)
            var = z.var(axis=(0, 2, 3), keepdims=True)
            z = (z - mean) / np.sqrt(var + 1e-5) * t[p + "bn.weight"][None, :, None, None] + t[p + "bn.bias"][None, :, None, None]
        z = np.maximum(z, 0)
        if pool == "max":
            n, c, h, w = z.shape
            z = z[:, :, :h // 2 * 2, :w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
        x = z
    x = x.reshape(x.shape[0], -1)
    if "hidden.weight" in t:
        x = np.maximum(x @ t["hidden.weight"].T + t["hidden.bias"], 0)
    return x @ t["head.weight"].T + t["head.bias"]


def main():
    tensors, meta = read_safetensors(sys.argv[1])
    h, w, c = (int(v) for v in meta["io"].split()[:3])
    pool = re.search(r"\bpool: *(\w+)", meta.get("model", ""))
    n = int(sys.argv[3])
    x = np.fromfile(sys.argv[2], dtype="<f4").astype(np.float64).reshape(n, h, w, c).transpose(0, 3, 1, 2)
    for row in forward(tensors, x, pool.group(1) if pool else "max"):
        print(" ".join("%.9g" % v for v in row))


if __name__ == "__main__":
    main()
