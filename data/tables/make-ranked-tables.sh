#!/bin/sh
# This machine's shipped table set tuned with the ranked search (docs/tuning.md
# "Ranked search") instead of the exhaustive one: for each dtype, the blocked
# entry on the small and wide grids and the row-major entry on the small, wide
# and thin grids -- the shapes of data/tables/<platform>-<dtype>-t2.table --
# calibrated and exported to OUT/<platform>-<dtype>-t2.table.
#
#   sh data/tables/make-ranked-tables.sh [BUILD_DIR]            (default: build)
#   DTYPES="f32" PRIOR=data/tables/a3462abaea1cc6bb-f32-t2.table sh data/tables/make-ranked-tables.sh
#
# DTYPES (default "f32 bf16"; bf16 only where the CPU has AVX-512), PRIOR (a
# table of a compatible machine that ranks too; default none, as on a new
# machine), OUT (default out/ranked-tables; rerunning resumes, delete it to
# start over). Copy the exported tables into data/tables to ship them. Prints
# each run's JSON summary and the total wall time. Run it on a quiet machine.
set -eu
cd "$(dirname "$0")/../.."
BIN=${1:-build}/bin/sfc-tune
OUT=${OUT:-out/ranked-tables}
DTYPES=${DTYPES:-f32 bf16}
THREADS=2
mkdir -p "$OUT"
start=$(date +%s)
for dtype in $DTYPES; do
  db="$OUT/$dtype.db"
  for run in "blocked small" "blocked wide" "row small" "row wide" "row thin"; do
    set -- $run
    set -- --shapes "data/grids/$2.shapes" --layout "$1" --dtype "$dtype" --threads $THREADS --db "$db" \
      --search ranked --quiet --json ${PRIOR:+--prior "$PRIOR"}
    "$BIN" tune "$@" | tail -n 1
  done
  "$BIN" calibrate --db "$db" --threads $THREADS
  platform=$("$BIN" db info --db "$db" --json | tail -n 1 | sed -n 's/.*"hash":"\([0-9a-f]*\)".*/\1/p')
  "$BIN" export --db "$db" --format table -o "$OUT/$platform-$dtype-t$THREADS.table"
done
echo "make-ranked-tables: $(($(date +%s) - start)) s wall for $DTYPES"
