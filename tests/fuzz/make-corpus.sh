#!/usr/bin/env bash
# Rebuilds the seed corpus (tests/fuzz/corpus/<target>/) from what the product
# ships and writes: small valid inputs of every format, so that a fuzzer starts
# from the shapes of real files. Needs a build (build/bin/sfc-tune).
#   bash tests/fuzz/make-corpus.sh [path/to/sfc-tune]
set -euo pipefail
cd "$(dirname "$0")"
tool=$(realpath "${1:-../../build/bin/sfc-tune}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf corpus && mkdir -p corpus/{table,import,shapes,platform,sfcconf,record,environment}

# One tiny shape tuned here: a real database, and every export of it.
"$tool" tune --grid 64 --db "$tmp/t.db" >/dev/null 2>&1
"$tool" export --db "$tmp/t.db" --format csv --all -o corpus/import/all.csv >/dev/null 2>&1
"$tool" export --db "$tmp/t.db" --format json --all -o corpus/import/all.json >/dev/null 2>&1
"$tool" export --db "$tmp/t.db" --format csv -o corpus/import/winners.csv >/dev/null 2>&1
"$tool" export --db "$tmp/t.db" --format table -o corpus/table/one.table >/dev/null 2>&1
cp "$tmp/t.db" corpus/sfcconf/one.db
cp corpus/table/one.table corpus/sfcconf/one.table

# The shipped tables, cut to their header and first three shapes.
for table in ../../data/tables/*.table; do
  name=$(basename "$table" .table)
  { sed -n '/^shapes /q;p' "$table"; echo "shapes 3"; awk '/^shape / && ++n <= 3' "$table"; } \
    >"corpus/table/$name.table"
  grep '^platform ' "$table" | sed 's/^platform //' >"corpus/platform/$name"
done
# A version 1 table (no layout field, every field hashed) is still read.
cat >corpus/table/version1.table <<'TABLE'
sfc-table 1
platform cpu_model AMD EPYC
platform cores 2
platform threads 2
platform l1d_bytes 49152
platform l2_bytes 1048576
platform l3_bytes 33554432
platform isa cpx
platform libxsmm_version 1.17
platform compiler gcc 12.2.0
platform hash 0000000000000000
calibration 0 0
shapes 0
TABLE

cp ../../data/grids/*.shapes corpus/shapes/
for spec in "256,512,1024" "m=64:4096:x2 n=128 k=256,512" "0/4" "128:8192" "1000x2000x3000"; do
  printf '%s\n' "$spec" >"corpus/shapes/spec-$(printf '%s' "$spec" | md5sum | cut -c1-8)"
done
printf '64 64 64\n\0\0 1 2\n' >corpus/shapes/nul.shapes  # NUL bytes inside a line
# Shape records, as SFC_RECORD writes them.
printf 'sfc-shape-record 1\n' >corpus/record/empty.record
cat >corpus/record/three.record <<'RECORD'
sfc-shape-record 1
# m n k dtype threads layout trans_a trans_b calls tier distance
512 2048 2048 f32 2 row N T 1200 nearest 0.415
2048 5632 2048 bf16 2 row N N 24 model inf
64 64 64 f64 1 blocked ? ? 7 exact 0
RECORD
# Environments: one value per line (OMP_NUM_THREADS, SFC_COLD_BYTES, SFC_TUNE_BUDGET_MS, SFC_PLATFORM).
printf '2\n1048576\n500\nthis\n' >corpus/environment/plain
printf '100000\njunk\nnan\nbogus\n' >corpus/environment/bad
printf '2,1\n99999999999999999999\n-1\n0123456789abcdef\n' >corpus/environment/lists
printf '4097\n\n1e308\nany\n' >corpus/environment/edges
echo "seed corpus: $(find corpus -type f | wc -l) files"
