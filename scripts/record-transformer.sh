#!/usr/bin/env bash
# Record, tune, run again: the GEMMs of a small transformer's prefill (the
# shapes of TinyLlama-1.1B: hidden 2048, MLP 5632, 32 query heads and 4 KV heads
# of 64) run by numpy with LD_PRELOAD=libsfcblas.so, once untuned with
# SFC_RECORD, then `tune --from-record` on what was recorded, then again with
# the tuned database. Prints the tier of every shape and the total GEMM time
# (the sum of SFC_VERBOSE's per-call times) before and after.
#
#   bash scripts/record-transformer.sh            # tokens 512 and 2048: 12 shapes
#   TOKENS="512" LAYERS=1 TUNE_ARGS="--budget 0.05" bash scripts/record-transformer.sh
#
# TUNE_ARGS go to `sfc-tune tune` (default: --prune, the full 64 configurations).
# The database (DB, default record-transformer.db) is kept: a rerun tunes nothing new.
# Takes tens of minutes on 2 cores with the default tuning; keep the machine quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-build/bin}
library=${SFCBLAS:-build/lib/libsfcblas.so}
db=${DB:-record-transformer.db}
tokens=${TOKENS:-"512 2048"}
layers=${LAYERS:-2}
read -r -a tune_args <<< "${TUNE_ARGS:---prune}"
for f in "$bin/sfc-tune" "$library"; do
  [ -e "$f" ] || { echo "record-transformer: $f not found: build first (cmake --build build)" >&2; exit 2; }
done
/usr/bin/python3 -c "import numpy" 2>/dev/null ||
  { echo "record-transformer: /usr/bin/python3 has no numpy (apt-get install python3-numpy)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/prefill.py" <<'PY'
# The projections and attention products of `layers` layers' prefill for
# each token count: every GEMM a float32 row-major a @ b, as numpy calls cblas_sgemm.
import sys
import numpy as np

hidden, mlp, heads, kv_heads, head_dim = 2048, 5632, 32, 4, 64
layers = int(sys.argv[1])
rng = np.random.default_rng(1)
weight = lambda k, n: rng.uniform(-0.02, 0.02, (k, n)).astype(np.float32)
w = {"q": weight(hidden, hidden), "k": weight(hidden, kv_heads * head_dim), "v": weight(hidden, kv_heads * head_dim),
     "o": weight(hidden, hidden), "gate": weight(hidden, mlp), "up": weight(hidden, mlp), "down": weight(mlp, hidden)}
for t in (int(x) for x in sys.argv[2:]):
    x = rng.uniform(-1, 1, (t, hidden)).astype(np.float32)
    for _ in range(layers):
        q, k, v = x @ w["q"], x @ w["k"], x @ w["v"]
        heads_out = []
        for h in range(heads):
            kv = h // (heads // kv_heads)
            qh = np.ascontiguousarray(q[:, h * head_dim:(h + 1) * head_dim])
            kh = np.ascontiguousarray(k[:, kv * head_dim:(kv + 1) * head_dim].T)
            vh = np.ascontiguousarray(v[:, kv * head_dim:(kv + 1) * head_dim])
            scores = qh @ kh                                  # t x t x 64
            heads_out.append(scores @ vh / np.float32(t))     # t x 64 x t
        x = x + np.concatenate(heads_out, axis=1) @ w["o"]
        x = x + (np.maximum(x @ w["gate"], 0) * (x @ w["up"])) @ w["down"]
PY

# One run of the prefill: its record and its SFC_VERBOSE lines.
prefill() {  # RECORD_FILE VERBOSE_FILE [SFC_TUNING]
  SFC_RECORD="$1" SFC_VERBOSE=1 SFC_BLAS_MIN_FLOPS=0 SFC_TUNING="${3:-}" LD_PRELOAD="$library" \
    /usr/bin/python3 "$work/prefill.py" "$layers" $tokens 2> "$2"
}
gemm_seconds() { awk -F'time_us=' '/^sfc_verbose,gemm,/ { s += $2 } END { printf "%.3f", s / 1e6 }' "$1"; }

echo "# $(date -u +%F) $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; tokens $tokens, $layers layers"
echo "## before: untuned (or what $db holds already)"
prefill "$work/before.record" "$work/before.log" "$([ -e "$db" ] && echo "$db")"
"$bin/sfc-tune" record show "$work/before.record"

echo "## tune --from-record ${tune_args[*]}"
"$bin/sfc-tune" tune --from-record "$work/before.record" --db "$db" --quiet "${tune_args[@]}"

echo "## after: SFC_TUNING=$db"
prefill "$work/after.record" "$work/after.log" "$db"
"$bin/sfc-tune" record show "$work/after.record" --db "$db"

echo "## total GEMM time (sum of SFC_VERBOSE's per-call times, first calls' plans included)"
before=$(gemm_seconds "$work/before.log") after=$(gemm_seconds "$work/after.log")
awk -v b="$before" -v a="$after" 'BEGIN { printf "before %.3f s, after %.3f s, ratio %.3f\n", b, a, (a > 0 ? b / a : 0) }'
