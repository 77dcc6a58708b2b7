#!/usr/bin/env python3
"""Offline test of feature spaces for the sfc-tune nearest-neighbour predictor.

Reads the stored tuning tables (read only), groups shapes by (table, dtype,
layout), and for each feature space measures the regret of the 'nearest' and
'vote' (k=4) rules in leave-one-out and in a range hold-out (train on
M,N,K <= 2048, test on the rest). Writes a Markdown report (default
build/feature-study.md) and prints a summary.

Format (model/include/sfc/tuning_table.hpp, model/src/tuning_table.cpp):
  shape M N K dtype threads layout KL KBF t_0 .. t_63
  t_i = fastest cold run (seconds) of configuration i = (KL-1)*8 + (KBF-1)
  (Knobs::index(), K_layers major); 'nan' = not measured.
Regret (predictor/src/shape_group.hpp): throughput = min(1, best/t) with
best = the winner's time (config_predictor.cpp best_seconds), 0 if not
measured; regret = min(1/throughput - 1, 1), 1 where not measured.
Vote: k nearest, weight 1/(d + 1/8), argmax of the weighted sum of
throughputs, first (lowest index) maximum wins.

Run: python3 scripts/feature-study.py [REPORT.md]   (plain Python, ~15 s)
Measured on 2026-12-03: docs/predictor.md, "Which features decide".
"""
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE_DIR = os.path.join(ROOT, "data", "tables")
PREFIXES = ["325b11a8b1d2c7c6", "18c7acc374978ea4", "a3462abaea1cc6bb"]
DTYPES = ["f32", "bf16"]
LAYOUTS = ["blocked", "row"]
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "feature-study.md")
NCONF = 64
BM = BN = 64          # block_target_mn in core/src/blocking.cpp
VOTE_K = 4
FLOOR = 0.125         # vote_distance_floor
HOLDOUT_MAX = 2048
DISTS = [0.5, 1.0]    # optional distance-restricted LOO
FRACS = [0.5, 0.8]    # closest fraction of shapes (comparable across spaces)


def load(path):
    plat = {}
    shapes = []
    with open(path) as f:
        for line in f:
            t = line.split()
            if not t:
                continue
            if t[0] == "platform":
                plat[t[1]] = " ".join(t[2:])
            elif t[0] == "shape":
                assert len(t) == 9 + NCONF, path
                m, n, k = int(t[1]), int(t[2]), int(t[3])
                kl, kbf = int(t[7]), int(t[8])
                secs = [float(x) for x in t[9:]]
                win = (kl - 1) * 8 + (kbf - 1)
                best = secs[win]
                if not (best > 0):  # never in these tables (the parser rejects it)
                    best = min(s for s in secs if s > 0)
                thr = [min(1.0, best / s) if s > 0 else 0.0 for s in secs]  # nan > 0 is False
                shapes.append(dict(m=m, n=n, k=k, dtype=t[4], threads=int(t[5]),
                                   layout=t[6], win=win, thr=thr))
    return plat, shapes


def regret(s, c):
    t = s["thr"][c]
    return min(1.0 / t - 1.0, 1.0) if t > 0 else 1.0


# ---------------------------------------------------------------- features
def base(s, elem, l2, T):
    m, n, k = s["m"], s["n"], s["k"]
    gm, gn = math.ceil(m / BM), math.ceil(n / BN)
    tiles = gm * gn
    p = max(tiles / T, 1.0 / T)
    # square-ish patch of p tiles, each side at least 1 and at most the grid's side
    h = min(max(math.sqrt(p), 1.0), gm)
    w = min(max(p / h, 1.0), gn)
    bm_eff, bn_eff = min(BM, m), min(BN, n)  # a dimension below one block is one block of itself
    foot = (h * bm_eff + w * bn_eff) * k * elem
    L = math.log2
    return dict(lm=L(m), ln=L(n), lk=L(k), lp=L(p), lf=L(foot / l2),
                lmin=L(min(m, n)), lmax=L(max(m, n)))


SPACES = [
    ("F0", "log2 M, N, K (today)", lambda b: (b["lm"], b["ln"], b["lk"])),
    ("F1", "F0 + log2 tiles/thread", lambda b: (b["lm"], b["ln"], b["lk"], b["lp"])),
    ("F2", "log2 tiles/thread, log2 K", lambda b: (b["lp"], b["lk"])),
    ("F3", "log2 tiles/thread, log2 footprint/L2", lambda b: (b["lp"], b["lf"])),
    ("F4", "F0 + log2 footprint/L2", lambda b: (b["lm"], b["ln"], b["lk"], b["lf"])),
    ("F5a", "F0, K axis x2", lambda b: (b["lm"], b["ln"], 2 * b["lk"])),
    ("F5b", "F0, K axis x0.5", lambda b: (b["lm"], b["ln"], 0.5 * b["lk"])),
    ("F6", "log2 min(M,N), max(M,N), K", lambda b: (b["lmin"], b["lmax"], b["lk"])),
    # extras
    ("X1", "F0 standardised (per-axis z-score on the training set)", "std:F0"),
    ("X2", "F1 standardised", "std:F1"),
    ("X3", "F6 + log2 tiles/thread", lambda b: (b["lmin"], b["lmax"], b["lk"], b["lp"])),
    ("X4", "F0, M,N axes x0.5 + log2 tiles/thread", lambda b: (0.5 * b["lm"], 0.5 * b["ln"], b["lk"], b["lp"])),
]
SPACE_FN = {name: fn for name, _, fn in SPACES}


def points_for(space, bases, train_idx):
    fn = SPACE_FN[space]
    if isinstance(fn, str):  # standardised: mean/std of the training shapes only
        raw = [SPACE_FN[fn[4:]](b) for b in bases]
        dim = len(raw[0])
        mu = [sum(raw[i][d] for i in train_idx) / len(train_idx) for d in range(dim)]
        sd = [math.sqrt(sum((raw[i][d] - mu[d]) ** 2 for i in train_idx) / len(train_idx)) or 1.0
              for d in range(dim)]
        # rescale so the mean per-axis scale stays in log2 units (distances comparable to F0)
        avg = sum(sd) / dim
        return [tuple((r[d] - mu[d]) / sd[d] * avg for d in range(dim)) for r in raw]
    return [fn(b) for b in bases]


# ---------------------------------------------------------------- predictors
def neighbours(pts, q, train_idx, skip, k):
    """k nearest of train_idx (not skip): list of (distance, index), ties by index."""
    qp = pts[q]
    cand = []
    for j in train_idx:
        if j == skip:
            continue
        pj = pts[j]
        d2 = 0.0
        for a, b in zip(qp, pj):
            d2 += (a - b) ** 2
        cand.append((d2, j))
    cand.sort()
    return [(math.sqrt(d2), j) for d2, j in cand[:k]]


def vote(shapes, nb):
    score = [0.0] * NCONF
    for d, j in nb:
        w = 1.0 / (d + FLOOR)
        row = shapes[j]["thr"]
        for c in range(NCONF):
            score[c] += w * row[c]
    best = 0
    for c in range(1, NCONF):
        if score[c] > score[best]:
            best = c
    return best


def evaluate(shapes, pts, train_idx, test_idx, loo):
    near, vt, dist = [], [], []
    for i in test_idx:
        nb = neighbours(pts, i, train_idx, i if loo else -1, VOTE_K)
        dist.append(nb[0][0])
        near.append(regret(shapes[i], shapes[nb[0][1]]["win"]))
        vt.append(regret(shapes[i], vote(shapes, nb)))
    return near, vt, dist


def mean(xs):
    return 100.0 * sum(xs) / len(xs) if xs else float("nan")


def p95(xs):
    if not xs:
        return float("nan")
    s = sorted(xs)
    return 100.0 * s[max(0, math.ceil(0.95 * len(s)) - 1)]


CONCLUSION = """## Conclusion

What these figures said on 2026-12-03: docs/predictor.md, "Which features decide".
"""


# ---------------------------------------------------------------- main
def main():
    groups = []
    facts = []
    for pre in PREFIXES:
        for dt in DTYPES:
            path = os.path.join(TABLE_DIR, f"{pre}-{dt}-t2.table")
            plat, shapes = load(path)
            l2 = float(plat["l2_bytes"])
            elem = 4 if dt == "f32" else 2
            facts.append(f"- `{os.path.basename(path)}`: {len(shapes)} shapes, l2_bytes {int(l2)}, "
                         f"cpu '{plat.get('cpu_model')}', isa {plat.get('isa')}")
            for lay in LAYOUTS:
                g = [s for s in shapes if s["layout"] == lay]
                assert all(s["dtype"] == dt for s in g)
                T = g[0]["threads"]
                assert all(s["threads"] == T for s in g)
                groups.append((f"{pre[:6]}/{dt}/{lay}", g, [base(s, elem, l2, T) for s in g]))

    names = [n for n, _, _ in SPACES]
    # res[exp][space][group] = (near_mean, near_p95, vote_mean, vote_p95)
    res = {"loo": {}, "hold": {}}
    dres = {}   # distance-restricted LOO nearest/vote: dres[space][group] = list of (cov%, nmean, vmean)
    info = {}
    raw = {}    # per-shape regrets: raw[(exp, space)][group] = (nearest list, vote list)
    for gname, shapes, bases in groups:
        n = len(shapes)
        all_idx = list(range(n))
        train = [i for i, s in enumerate(shapes) if max(s["m"], s["n"], s["k"]) <= HOLDOUT_MAX]
        test = [i for i in all_idx if i not in set(train)]
        info[gname] = (n, len(train), len(test))
        for sp in names:
            pts = points_for(sp, bases, all_idx)
            ne, vo, di = evaluate(shapes, pts, all_idx, all_idx, True)
            res["loo"].setdefault(sp, {})[gname] = (mean(ne), p95(ne), mean(vo), p95(vo))
            raw.setdefault(("loo", sp), {})[gname] = (ne, vo)
            rows = []
            for d in DISTS:
                sel = [k for k in all_idx if di[k] <= d + 1e-12]
                rows.append((100.0 * len(sel) / n, mean([ne[k] for k in sel]), mean([vo[k] for k in sel])))
            order = sorted(all_idx, key=lambda k: (di[k], k))
            for fr in FRACS:
                sel = order[:max(1, int(round(fr * n)))]
                rows.append((100.0 * fr, mean([ne[k] for k in sel]), mean([vo[k] for k in sel])))
            dres.setdefault(sp, {})[gname] = rows
            ptsh = points_for(sp, bases, train)
            ne, vo, _ = evaluate(shapes, ptsh, train, test, False)
            res["hold"].setdefault(sp, {})[gname] = (mean(ne), p95(ne), mean(vo), p95(vo))
            raw.setdefault(("hold", sp), {})[gname] = (ne, vo)
        print(f"done {gname}", file=sys.stderr, flush=True)

    gnames = [g[0] for g in groups]
    out = []
    w = out.append
    w("# Feature spaces for the nearest-neighbour predictor (offline)\n")
    w("Rerun: `python3 scripts/feature-study.py` (plain Python, no numpy).\n")
    w("## Format facts confirmed from the code\n")
    w("- `model/include/sfc/tuning_table.hpp` / `model/src/tuning_table.cpp` (`sfc-table 3`): "
      "`shape M N K dtype threads layout KL KBF t_1..t_64`; KL KBF = the winner.")
    w("- Time i (0-based) is configuration index `(KL-1)*8 + (KBF-1)` (`Knobs::index()`, "
      "K_layers major: (1,1)=0, (1,2)=1, ..., (8,8)=63). Value = fastest cold run in seconds (%.6g).")
    w("- `nan` = not measured (the parser accepts only nan or 1e-12..1e6; a 0 is rejected). "
      "The winner's time must not be nan. No `nan` occurs in the six tables used.")
    w("- Regret as the predictor's fits (`shape_group.hpp`): throughput = min(1, t_winner/t_c) "
      "(`best_seconds` = the winner's time), 0 if not measured; regret = min(t_c/t_winner - 1, 1), "
      "1 if not measured. So regret is in [0, 1] (0..100%); a pruned screen faster than the winner counts 0.")
    w("- Vote (`ShapeGroup::vote`): k=4 nearest (default `vote_neighbours`), weight 1/(d + 1/8), "
      "score_c = sum w*throughput_c, argmax, lowest index on ties. Nearest: winner of the nearest shape.\n")
    w("## Data\n")
    out.extend(facts)
    w("")
    w("Groups (table prefix/dtype/layout): shapes, hold-out train (M,N,K all <= 2048), test:\n")
    for g in gnames:
        w(f"- {g}: {info[g][0]} shapes, train {info[g][1]}, test {info[g][2]}")
    w("\n## Assumptions\n")
    w("- T = threads = 2 (all shapes). bm = bn = 64 (`block_target_mn`, blocking.cpp) for fp32 and bf16; "
      "the tall-tile / thin-column special cases of blocking.cpp are ignored.")
    w("- tiles = ceil(M/64)*ceil(N/64); p = tiles/T (>= 1/T).")
    w("- footprint: h = clamp(sqrt(p), 1, ceil(M/64)), w = clamp(p/h, 1, ceil(N/64)); "
      "footprint = (h*min(64,M) + w*min(64,N)) * K * e (e = 4 f32, 2 bf16; a dimension below one block "
      "is one block of its own size); divided by the table's l2_bytes.")
    w("- Ties: neighbours ordered by (squared distance, position in the table), so exact-duplicate "
      "distances (common in F2/F3, which merge many shapes onto one point) go to the earlier table line.")
    w("- X1/X2: each axis z-scored with the training set's mean/std (LOO: the whole group; the "
      "one-left-out shape included, negligible), rescaled by the mean std so distances stay in ~log2 units.")
    w("- p95 = nearest-rank 95th percentile. All numbers in percent, cells `nearest mean/p95 | vote mean/p95`.\n")
    w("Feature spaces:\n")
    for n_, desc, _ in SPACES:
        w(f"- **{n_}**: {desc}")
    w("")

    def grid(cell, pair):
        """One row per feature space, one column per group, and the groups' average
        of the (nearest, vote) pair."""
        w("| space | " + " | ".join(gnames) + " | avg |")
        w("|---|" + "---|" * (len(gnames) + 1))
        for sp in names:
            av = [sum(pair(sp, g)[k] for g in gnames) / len(gnames) for k in (0, 1)]
            w(f"| {sp} | " + " | ".join(cell(sp, g) for g in gnames) + f" | {av[0]:.2f} \\| {av[1]:.2f} |")

    def table(exp, title):
        w(f"## {title}\n")
        grid(lambda sp, g: (lambda a: f"{a[0]:.1f}/{a[1]:.0f} \\| {a[2]:.1f}/{a[3]:.0f}")(res[exp][sp][g]),
             lambda sp, g: (res[exp][sp][g][0], res[exp][sp][g][2]))
        w("")
        w(f"Difference of mean regret vs F0 (points; negative = better), nearest | vote; "
          f"`+a/-b`: groups better / worse than F0 by more than 0.3 points:\n")
        w("| space | " + " | ".join(gnames) + " | nearest better/worse | vote better/worse |")
        w("|---|" + "---|" * (len(gnames) + 2))
        for sp in names:
            cells, nb, nw, vb, vw = [], 0, 0, 0, 0
            for g in gnames:
                dn = res[exp][sp][g][0] - res[exp]["F0"][g][0]
                dv = res[exp][sp][g][2] - res[exp]["F0"][g][2]
                nb += dn < -0.3; nw += dn > 0.3; vb += dv < -0.3; vw += dv > 0.3
                cells.append(f"{dn:+.1f} \\| {dv:+.1f}")
            w(f"| {sp} | " + " | ".join(cells) + f" | +{nb}/-{nw} | +{vb}/-{vw} |")
        w("")
        w("Pooled over all groups' shapes, paired per shape: mean difference vs F0 in points "
          "+- 2 standard errors (nearest | vote); |diff| > 2 SE is marked *:\n")
        w("| space | nearest diff +- 2SE | vote diff +- 2SE |")
        w("|---|---|---|")
        for sp in names:
            cells = []
            for r in (0, 1):
                d = []
                for g in gnames:
                    a, b = raw[(exp, sp)][g][r], raw[(exp, "F0")][g][r]
                    d.extend(100.0 * (x - y) for x, y in zip(a, b))
                mu = sum(d) / len(d)
                se = math.sqrt(sum((x - mu) ** 2 for x in d) / (len(d) - 1) / len(d))
                cells.append(f"{mu:+.2f} +- {2*se:.2f}{' *' if abs(mu) > 2*se and se > 0 else ''}")
            pooled[(exp, sp)] = cells
            w(f"| {sp} | " + " | ".join(cells) + " |")
        w("")

    pooled = {}
    table("loo", "Experiment 1: leave-one-out")
    table("hold", "Experiment 2: range hold-out (train M,N,K <= 2048, test the rest)")

    w("## Experiment 3: LOO restricted by nearest-neighbour distance\n")
    labels = [f"d<={d}" for d in DISTS] + [f"closest {int(f*100)}%" for f in FRACS]
    w("Cells: `coverage% : nearest mean | vote mean`. Distances are in each space's own units "
      "(not comparable across spaces); the 'closest x%' columns are (same coverage for every space).\n")
    for li, lab in enumerate(labels):
        w(f"### {lab}\n")
        grid(lambda sp, g: (lambda c: f"{c[0]:.0f}: {c[1]:.1f} \\| {c[2]:.1f}")(dres[sp][g][li]),
             lambda sp, g: (dres[sp][g][li][1], dres[sp][g][li][2]))
        w("")

    w(CONCLUSION)
    os.makedirs(os.path.dirname(os.path.abspath(OUT)), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(out) + "\n")
    # console summary
    for exp in ("loo", "hold"):
        print(f"== {exp}: average over groups of mean regret (nearest | vote); better/worse groups vs F0")
        for sp in names:
            av = [sum(res[exp][sp][g][k] for g in gnames) / len(gnames) for k in (0, 2)]
            nb = sum(res[exp][sp][g][0] - res[exp]["F0"][g][0] < -0.3 for g in gnames)
            nw = sum(res[exp][sp][g][0] - res[exp]["F0"][g][0] > 0.3 for g in gnames)
            vb = sum(res[exp][sp][g][2] - res[exp]["F0"][g][2] < -0.3 for g in gnames)
            vw = sum(res[exp][sp][g][2] - res[exp]["F0"][g][2] > 0.3 for g in gnames)
            print(f"{sp:4s} {av[0]:6.2f} {av[1]:6.2f}   near +{nb}/-{nw}  vote +{vb}/-{vw}   pooled diff: "
                  + " | ".join(pooled[(exp, sp)]))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
