#!/usr/bin/env python3
"""Writes data/grids/llm*.shapes: the linear projections of public LLM families.

Projections (in features -> out features) of families other than Llama-3:
Llama-2-7B (hidden 4096, FFN 11008, 32 KV heads), Qwen2-7B (hidden 3584, FFN
18944, 4 KV heads of 128: K and V are 512 wide), Phi-3-mini (hidden 3072, FFN
8192, 32 KV heads; the model fuses QKV and gate/up, listed here apart), and
Mistral-7B, whose FFN (4096 -> 14336 -> 4096) is also each Mixtral-8x7B
expert's (8 KV heads of 128: K and V are 1024 wide). Identical projections
across families are listed once.

Prefill: each projection at two of 256, 512, 1024, 2048, 4096 tokens, the
larger token counts on the smaller projections, so that the set stays about
1.2 TFLOP a pass (bench it in minutes at 2 threads). Decode: each projection
at two of 1, 8, 32, 64 tokens.

Two orientations of the same products, one file each:
  numpy (row-major NN): C[tokens x out] = X[tokens x in] W[in x out]
      -> M = tokens, N = out, K = in           llm.shapes, llm-decode.shapes
      sfc-tune bench --shapes data/grids/llm.shapes --layout row --trans NN --threads 2 --vs openblas,onednn
  PyTorch nn.Linear (y = x W^T, W stored [out x in]) reaches BLAS as a
  column-major sgemm with op(A) = A^T:
      -> M = out, N = tokens, K = in ("TN")    llm-torch.shapes, llm-decode-torch.shapes
      sfc-tune bench --shapes data/grids/llm-torch.shapes --layout col --trans TN --threads 2 --vs openblas,onednn

The commands leave BLIS out: a generic (reference) build, as Debian's, would
take most of the run on its own; add it (--vs openblas,blis,onednn) where
BLIS is an optimised build. Deterministic:

    python3 data/grids/make-llm.py [OUT_DIR]    # the four files, next to this script by default
"""
import os
import sys

# (in, out, what): each distinct projection once, with who has it.
PROJECTIONS = [
    (4096, 4096, "Llama-2-7B Q/K/V/O, Mistral-7B Q/O"),
    (4096, 11008, "Llama-2-7B FFN up/gate"),
    (11008, 4096, "Llama-2-7B FFN down"),
    (3584, 3584, "Qwen2-7B Q/O"),
    (3584, 512, "Qwen2-7B K/V"),
    (3584, 18944, "Qwen2-7B FFN up/gate"),
    (18944, 3584, "Qwen2-7B FFN down"),
    (3072, 3072, "Phi-3-mini Q/K/V/O"),
    (3072, 8192, "Phi-3-mini FFN up/gate"),
    (8192, 3072, "Phi-3-mini FFN down"),
    (4096, 1024, "Mistral-7B K/V"),
    (4096, 14336, "Mistral-7B / Mixtral expert FFN up/gate"),
    (14336, 4096, "Mistral-7B / Mixtral expert FFN down"),
]

# Token counts per projection, larger on the smaller ones (by in x out).
PREFILL = {
    (3584, 512): (2048, 4096),
    (4096, 1024): (2048, 4096),
    (3072, 3072): (1024, 4096),
    (3584, 3584): (512, 2048),
    (4096, 4096): (256, 1024),
    (3072, 8192): (512, 2048),
    (8192, 3072): (256, 1024),
    (4096, 11008): (256, 1024),
    (11008, 4096): (256, 512),
    (4096, 14336): (256, 512),
    (14336, 4096): (256, 1024),
    (3584, 18944): (256, 512),
    (18944, 3584): (256, 1024),
}
DECODE_A, DECODE_B = (1, 32), (8, 64)  # alternate between projections

HEADER = """# {name}: {what}, {count} shapes ({gflop:.0f} GFLOP a pass), written by make-llm.py
# (its docstring lists the families and sizes). Lines: M N K, then # the projection.
# Two orientations of the same products, one file each:
#   numpy (row-major NN): C[tokens x out] = X[tokens x in] W[in x out]: M = tokens, N = out, K = in
#     ({numpy_file})
#   PyTorch nn.Linear: column-major sgemm, op(A) = A^T ("TN"): M = out, N = tokens, K = in
#     ({torch_file})
# This file is the {orientation} one:
#   sfc-tune bench --shapes data/grids/{name}.shapes {command}
# M N K
"""

COMMANDS = {"numpy": "--layout row --trans NN --threads 2 --vs openblas,onednn",
            "torch": "--layout col --trans TN --threads 2 --vs openblas,onednn"}


def shapes(decode):
    rows = []
    for index, (k_in, out, what) in enumerate(PROJECTIONS):
        tokens = (DECODE_A if index % 2 == 0 else DECODE_B) if decode else PREFILL[(k_in, out)]
        for t in tokens:
            rows.append((t, out, k_in, f"{what}, {t} token{'s' if t > 1 else ''}"))
    return rows


def write(path, stem, what, rows, orientation):
    name = stem + ("-torch" if orientation == "torch" else "")
    gflop = sum(2 * t * out * k for t, out, k, _ in rows) / 1e9
    with open(path, "w") as f:
        f.write(HEADER.format(name=name, what=what, count=len(rows), gflop=gflop, orientation=orientation,
                              numpy_file=stem + ".shapes", torch_file=stem + "-torch.shapes",
                              command=COMMANDS[orientation]))
        seen = set()
        for t, out, k, note in rows:
            m, n = (t, out) if orientation == "numpy" else (out, t)
            assert (m, n, k) not in seen, (m, n, k)
            seen.add((m, n, k))
            f.write(f"{m} {n} {k}  # {note}\n")


def main():
    here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for decode, stem, what in ((False, "llm", "LLM prefill projections"),
                               (True, "llm-decode", "LLM decode projections")):
        rows = shapes(decode)
        write(os.path.join(here, stem + ".shapes"), stem, what, rows, "numpy")
        write(os.path.join(here, stem + "-torch.shapes"), stem, what, rows, "torch")


if __name__ == "__main__":
    main()
