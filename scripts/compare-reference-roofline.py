#!/usr/bin/env python3
"""The paper's reference roofline predictor, scored on fully timed shapes (issue 16, item 3).

The reference (libxsmm/tpp-pytorch-extension, src/csrc/sfc_ca_gemm/roofline_predictor.c) picks K_layers
by a roofline over m/n team splits of each layer's threads: the first kernel call of a thread reads its A
and B slabs from memory, each further row (column) of its team's tiles one new A (B) slab, the rest come
from L2; C is written once and, with layers, reduced. k_block_factor is then the smallest that keeps
min(4, rows) A slabs and min(4, columns) B slabs of one round within half of L2. This script re-states that
rule (nothing is copied from it) with this machine's numbers -- gamma, beta and L2 from the database -- and
the block sizes the engine ran with, and prints the regret of its answers on every shape of the database:

    python3 scripts/compare-reference-roofline.py TEST_DB [--train-db DB] [--layout blocked|row|col]
            [--dtype f32|f64|bf16] [--threads 2] [--beyond 2048]

Regret is time(answer) / time(best) - 1 over the stored fastest runs, as `sfc-tune evaluate` computes it;
a database tuned with --prune has only a screening run for some configurations, so use a fully timed one.
Two variants are printed: as written (K_layers up to 8) and with K_layers at most the thread count (the
reference assumes at least one thread per layer; see docs/predictor.md).
"""
import argparse
import math
import sqlite3
import statistics
import sys

ELEMENT_BYTES = {"f32": 4, "f64": 8, "bf16": 2}


def reference_answer(m, n, k, bm, bn, esize, threads, gamma, beta, l2_bytes, most_layers):
    """(K_layers, k_block_factor) of the reference's rule; gamma in GFLOP/s per core, beta in GB/s."""
    bandwidth = beta / threads  # GB/s per core, as the reference's bw_per_core
    m_tasks, n_tasks = math.ceil(m / bm), math.ceil(n / bn)  # the engine pads to whole blocks
    best = (0.0, 1, 1)
    for layers in range(1, most_layers + 1):
        layer_threads = math.ceil(threads / layers)
        layer_k = math.ceil(k / layers)
        call_gflop = 2.0 * bm * bn * layer_k / 1e9
        a_gb, b_gb, c_gb = (x * esize / 2**30 for x in (bm * layer_k, bn * layer_k, bm * bn))
        compute = call_gflop / gamma
        for m_teams in range(1, layer_threads + 1):
            n_teams = layer_threads // m_teams
            rows, cols = math.ceil(m_tasks / m_teams), math.ceil(n_tasks / n_teams)
            calls = rows * cols
            seconds = (max(compute, (a_gb + b_gb) / bandwidth) + (rows - 1) * max(compute, a_gb / bandwidth) +
                       (cols - 1) * max(compute, b_gb / bandwidth) + (calls - rows - cols + 1) * compute +
                       calls * c_gb / bandwidth)
            if layers > 1:
                seconds += math.ceil(m_tasks * n_tasks / threads) * layers * c_gb / bandwidth
            rounds, a_round, b_round = 1, a_gb, b_gb
            reuse_a, reuse_b = min(4, rows), min(4, cols)
            while reuse_a * a_round + reuse_b * b_round > 0.5 * l2_bytes / 2**30 and rounds < 8:
                rounds += 1
                round_k = math.ceil(layer_k / rounds)
                a_round, b_round = bm * round_k * esize / 2**30, bn * round_k * esize / 2**30
            rate = 2.0 * m * n * k / 1e9 / seconds
            if rate > best[0]:
                best = (rate, layers, rounds)
    return best[1], best[2]


def load(path, dtype, threads, layout):
    """{shape: {(K_layers, k_block_factor): fastest seconds}}, {shape: (bm, bn)} from full timings."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    times, blocks = {}, {}
    rows = db.execute(
        "SELECT s.m, s.n, s.k, x.k_layers, x.k_block_factor, MIN(x.min_s), x.bm, x.bn FROM measurements x "
        "JOIN shapes s ON s.id = x.shape_id WHERE x.dtype = ? AND x.threads = ? AND x.layout = ? "
        "AND x.screening = 0 GROUP BY s.id, x.k_layers, x.k_block_factor", (dtype, threads, layout))
    for m, n, k, layers, rounds, seconds, bm, bn in rows:
        times.setdefault((m, n, k), {})[(layers, rounds)] = seconds
        blocks[(m, n, k)] = (bm, bn)
    return times, blocks


def machine(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    calibration = db.execute("SELECT gamma_gflops_per_core, beta_gbytes_per_s FROM calibrations").fetchone()
    l2 = db.execute("SELECT l2_bytes FROM platforms").fetchone()
    if not calibration or not l2:
        sys.exit(f"{path} has no calibration or platform: run sfc-tune calibrate --db {path}")
    return calibration[0], calibration[1], l2[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("test_db")
    p.add_argument("--train-db", help="database whose calibration to use (default: the test database's)")
    p.add_argument("--layout", default="blocked", choices=("blocked", "row", "col"))
    p.add_argument("--dtype", default="f32", choices=tuple(ELEMENT_BYTES))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--beyond", type=int, default=0, help="only shapes with a dimension beyond this")
    a = p.parse_args()
    gamma, beta, l2 = machine(a.train_db or a.test_db)
    times, blocks = load(a.test_db, a.dtype, a.threads, a.layout)
    shapes = [s for s in times if max(s) > a.beyond and len(times[s]) == 64]
    if not shapes:
        sys.exit(f"{a.test_db}: no fully timed {a.dtype} shapes ({a.layout}, {a.threads} threads)")
    print(f"{len(shapes)} shapes of {a.test_db} ({a.dtype}, {a.layout}, {a.threads} threads; "
          f"gamma {gamma:.1f} GFLOP/s per core, beta {beta:.1f} GB/s, L2 {l2 >> 10} KiB)")
    for label, most_layers in (("as written (K_layers <= 8)", 8), (f"K_layers <= {a.threads}", a.threads)):
        regrets = []
        for s in shapes:
            answer = reference_answer(*s, *blocks[s], ELEMENT_BYTES[a.dtype], a.threads, gamma, beta, l2,
                                      most_layers)
            regrets.append(max(0.0, times[s][answer] / min(times[s].values()) - 1))
        regrets.sort()
        p95 = regrets[round(0.95 * (len(regrets) - 1))]
        print(f"reference, {label:27s} mean {100 * statistics.mean(regrets):5.2f}%  "
              f"median {100 * statistics.median(regrets):5.2f}%  p95 {100 * p95:5.2f}%  max {100 * regrets[-1]:6.2f}%")


if __name__ == "__main__":
    main()
