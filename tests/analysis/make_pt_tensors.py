"""Writes .pt files with torch.save for the .pt reader's tests, and beside each <name>.pt a
<name>.json with what torch itself says the tensor is: dtype, shape, and the bytes of its
elements in row-major order (hex). Also files the reader must refuse.

    /usr/bin/python3 make_pt_tensors.py DIR
"""
# SPDX-License-Identifier: GPL-3.0-or-later
import io
import json
import os
import pickle
import sys
import zipfile

import torch


def raw_bytes(t):
    """The elements in row-major order, as bytes, through torch's own view of the memory."""
    flat = t.contiguous().reshape(-1)
    if flat.dtype == torch.bool:
        flat = flat.to(torch.uint8)
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def save(directory, name, tensor):
    torch.save(tensor, os.path.join(directory, name + ".pt"))
    with open(os.path.join(directory, name + ".json"), "w") as f:
        json.dump({"dtype": str(tensor.dtype), "shape": list(tensor.shape), "hex": raw_bytes(tensor.detach()).hex()}, f)


class Evil:
    def __reduce__(self):
        return (os.system, ("echo should never run",))


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    g = torch.Generator().manual_seed(3)
    base = torch.randn(6, 5, generator=g)
    save(directory, "float32", base)
    save(directory, "float16", base.half())
    save(directory, "bfloat16", base.bfloat16())
    save(directory, "float64", base.double())
    save(directory, "int64", torch.arange(-5, 7, dtype=torch.int64).reshape(3, 4))
    save(directory, "int32", torch.tensor([1, -2, 2**31 - 1], dtype=torch.int32))
    save(directory, "uint8", torch.tensor([0, 7, 255], dtype=torch.uint8))
    save(directory, "bool", torch.tensor([[True, False, True], [False, False, True]]))
    save(directory, "scalar", torch.tensor(3.25))
    save(directory, "empty", torch.zeros(0, 4))
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 1e-40, -0.0])
    save(directory, "special", special)
    # Views: torch.save keeps the whole storage and the view's offset and strides.
    save(directory, "rows", base[2:4])  # contiguous, from an offset into the storage
    save(directory, "transposed", base.t())
    save(directory, "sliced", base[2:5, 1:4])
    save(directory, "stepped", base[:, ::2])
    save(directory, "expanded", torch.tensor([1.5, 2.5]).expand(3, 2))
    save(directory, "bf16_transposed", base.bfloat16().t())
    save(directory, "parameter", torch.nn.Parameter(base.clone()))

    # Refused: other objects, the legacy (non-zip) format, a pickle that calls something else.
    torch.save({"weight": base}, os.path.join(directory, "dict.pt"))
    torch.save([base, base], os.path.join(directory, "list.pt"))
    torch.save(base, os.path.join(directory, "legacy.pt"), _use_new_zipfile_serialization=False)
    with zipfile.ZipFile(os.path.join(directory, "evil.pt"), "w") as z:
        z.writestr("evil/data.pkl", pickle.dumps(Evil(), protocol=2))
        z.writestr("evil/version", "3\n")
    # A zip whose storage is shorter than data.pkl says.
    buffer = io.BytesIO()
    torch.save(base, buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as source, \
            zipfile.ZipFile(os.path.join(directory, "short.pt"), "w") as z:
        for item in source.infolist():
            data = source.read(item.filename)
            z.writestr(item.filename, data[:-4] if item.filename.endswith("/data/0") else data)
    with open(os.path.join(directory, "truncated.pt"), "wb") as f:
        f.write(buffer.getvalue()[:200])
    with open(os.path.join(directory, "text.pt"), "w") as f:
        f.write("neither a zip archive nor a pickle\n")


if __name__ == "__main__":
    main()
