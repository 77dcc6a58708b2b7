#!/usr/bin/env python3
"""Writes data/grids/wide.shapes: the training set over the range users run.

M and N from 64 to 16384, K from 64 to 32768, drawn log-uniformly (so skinny
and square shapes, small and large dimensions are all present) and kept only
where one GEMM costs at most MAX_GFLOP and every matrix fits MAX_MIB in fp32:
what a 2-core machine can tune exhaustively (with pruning and a time budget
per configuration) in about an hour. Dimensions are multiples of 32, as most
application shapes are. Deterministic (fixed seed):

    python3 data/grids/make-wide.py > data/grids/wide.shapes                # training
    python3 data/grids/make-wide.py 48 7 > data/grids/wide-test.shapes      # never trained on
"""
import random
import sys

COUNT, SEED = 240, 16
MAX_GFLOP, MAX_MIB = 16.0, 256
LOG2_RANGE = {"m": (6, 14), "n": (6, 14), "k": (6, 15)}


def draw(rng):
    dims = {}
    for name, (lo, hi) in LOG2_RANGE.items():
        dims[name] = max(64, int(round(2 ** rng.uniform(lo, hi) / 32)) * 32)
    return dims["m"], dims["n"], dims["k"]


def fits(m, n, k, max_gflop=MAX_GFLOP):
    largest = max(m * k, k * n, m * n) * 4 / 2**20
    return 2 * m * n * k / 1e9 <= max_gflop and largest <= MAX_MIB


def grow(count, draw_one, keep):
    """Draws shapes with draw_one(shapes so far) until `count` distinct ones pass keep(shape)."""
    shapes = set()
    while len(shapes) < count:
        shape = draw_one(shapes)
        if keep(shape):
            shapes.add(shape)
    return shapes


def emit(shapes, header):
    """Prints the header lines as comments, then the shapes sorted; the GFLOP total to stderr."""
    for line in header:
        print(f"# {line}")
    total = 0.0
    for m, n, k in sorted(shapes):
        print(m, n, k)
        total += 2 * m * n * k / 1e9
    print(f"# {total:.1f} GFLOP in all", file=sys.stderr)


def main():
    count, seed = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) == 3 else (COUNT, SEED)
    rng = random.Random(seed)
    shapes = grow(count, lambda _: draw(rng), lambda shape: fits(*shape))
    emit(shapes, [f"{count} shapes, M, N in 64..16384, K in 64..32768 (log-uniform, multiples of 32),",
                  f"at most {MAX_GFLOP:g} GFLOP and {MAX_MIB} MiB per fp32 matrix; made by data/grids/make-wide.py {count} {seed}"])


if __name__ == "__main__":
    main()
