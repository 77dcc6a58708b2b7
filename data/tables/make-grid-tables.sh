#!/bin/sh
# The small grid ({256,512,1024,2048}^3) tuned on this machine through both
# entries (blocked and row-major), calibrated and exported as this platform's
# table, data/tables/<platform>-<dtype>-t2-small.table: what a machine of a kind
# the shipped tables do not cover needs before its queries are `exact`.
# make-tables.sh does this and more (random training and test shapes,
# pruning, the predictors' regret); this is the part that ships.
#
#   sh data/tables/make-grid-tables.sh [BUILD_DIR]      (default: build)
#   DTYPE=bf16 sh data/tables/make-grid-tables.sh       (default: f32)
#
# Takes about 15 minutes on 2 cores; run it on a quiet machine. Rerunning
# resumes; delete out/grid-tables/ to start over.
set -eu
cd "$(dirname "$0")/../.."
BIN=${1:-build}/bin/sfc-tune
DTYPE=${DTYPE:-f32}
OUT=out/grid-tables
THREADS=2
mkdir -p "$OUT"
for layout in blocked row; do
  "$BIN" tune --shapes data/grids/small.shapes --db "$OUT/small-$DTYPE.db" --layout $layout --dtype $DTYPE \
    --threads $THREADS --reps 10 --warmup 2 --quiet --json | tail -n 1
done
"$BIN" calibrate --db "$OUT/small-$DTYPE.db" --threads $THREADS
PLATFORM=$("$BIN" db info --db "$OUT/small-$DTYPE.db" --json | tail -n 1 | sed -n 's/.*"hash":"\([0-9a-f]*\)".*/\1/p')
"$BIN" export --db "$OUT/small-$DTYPE.db" --format table -o "data/tables/$PLATFORM-$DTYPE-t$THREADS-small.table"
"$BIN" db info --db "data/tables/$PLATFORM-$DTYPE-t$THREADS-small.table"
