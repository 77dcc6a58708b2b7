#!/bin/sh
# Tunes the quick and small grids on this machine (fp32, 2 threads), exports
# their tuning tables here named by platform, and reports what the issue asks:
# wall time of the small grid with and without pruning, whether pruning
# changed a winner, and how the K_layers / k_block_factor winners spread.
#
#   sh data/tables/make-tables.sh [BUILD_DIR]      (default: build)
#
# Run it on a quiet machine: every other process competing for the cores
# shows up in the timings. Takes roughly 10 (quick) + 2 x 60 (small) minutes
# on the project's 2-core machines. Rerunning resumes; delete out/tables/ to
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

tune quick quick
tune small small
tune small-pruned small --prune --prune-margin 0.25

PLATFORM=$(sed -n 's/.*"platform":"\([0-9a-f]*\)".*/\1/p' "$OUT/small.json")
"$BIN" export --db "$OUT/quick.db" --format table -o "data/tables/$PLATFORM-f32-t$THREADS-quick.table"
"$BIN" export --db "$OUT/small.db" --format table -o "data/tables/$PLATFORM-f32-t$THREADS-small.table"
"$BIN" db info --db "$OUT/small.db"

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
       round((SELECT c.mean_s FROM main.config_times c JOIN main.shapes s ON s.id = c.shape_id
              WHERE s.m = e.m AND s.n = e.n AND s.k = e.k AND c.dtype = e.dtype AND c.threads = e.threads
                AND c.k_layers = p.k_layers AND c.k_block_factor = p.k_block_factor AND c.screening = 0)
             / e.mean_s, 4) AS slowdown,
       EXISTS (SELECT 1 FROM pruned.measurements r JOIN pruned.shapes s ON s.id = r.shape_id
               WHERE s.m = e.m AND s.n = e.n AND s.k = e.k AND r.k_layers = e.k_layers
                 AND r.k_block_factor = e.k_block_factor AND r.screening = 0) AS survived
FROM main.winners e JOIN pruned.winners p USING (m, n, k, dtype, threads)
WHERE e.k_layers != p.k_layers OR e.k_block_factor != p.k_block_factor;
SELECT count(*) AS shapes, sum(e.k_layers != p.k_layers OR e.k_block_factor != p.k_block_factor) AS changed
FROM main.winners e JOIN pruned.winners p USING (m, n, k, dtype, threads);"

echo
echo "== small grid: how the winners spread (exhaustive run)"
sqlite3 -header -column "$OUT/small.db" "
SELECT k_layers, count(*) AS shapes FROM winners GROUP BY k_layers;
SELECT k_block_factor, count(*) AS shapes FROM winners GROUP BY k_block_factor;
SELECT k_layers, k_block_factor, count(*) AS shapes FROM winners GROUP BY 1, 2 ORDER BY 3 DESC;"
