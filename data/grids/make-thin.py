#!/usr/bin/env python3
"""Writes data/grids/thin.shapes: training shapes with one dimension below 64.

The wide set (make-wide.py) starts at 64 in every dimension, so a call such as
8x4096x4096 or 4096x4096x16 lies 3-6 octaves from any tuned shape and the
policy hands it to the model. These shapes fill that corner: one of M, N, K
drawn log-uniformly in 1..63 (any integer: thin dimensions in applications are
batch sizes, heads, ranks, rarely multiples of 32), the other two log-uniformly
in 256..16384 (half of them odd, as the primes of data/grids/skinny.shapes
are). Capped like the wide set (make-wide.py), at most MAX_GFLOP per GEMM.
None is a shape of skinny.shapes, which stays a test set. Deterministic
(fixed seed):

    python3 data/grids/make-thin.py > data/grids/thin.shapes
"""
import importlib
import random
import sys

wide = importlib.import_module("make-wide")  # fits(), grow(), emit(): the same caps and output

COUNT, SEED = 60, 5
MAX_GFLOP = 4.0
THIN_LOG2, WIDE_LOG2 = (0, 6), (8, 14)


def skinny_test_shapes():
    with open(__file__.replace("make-thin.py", "skinny.shapes")) as f:
        return {tuple(map(int, line.split())) for line in f if line.strip() and not line.startswith("#")}


def dimension(rng, lo, hi, odd):
    value = max(2**lo, min(2**hi - 1, int(round(2 ** rng.uniform(lo, hi)))))
    return value | 1 if odd else value


def draw(rng, thin_axis):
    odd = rng.random() < 0.5
    dims = [dimension(rng, *WIDE_LOG2, odd) if odd else 32 * max(8, round(dimension(rng, *WIDE_LOG2, False) / 32))
            for _ in range(3)]
    dims[thin_axis] = dimension(rng, *THIN_LOG2, False)
    return tuple(dims)


def main():
    count, seed = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) == 3 else (COUNT, SEED)
    rng = random.Random(seed)
    excluded = skinny_test_shapes()
    shapes = wide.grow(count, lambda shapes: draw(rng, len(shapes) % 3),  # M, N and K thin in turn
                       lambda shape: wide.fits(*shape, max_gflop=MAX_GFLOP) and shape not in excluded)
    wide.emit(shapes, [f"{count} shapes, one of M, N, K in 1..63, the others in 256..16384 (half odd),",
                       f"at most {MAX_GFLOP:g} GFLOP and {wide.MAX_MIB} MiB per fp32 matrix; made by data/grids/make-thin.py {count} {seed}"])


if __name__ == "__main__":
    main()
