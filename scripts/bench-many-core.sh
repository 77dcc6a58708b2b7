#!/usr/bin/env bash
# The many-core figures, prepared to run in one call on a machine lent for a
# few minutes (16 cores, nothing installed, every second counted): SFC-CA GEMM
# against oneDNN (and OpenBLAS) on THREADS threads, most wanted run first.
#
#   bash scripts/bench-bundle.sh                  # here: build-bundle/sfc-tune-bundle.tar.gz
#   # there, with the tarball carried along (the bundle holds this script):
#   tar xzf sfc-tune-bundle.tar.gz -C /tmp && THREADS=16 BUDGET=480 /tmp/sfc-tune-bundle/bench-many-core.sh "$OUT"
#   bash scripts/bench-many-core.sh OUT_DIR [BINARY]     # from a checkout: build/bin/sfc-tune
#
# Runs, in this order, each only while at least MIN_LEFT (default 60) of
# BUDGET seconds (default 480) are left, and cut off when the budget runs out
# (SIGINT: the run reports the shapes it finished, and exits 130):
#   small-row      fp32 {256,512,1024,2048}^3, row-major entry, vs VS (default openblas,onednn)
#   small-blocked  the same grid, blocked entry, vs oneDNN
#   large-row      fp32 data/grids/large.shapes (12 shapes, 512-16384), row-major, vs oneDNN
#   bf16-small-row bf16 small grid, row-major, vs oneDNN's bf16 (skipped on CPUs without bf16 kernels)
# and leaves in OUT_DIR one NAME.json per run (`sfc-tune bench --json`: every
# shape, every figure) and tables.txt (each run's table and log, one after the
# other): five files, within what a lent machine sends back. The last lines on
# stdout are the summary: per run, SFC-CA's WHM over the best peer (pass by
# pass) and the lowest shape.
#
# SFC-CA's configuration is CONFIG (default model: the analytical model on the
# calibration made on the spot, which is what a user of an untuned platform
# gets; `best` searches every shape first and takes about twice as long).
# PASSES (default 2), REPS (default 10) and MIN_TIME (default 0.02) trade
# figures for time: each shape costs about PASSES x implementations x (0.2 s
# of settling + max(MIN_TIME, REPS runs)). THREADS defaults to 2, so that a
# rehearsal on this project's 2-core machine (GRID=256,512 LARGE=SMALL_FILE:
# half a minute) runs as the real one will; 2-core figures themselves come
# from scripts/bench-small-grid.sh, with more passes.
#
# Like that script, it removes OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (so that
# OpenBLAS picks its own kernels) and runs first in line for the CPUs where it
# may (root): its own session, autogroup and nice -20.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/sfc-tune" ]; then  # in a bundle (scripts/bench-bundle.sh puts it there)
  default_bin=$here/sfc-tune default_large=$here/large.shapes
else
  default_bin=$(dirname "$here")/build/bin/sfc-tune default_large=$(dirname "$here")/data/grids/large.shapes
fi
out=${1:?usage: bench-many-core.sh OUT_DIR [BINARY]}
bin=${2:-$default_bin}
threads=${THREADS:-2}
budget=${BUDGET:-480}
min_left=${MIN_LEFT:-60}
config=${CONFIG:-model}
grid=${GRID:-256,512,1024,2048}
large=${LARGE:-$default_large}
common=(--threads "$threads" --config "$config" --reps "${REPS:-10}" --passes "${PASSES:-2}"
        --min-time "${MIN_TIME:-0.02}" --json)

if [ ! -x "$bin" ]; then
  echo "bench-many-core: no sfc-tune at $bin (build it, or pass the bundle's launcher)" >&2
  exit 2
fi
if [ ! -r "$large" ]; then
  echo "bench-many-core: cannot read the large grid $large (set LARGE)" >&2
  exit 2
fi
mkdir -p "$out"
# What runs, and whether it starts at all (a lent machine's image is not this
# one: the bundle's launcher falls back to its own glibc), before any budget is spent.
if ! "$bin" --version > "$out/tables.txt" 2>&1; then
  echo "bench-many-core: $bin does not start here:" >&2
  cat "$out/tables.txt" >&2
  exit 1
fi
start=$SECONDS
summary=()

# Runs "$@" first in line for the CPUs where allowed, else as is (see
# scripts/bench-small-grid.sh for why).
first_in_line() {
  if nice -n -20 true 2>/dev/null && [ -w /proc/self/autogroup ]; then
    setsid --wait bash -c 'echo -20 > /proc/self/autogroup && exec nice -n -20 "$@"' first-in-line "$@"
  else
    "$@"
  fi
}

# run NAME ARGS...: one `sfc-tune bench` within what is left of the budget.
run() {
  local name=$1 left rc=0
  shift
  left=$((budget - (SECONDS - start)))
  if [ "$left" -lt "$min_left" ]; then
    summary+=("$name: skipped, ${left} s of the budget left")
    return
  fi
  echo "bench-many-core: $name, $threads threads, configuration $config, ${left} s left" >&2
  first_in_line timeout --preserve-status --signal=INT --kill-after=20 "$left" env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
    "$bin" bench "$@" "${common[@]}" > "$out/$name.json" 2> "$out/$name.txt" || rc=$?
  { echo "=== $name (exit $rc, $((SECONDS - start)) s into the run)"; cat "$out/$name.txt"; } >> "$out/tables.txt"
  rm -f "$out/$name.txt"
  local line
  line=$(awk -v n="=== $name " 'index($0, n) == 1 {on = 1; next} /^=== / {on = 0}
                                on && /^SFC-CA WHM/ {w = $0} on && /^lowest/ {l = $0}
                                END {print w (l ? "; " l : "")}' "$out/tables.txt")
  if [ "$rc" -eq 0 ]; then
    summary+=("$name: ${line:-no summary line (see tables.txt)}")
  else
    summary+=("$name: exit $rc (130: cut off by the budget, the shapes finished reported)${line:+; $line}")
  fi
}

run small-row --grid "$grid" --layout row --dtype f32 --vs "${VS:-openblas,onednn}"
run small-blocked --grid "$grid" --layout blocked --dtype f32 --vs onednn
run large-row --shapes "$large" --layout row --dtype f32 --vs onednn
if grep -qE 'avx512_bf16|amx_bf16' /proc/cpuinfo 2>/dev/null; then
  run bf16-small-row --grid "$grid" --layout row --dtype bf16 --vs onednn
else
  summary+=("bf16-small-row: skipped, no AVX512-BF16 or AMX on this CPU")
fi

echo "bench-many-core: $threads threads, $((SECONDS - start)) s; files in $out"
printf '%s\n' "${summary[@]}"
