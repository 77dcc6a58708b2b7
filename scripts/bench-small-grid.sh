#!/usr/bin/env bash
# The issue's measurement: SFC-CA GEMM against OpenBLAS, BLIS and oneDNN,
# fp32, 2 threads, grid {256,512,1024,2048}^3, once with SFC-CA on its blocked
# layout and once on row-major matrices with packing included. Writes the
# table (with --json's last line), CSV and SVG per layout into OUT_DIR:
#
#   bash scripts/bench-small-grid.sh [OUT_DIR]          # default: build/bench-small-grid
#   CONFIG=tuned DB=sfc-tune.db bash scripts/bench-small-grid.sh
#
# Conditions, so that the figures compare the libraries rather than the machine:
#  - OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from the environment:
#    this project's machines set OPENBLAS_CORETYPE=Haswell, which makes
#    OpenBLAS run AVX2 kernels on an AVX-512 CPU (the report lists what is set).
#  - The run is niced to -20 where that is allowed (root): on a small shared
#    machine other processes otherwise preempt one of the two GEMM threads and
#    the whole GEMM waits for it at the next barrier.
# Takes about 5 minutes per layout on 2 cores (BLIS's generic build is slow).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/bench-small-grid}
bin=${SFC_TUNE:-./build/bin/sfc-tune}
config=${CONFIG:-best}
mkdir -p "$out"

priority=()
if nice -n -20 true 2>/dev/null; then priority=(nice -n -20); fi
db_args=()
if [ -n "${DB:-}" ]; then db_args=(--db "$DB"); fi

for layout in blocked row; do
  echo "bench-small-grid: $layout layout, configuration $config" >&2
  "${priority[@]}" env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
    "$bin" bench --grid 256,512,1024,2048 --dtype f32 --threads 2 --vs openblas,blis,onednn \
    --layout "$layout" --config "$config" "${db_args[@]}" \
    --csv "$out/$layout.csv" --plot "$out/$layout.svg" --json > "$out/$layout.txt"
  sed -n '/^SFC-CA WHM/,/^lowest/p' "$out/$layout.txt"
done
echo "bench-small-grid: tables, CSV and plots in $out" >&2
