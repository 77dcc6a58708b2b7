#!/usr/bin/env python3
"""Writes data/grids/thin.shapes: training shapes with one dimension below 64.

The wide set (make-wide.py) starts at 64 in every dimension, so a call such as
8x4096x4096 or 4096x4096x16 lies 3-6 octaves from any tuned shape and the
policy hands it to the model. These shapes fill that corner: one of M, N, K
drawn log-uniformly in 1..63 (any integer: thin dimensions in applications are
batch sizes, heads, ranks, rarely multiples of 32), the other two log-uniformly
in 256..16384 (half of them odd, as the primes of data/grids/skinny.shapes
are). Capped like the wide set, at most MAX_GFLOP per GEMM and MAX_MIB per
fp32 matrix. None is a shape of skinny.shapes, which stays a test set.
Deterministic (fixed seed):

    python3 data/grids/make-thin.py > data/grids/thin.shapes
"""
import random
import sys

COUNT, SEED = 60, 5
MAX_GFLOP, MAX_MIB = 4.0, 256
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


def fits(m, n, k):
    largest = max(m * k, k * n, m * n) * 4 / 2**20
    return 2 * m * n * k / 1e9 <= MAX_GFLOP and largest <= MAX_MIB


def main():
    count, seed = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) == 3 else (COUNT, SEED)
    rng = random.Random(seed)
    excluded = skinny_test_shapes()
    shapes = set()
    while len(shapes) < count:
        shape = draw(rng, len(shapes) % 3)  # M, N and K thin in turn
        if fits(*shape) and shape not in excluded:
            shapes.add(shape)
    print(f"# {count} shapes, one of M, N, K in 1..63, the others in 256..16384 (half odd),")
    print(f"# at most {MAX_GFLOP:g} GFLOP and {MAX_MIB} MiB per fp32 matrix; made by data/grids/make-thin.py {count} {seed}")
    total = 0.0
    for m, n, k in sorted(shapes):
        print(m, n, k)
        total += 2 * m * n * k / 1e9
    print(f"# {total:.1f} GFLOP in all", file=sys.stderr)


if __name__ == "__main__":
    main()
