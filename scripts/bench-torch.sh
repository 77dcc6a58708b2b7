#!/usr/bin/env bash
# Debian's PyTorch with and without LD_PRELOAD=libsfcblas.so, side by side:
# a transformer encoder layer's forward pass (d_model 1024, 16 heads, FFN 4096)
# at batch 4 x 512 tokens (prefill), batch 1 x 1 token and batch 8 x 1 token
# (decode steps), PAIRS alternating process pairs (default 5), each process
# timing REPS passes (decode: 200 times as many) after warm-up passes and
# keeping the fastest and the median. Prints each pair's ratio of medians
# (plain time / preloaded time: above 1 the drop-in is faster), the median of
# those ratios and of the fastest passes' ratios, peak memory (max RSS) and the
# drop-in's routing.
# OpenBLAS picks its own kernels (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset
# for these commands only); threads: THREADS (default 2); PRELOAD_ENV: more
# VAR=VALUE settings for the preloaded side only, PLAIN_ENV for the plain side.
#   SFC_TUNING=data/tables/HASH-f32-t2.table bash scripts/bench-torch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
library=$(realpath "${SFCBLAS:-build/lib/libsfcblas.so}")
pairs=${PAIRS:-5}
reps=${REPS:-5}
threads=${THREADS:-2}
script=$(mktemp --suffix=.py)
trap 'rm -f "$script"' EXIT
cat > "$script" <<'PY'
import ctypes, json, resource, sys, time
import torch
threads, reps = int(sys.argv[1]), int(sys.argv[2])
torch.manual_seed(0)
torch.set_num_threads(threads)
layer = torch.nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096, batch_first=True).eval()
out = {}
with torch.no_grad():
    for name, (batch, tokens) in {"prefill 4x512": (4, 512), "decode 1x1": (1, 1), "decode 8x1": (8, 1)}.items():
        x = torch.randn(batch, tokens, 1024)
        n = reps if tokens > 1 else reps * 200
        for _ in range(2 if tokens > 1 else 20):
            layer(x)
        times = []
        for _ in range(n):
            t = time.perf_counter(); layer(x); times.append(time.perf_counter() - t)
        times.sort()
        out[name] = [times[0], times[len(times) // 2]]
out["max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
try:
    routing = ctypes.CDLL(None).sfc_blas_routing
    routing.restype = ctypes.c_char_p
    out["routing"] = json.loads(routing())
except AttributeError:
    pass
print(json.dumps(out))
PY
run() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$@" /usr/bin/python3 "$script" "$threads" "$reps"; }
echo "# $(date -u +%F) $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; torch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)'), $threads threads"
echo "# command: SFC_TUNING=${SFC_TUNING:-unset} PAIRS=$pairs REPS=$reps THREADS=$threads PRELOAD_ENV='${PRELOAD_ENV:-}' PLAIN_ENV='${PLAIN_ENV:-}' bash scripts/bench-torch.sh"
results=$(mktemp)
# Both sides get environments of one size (NO_PRELOAD stands in for
# LD_PRELOAD), padded by another amount each pair: a process's layout moves
# with its environment, and a short call's speed with the layout
# (scripts/bench-numpy.sh says more).
pad() { head -c "$1" /dev/zero | tr '\0' x; }
for ((p = 1; p <= pairs; ++p)); do
  layout=$(pad $(((p * 1361 + 48) % 4096)))
  plain=$(run SFC_BENCH_LAYOUT="$layout" NO_PRELOAD="$library" ${PLAIN_ENV:-})
  preloaded=$(run SFC_BENCH_LAYOUT="$layout" LD_PRELOAD="$library" ${PRELOAD_ENV:-})
  printf "%s\t%s\n" "$plain" "$preloaded" >> "$results"
done
/usr/bin/python3 - "$results" <<'PY'
import json, statistics, sys
rows = [line.split("\t", 1) for line in open(sys.argv[1]) if line.strip()]
pairs = [(json.loads(a), json.loads(b)) for a, b in rows]
names = [k for k in pairs[0][0] if k not in ("max_rss_mib", "routing")]
print(f"{'workload':14} {'plain ms (min/med)':>19} {'+sfcblas ms':>15} {'ratio of medians per pair':>36} "
      f"{'median':>7} {'of mins':>8}")
for name in names:
    ratios = [a[name][1] / b[name][1] for a, b in pairs]
    fastest = [a[name][0] / b[name][0] for a, b in pairs]
    med = lambda side: statistics.median(p[side][name][1] for p in pairs) * 1e3
    low = lambda side: min(p[side][name][0] for p in pairs) * 1e3
    print(f"{name:14} {low(0):9.2f}/{med(0):<9.2f} {low(1):7.2f}/{med(1):<7.2f} "
          f"{' '.join(f'{r:.3f}' for r in ratios):>36} {statistics.median(ratios):7.3f} "
          f"{statistics.median(fastest):8.3f}")
print(f"peak memory (max RSS): plain {max(a['max_rss_mib'] for a, _ in pairs):.0f} MiB, "
      f"+sfcblas {max(b['max_rss_mib'] for _, b in pairs):.0f} MiB")
r = pairs[-1][1].get("routing", {})
print(f"routing (last preloaded process): {r.get('sfc_calls')} calls on SFC-CA, {r.get('fallback_calls')} on "
      f"{r.get('fallback')}; {r.get('reasons')}")
PY
rm -f "$results"
