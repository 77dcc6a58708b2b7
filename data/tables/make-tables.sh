#!/bin/sh
# Tunes the quick and small grids on this machine (fp32, 2 threads), exports
# their tuning tables here named by platform, and reports what the issues ask:
# wall time of the small grid with and without pruning, whether pruning
# changed a winner, how the K_layers / k_block_factor winners spread, and the
# predictors' regret. For the predictors it also tunes 64 random shapes
# (log-uniform over 256..2048, seed 11) that join the small grid in the
# training table <platform>-f32-t2.table, and 48 other random shapes (seed 7)
# that are only ever test shapes. The small grid and both random sets are
# tuned twice: through the blocked layout (execute() on blocks) and through
# the row-major entry (gemm() on plain matrices, packing included), whose
# winners differ; the shipped tables hold both.
#
#   sh data/tables/make-tables.sh [BUILD_DIR]      (default: build)
#
# Run it on a quiet machine: every other process competing for the cores
# shows up in the timings. Takes roughly 35 minutes on the project's 2-core
# machines. Rerunning resumes; delete out/tables/ to
# start over. The databases stay in out/tables/ (merge them with others
# later, or import them elsewhere).
set -eu
cd "$(dirname "$0")/../.."
BIN=${1:-build}/bin/sfc-tune
OUT=out/tables
THREADS=2
mkdir -p "$OUT"
COMMON="--dtype f32 --threads $THREADS --reps 10 --warmup 2 --quiet --json"

tune() {  # tune NAME GRID [FLAGS...]: prints the run's JSON summary and keeps it
  name=$1 grid=$2
  shift 2
  "$BIN" tune --shapes "data/grids/$grid.shapes" --db "$OUT/$name.db" $COMMON "$@" > "$OUT/$name.out"
  tail -n 1 "$OUT/$name.out" | tee "$OUT/$name.json"
}

random() {  # random NAME COUNT SEED [FLAGS...]: COUNT random shapes, log-uniform over 256..2048
  name=$1 count=$2 seed=$3
  shift 3
  "$BIN" tune --random "$count" --range 256:2048 --seed "$seed" --db "$OUT/$name.db" $COMMON "$@" > "$OUT/$name.out"
  tail -n 1 "$OUT/$name.out" | tee "$OUT/$name.json"
}

tune quick quick
tune small small
tune small-pruned small --prune --prune-margin 0.25
random random 64 11
random test 48 7
tune small-row small --layout row
random random-row 64 11 --layout row
random test-row 48 7 --layout row

# Training data of the predictors: the small grid and the first random set,
# both layouts; the test shapes of both layouts in one database.
rm -f "$OUT/train.db" "$OUT/train.db-wal" "$OUT/train.db-shm" "$OUT/tests.db" "$OUT/tests.db-wal" "$OUT/tests.db-shm"
"$BIN" merge "$OUT/small.db" "$OUT/random.db" "$OUT/small-row.db" "$OUT/random-row.db" -o "$OUT/train.db" > /dev/null
"$BIN" merge "$OUT/test.db" "$OUT/test-row.db" -o "$OUT/tests.db" > /dev/null
for db in quick small train; do "$BIN" calibrate --db "$OUT/$db.db"; done

PLATFORM=$(sed -n 's/.*"platform":"\([0-9a-f]*\)".*/\1/p' "$OUT/small.json")
"$BIN" export --db "$OUT/quick.db" --format table -o "data/tables/$PLATFORM-f32-t$THREADS-quick.table"
"$BIN" export --db "$OUT/small.db" --format table -o "data/tables/$PLATFORM-f32-t$THREADS-small.table"
"$BIN" export --db "$OUT/train.db" --format table -o "data/tables/$PLATFORM-f32-t$THREADS.table"
"$BIN" db info --db "$OUT/train.db"

echo
for layout in blocked row; do
  echo "== predictors, $layout layout: built from the small grid + 64 random shapes, tested on 48 other random shapes"
  "$BIN" evaluate --db "$OUT/train.db" --test-db "$OUT/tests.db" --threads $THREADS --layout $layout
  for seed in 1 2 3; do
    echo
    echo "== predictors, $layout layout: 20% of the training shapes held out (seed $seed)"
    "$BIN" evaluate --db "$OUT/train.db" --holdout 0.2 --seed $seed --threads $THREADS --layout $layout
  done
  echo
done

echo "== small grid: shapes whose winner differs between the blocked and the row-major entry"
echo "   (row cost: the row-major run's time of the blocked winner / the row-major best)"
sqlite3 -header -column "$OUT/small-row.db" "
ATTACH '$OUT/small.db' AS blocked;
SELECT r.m, r.n, r.k, b.k_layers || ',' || b.k_block_factor AS blocked, r.k_layers || ',' || r.k_block_factor AS row,
       round((SELECT c.min_s FROM main.config_times c JOIN main.shapes s ON s.id = c.shape_id
              WHERE s.m = r.m AND s.n = r.n AND s.k = r.k AND c.dtype = r.dtype AND c.threads = r.threads
                AND c.layout = r.layout AND c.k_layers = b.k_layers AND c.k_block_factor = b.k_block_factor
                AND c.screening = 0) / r.min_s, 4) AS row_cost
FROM main.winners r JOIN blocked.winners b USING (m, n, k, dtype, threads)
WHERE r.k_layers != b.k_layers OR r.k_block_factor != b.k_block_factor ORDER BY row_cost DESC;"

echo
echo "== wall time of the small grid (seconds): exhaustive, then pruned"
sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' "$OUT/small.json" "$OUT/small-pruned.json"

echo
echo "== small grid: shapes whose winner differs with pruning"
echo "   (slowdown: the exhaustive run's time of the pruned run's winner / its best;"
echo "    survived: the exhaustive winner passed the screen, so noise, not pruning, moved it)"
sqlite3 -header -column "$OUT/small.db" "
ATTACH '$OUT/small-pruned.db' AS pruned;
SELECT e.m, e.n, e.k, e.k_layers || ',' || e.k_block_factor AS exhaustive,
       p.k_layers || ',' || p.k_block_factor AS pruned,
       round((SELECT c.min_s FROM main.config_times c JOIN main.shapes s ON s.id = c.shape_id
              WHERE s.m = e.m AND s.n = e.n AND s.k = e.k AND c.dtype = e.dtype AND c.threads = e.threads
                AND c.layout = e.layout AND c.k_layers = p.k_layers AND c.k_block_factor = p.k_block_factor AND c.screening = 0)
             / e.min_s, 4) AS slowdown,
       EXISTS (SELECT 1 FROM pruned.measurements r JOIN pruned.shapes s ON s.id = r.shape_id
               WHERE s.m = e.m AND s.n = e.n AND s.k = e.k AND r.k_layers = e.k_layers
                 AND r.k_block_factor = e.k_block_factor AND r.screening = 0) AS survived
FROM main.winners e JOIN pruned.winners p USING (m, n, k, dtype, threads, layout)
WHERE e.k_layers != p.k_layers OR e.k_block_factor != p.k_block_factor;
SELECT count(*) AS shapes, sum(e.k_layers != p.k_layers OR e.k_block_factor != p.k_block_factor) AS changed
FROM main.winners e JOIN pruned.winners p USING (m, n, k, dtype, threads, layout);"

echo
echo "== small grid: how the winners spread (exhaustive run)"
sqlite3 -header -column "$OUT/small.db" "
SELECT k_layers, count(*) AS shapes FROM winners GROUP BY k_layers;
SELECT k_block_factor, count(*) AS shapes FROM winners GROUP BY k_block_factor;
SELECT k_layers, k_block_factor, count(*) AS shapes FROM winners GROUP BY 1, 2 ORDER BY 3 DESC;"
