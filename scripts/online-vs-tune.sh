#!/usr/bin/env bash
# Online tuning against exhaustive tuning, shape by shape: each shape of a
# tuned database (REFERENCE, default record-transformer.db, which
# scripts/record-transformer.sh fills with `tune --from-record --prune`) is
# called CALLS times by numpy through the drop-in BLAS with SFC_TUNE=online
# into a fresh database, so that online tuning picks its winner within its
# budget; then the online winner and the exhaustive one are timed side by
# side (`sfc-tune gemm`, row-major, alternated, best of ROUNDS) and the
# ratio printed. The same configuration counts 1.000 without timing. CALLS
# (default 40) must cover what the online tuner may spend on a fast shape:
# 6 candidates x 3 rounds x 2 calls (sfc/online_tuner.hpp); an online run
# that did not finish leaves no exact answer and is marked "?".
#   bash scripts/online-vs-tune.sh                  # the first 10 shapes of record-transformer.db
#   REFERENCE=my.db SHAPES=12 CALLS=16 bash scripts/online-vs-tune.sh
# TUNING (SFC_TUNING for the online run, default: this machine's shipped table
# in data/tables when there is one) gives online tuning its neighbours.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-build/bin}
library=${SFCBLAS:-build/lib/libsfcblas.so}
reference=${REFERENCE:-record-transformer.db}
count=${SHAPES:-10} calls=${CALLS:-40} rounds=${ROUNDS:-3} budget=${SFC_TUNE_BUDGET_MS:-500}
if [ -z "${TUNING+set}" ]; then
  TUNING=$(ls data/tables/"$("$bin/sfc-tune" db info --db "$reference" --json 2>/dev/null |
    sed -n 's/.*"hash":"\([0-9a-f]*\)".*/\1/p' | head -1)"-f32-t2.table 2>/dev/null | head -1 || true)
fi
[ -e "$reference" ] || { echo "online-vs-tune: $reference not found (run scripts/record-transformer.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The reference's row-major shapes and their exhaustive winners.
"$bin/sfc-tune" export --db "$reference" --format csv -o "$work/winners.csv" >/dev/null 2>&1
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
         $col["layout"] == "row" { print $col["m"], $col["n"], $col["k"], $col["k_layers"], $col["k_block_factor"] }' \
  "$work/winners.csv" | head -n "$count" >"$work/shapes"

cat >"$work/calls.py" <<'PY'
import sys
import numpy as np
calls = int(sys.argv[1])
rng = np.random.default_rng(3)
for line in open(sys.argv[2]):
    m, n, k = (int(x) for x in line.split()[:3])
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    for _ in range(calls):
        c = a @ b
PY
SFC_TUNING="$TUNING" SFC_TUNE=online SFC_TUNE_DB="$work/online.db" SFC_TUNE_BUDGET_MS="$budget" SFC_BLAS_MIN_FLOPS=0 \
  LD_PRELOAD="$library" /usr/bin/python3 "$work/calls.py" "$calls" "$work/shapes"

best_ms() {  # M N K KL KBF: the best of `rounds` timings (each the min of 10 cold runs)
  local best=""
  for _ in $(seq "$rounds"); do
    t=$("$bin/sfc-tune" gemm "$1" "$2" "$3" --layout row --k-layers "$4" --kbf "$5" --reps 10 --json 2>/dev/null |
        sed -n 's/.*"min_seconds":\([0-9.e+-]*\).*/\1/p')
    best=$(awk -v a="$best" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
  done
  awk -v t="$best" 'BEGIN { printf "%.3f", t * 1e3 }'
}

echo "# $(date -u +%F) $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; online budget ${budget} ms, $calls calls per shape, SFC_TUNING=${TUNING:-none}"
printf '%-16s %-9s %-9s %10s %10s %8s\n' shape exhaustive online "exh. ms" "online ms" ratio
while read -r m n k kl kbf; do
  answer=$("$bin/sfc-tune" query "$m" "$n" "$k" --db "$work/online.db" --layout row --threads 2 2>/dev/null || true)
  okl=$(sed -n 's/.*k_layers=\([0-9]*\).*/\1/p' <<<"$answer") okbf=$(sed -n 's/.*k_block_factor=\([0-9]*\).*/\1/p' <<<"$answer")
  tier=$(sed -n 's/.*(tier \([a-z]*\).*/\1/p' <<<"$answer")
  if [ "$okl,$okbf" = "$kl,$kbf" ]; then
    printf '%-16s %-9s %-9s %10s %10s %8s\n' "${m}x${n}x${k}" "($kl,$kbf)" "($okl,$okbf)" - - "1.000"
    continue
  fi
  exhaustive=$(best_ms "$m" "$n" "$k" "$kl" "$kbf") online=$(best_ms "$m" "$n" "$k" "$okl" "$okbf")
  printf '%-16s %-9s %-9s %10s %10s %8s\n' "${m}x${n}x${k}" "($kl,$kbf)" "($okl,$okbf)$([ "$tier" = exact ] || echo "?")" \
    "$exhaustive" "$online" "$(awk -v e="$exhaustive" -v o="$online" 'BEGIN { printf "%.3f", o / e }')"
done <"$work/shapes"
