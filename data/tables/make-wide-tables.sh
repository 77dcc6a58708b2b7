#!/bin/sh
# The training set over the range users run (data/grids/wide.shapes: 240
# shapes, M and N 64..16384, K 64..32768, at most 16 GFLOP each; thin.shapes:
# 60 shapes with one dimension in 1..63) and 48 test shapes never trained on
# (wide-test.shapes), tuned on this machine with
# pruning and a time budget per configuration, for one dtype and entry layout:
#
#   DTYPE=f32 LAYOUT=blocked sh data/tables/make-wide-tables.sh [BUILD_DIR]
#
# Exhaustive over the 64 configurations (training: every one screened, those
# within 25% of the best screen timed fully; tests: every one timed fully;
# each with up to 10 runs or 0.1 s), resumable
# (delete out/wide-tables/, or the OUT folder named, to start over), shardable
# by hand with --shard.
# Then calibrates and prints the predictors' regret on the test shapes, on a
# range hold-out (trained up to 2048, tested beyond) and on a random one.
set -eu
cd "$(dirname "$0")/../.."
BIN=${1:-build}/bin/sfc-tune
OUT=${OUT:-out/wide-tables}
DTYPE=${DTYPE:-f32}
LAYOUT=${LAYOUT:-blocked}
THREADS=2
mkdir -p "$OUT"
COMMON="--dtype $DTYPE --layout $LAYOUT --threads $THREADS --reps 10 --warmup 2 --budget 0.1 --quiet --json"
for grid in wide thin; do
  "$BIN" tune --shapes data/grids/$grid.shapes --db "$OUT/wide.db" $COMMON --prune | tail -n 1
done
# Test shapes are timed fully: a pruned configuration keeps one screening run,
# which reads high against the fastest of several (docs/predictor.md).
"$BIN" tune --shapes data/grids/wide-test.shapes --db "$OUT/wide-test-full.db" $COMMON | tail -n 1
"$BIN" calibrate --db "$OUT/wide.db" --threads $THREADS
for args in "--test-db $OUT/wide-test-full.db" "--train-max 2048" "--holdout 0.2 --seed 1"; do
  echo "== evaluate $args ($DTYPE, $LAYOUT)"
  "$BIN" evaluate --db "$OUT/wide.db" $args --dtype $DTYPE --layout $LAYOUT --threads $THREADS
done
