#!/usr/bin/env bash
# The adversarial matrix of issue 63 as a script: every command of sfc-tune
# against bad numbers, special files (a FIFO without a writer, /dev/zero,
# directories, missing files), crafted files (truncated, duplicated keys,
# non-objects, NUL bytes, a database edited past its checks), outputs onto a
# database's own files, and bad environment variables. Each probe runs under
# `timeout`; its outcome is classified as
#   accepted       exit 0
#   refused        exit 2 with one line on stderr (what is wrong, where)
#   multi-line     refused with more than one line
#   internal       exit 1, "internal error", an uncaught exception or a runtime's abort text
#   crash          ended by a signal (not SIGINT/SIGTERM/SIGHUP's own exits)
#   hang           still running at the time limit
#   data-lost      a probe on a copy of a tuned database left fewer measurements in it
# and the counts by class are printed; the exit status is 1 when any probe
# crashed, hung, failed internally or lost data.
#   bash scripts/probe.sh [BUILD_DIR]        (default: build; uses BUILD_DIR/bin/sfc-tune)
#   SFC_PROBE_JOBS=2 SFC_PROBE_TIMEOUT=20 bash scripts/probe.sh
#   SFC_PROBE_SHOW_ACCEPTED=accepted.txt bash scripts/probe.sh   (also lists the accepted probes)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$(realpath "$build/bin/sfc-tune" 2>/dev/null || true)
[ -x "$bin" ] || { echo "probe: no $build/bin/sfc-tune; build first" >&2; exit 2; }
jobs=${SFC_PROBE_JOBS:-2}
limit=${SFC_PROBE_TIMEOUT:-20}
work=$(mktemp -d "${TMPDIR:-/tmp}/sfc-probe.XXXXXX")
trap 'rm -rf "$work"' EXIT
fx=$work/fixtures
mkdir -p "$fx" "$work/runs"
export SFC_COLD_BYTES=1048576 NO_COLOR=1  # small inputs, no 1 GiB cache flush per timing

# ---- fixtures -------------------------------------------------------------
tiny=(--k-layers 1,2 --k-block-factors 1 --reps 1 --warmup 0 --threads 2 --quiet)
"$bin" tune --grid "m=64,128 n=64 k=64,128" "${tiny[@]}" --db "$fx/t.db" >/dev/null 2>&1 ||
  { echo "probe: cannot build the fixture database" >&2; exit 2; }
"$bin" export --db "$fx/t.db" --all --format json -o "$fx/all.json" >/dev/null 2>&1
"$bin" export --db "$fx/t.db" --all --format csv -o "$fx/all.csv" >/dev/null 2>&1
"$bin" export --db "$fx/t.db" --format table -o "$fx/t.table" >/dev/null 2>&1
baseline=$("$bin" export --db "$fx/t.db" --all --format csv -o - 2>/dev/null | wc -l)
# A database whose last commits are still in its -wal, as an interrupted tune leaves it.
(SFC_FAULT=crash:after-commit:4 "$bin" tune --grid "m=64,128 n=64 k=64,128" "${tiny[@]}" --db "$fx/w.db" \
  >/dev/null 2>&1; exit 0) 2>/dev/null  # killed by its own fault, as planned
[ -s "$fx/w.db-wal" ] || { echo "probe: cannot build the fixture database with a WAL" >&2; exit 2; }
rm -f "$fx/w.db-shm"
baseline_wal=$("$bin" export --db "$fx/w.db" --all --format csv -o - 2>/dev/null | wc -l)
mkfifo "$fx/fifo"
mkdir -p "$fx/dir"
: >"$fx/empty"
printf 'garbage \x01\x02 not a file of ours\n' >"$fx/garbage"
printf '64 64 64\n\0\0\0 1 2\n' >"$fx/nul"
head -c 300000 /dev/zero | tr '\0' '9' >"$fx/longline"
printf '[1, 2, 3]\n' >"$fx/array.json"
printf '"sfc-tune-export"\n' >"$fx/string.json"
head -c 2000 "$fx/all.json" >"$fx/truncated.json"
sed '0,/"min_s"/s//"min_s": 0.5, "min_s"/' "$fx/all.json" >"$fx/dupkey.json"
python3 - "$fx/all.json" "$fx/hugetext.json" <<'EOF' 2>/dev/null || cp "$fx/garbage" "$fx/hugetext.json"
import json, sys
d = json.load(open(sys.argv[1]))
d["platforms"][0]["compiler"] = "x" * (5 << 20)
json.dump(d, open(sys.argv[2], "w"))
EOF
head -c 4096 "$fx/t.db" >"$fx/truncated.db"
printf 'SQLite format 3\0garbage' >"$fx/header.db"
cp "$fx/t.db" "$fx/edited.db"
cp "$fx/t.db" "$fx/rekeyed.db"
python3 - "$fx/edited.db" "$fx/rekeyed.db" <<'EOF' 2>/dev/null
import sqlite3, sys
for path, sql in ((sys.argv[1], "UPDATE measurements SET k_layers = 99 WHERE id = 1"),
                  (sys.argv[2], "UPDATE platforms SET cores = 0")):
    db = sqlite3.connect(path)
    db.execute("PRAGMA ignore_check_constraints = 1")
    db.execute(sql)
    db.commit()
    db.close()
EOF
printf '64 64 64\n128 64 64\n' >"$fx/good.shapes"
printf 'sfc-record 1\ngarbage\n' >"$fx/bad.record"
ln -s "$fx/loop" "$fx/loop" 2>/dev/null
head -c 70000 /dev/urandom >"$fx/random"

special=("$fx/fifo" /dev/zero /dev/null "$fx/dir" "$fx/missing" "$fx/empty" "$fx/garbage" "$fx/nul"
  "$fx/longline" "$fx/loop" "$fx/random" /proc/self/mem /dev/urandom)
crafted=("$fx/array.json" "$fx/string.json" "$fx/truncated.json" "$fx/dupkey.json" "$fx/hugetext.json"
  "$fx/truncated.db" "$fx/header.db" "$fx/edited.db" "$fx/rekeyed.db" "$fx/t.table" "$fx/bad.record"
  "$fx/all.csv")
numbers=(0 -1 -0 1e999 nan inf -inf 99999999999999999999 4294967360 2147483648 "" abc " 5" 5x 0x10 1.5
  1e-320 100000000 -9223372036854775808 1e3 +5 1,2 0.0 $'5\n6')
words=("" x f16 ROW 1/0 -1/4 ../../etc/passwd "$(head -c 5000 /dev/zero | tr '\0' 'a')" $'a\nb' $'\xff\xfe'
  "m=64 m=64" "64:1" 0/0)

# ---- the matrix -----------------------------------------------------------
# One probe per line: GUARD then the environment settings, "--", then the
# arguments, each word quoted with printf %q. GUARD "db": the probe works on
# its own copy of the tuned database, @DB@, checked for lost measurements after;
# "wal": the same with a copy of the database whose last commits are in its -wal.
probes=$work/probes
: >"$probes"
add() {  # add GUARD [ENV=VALUE...] -- ARGS...
  local line
  printf -v line '%q ' "$@"
  printf '%s\n' "$line" >>"$probes"
}
gemm_base=(gemm 64 64 64 --reps 1 --warmup 0 --threads 2)
tune_base=(tune --grid 64 --k-layers 1 --k-block-factors 1 --reps 1 --warmup 0 --threads 2 --quiet --db @D@/n.db)
bench_base=(bench --grid 64 --vs none --reps 1 --warmup 0 --threads 2 --passes 1)
query_base=(query 64 64 64 --db "$fx/t.db" --threads 2)
eval_base=(evaluate --db "$fx/t.db" --holdout 0.5 --threads 2 --reps 1 --warmup 0)

# Bad numbers: every numeric option of every command.
for v in "${numbers[@]}"; do
  for slot in 1 2 3; do
    args=(gemm 64 64 64 --reps 1 --warmup 0 --threads 2)
    args[slot]=$v
    add none -- "${args[@]}"
    args=(query 64 64 64 --db "$fx/t.db" --threads 2)
    args[slot]=$v
    add none -- "${args[@]}"
  done
  for o in --threads --k-layers --kbf --reps --warmup; do add none -- "${gemm_base[@]}" "$o" "$v"; done
  add none -- "${gemm_base[@]}" --blocks "${v}x64x64"
  add none -- "${gemm_base[@]}" --blocks "64x${v}x64"
  for o in --threads --warmup --reps --budget --confirm --confirm-margin --k-layers --k-block-factors --shard; do
    add none -- "${tune_base[@]}" "$o" "$v"
  done
  add none -- "${tune_base[@]}" --prune --prune-margin "$v"
  add none -- tune --random "$v" --range 64:128 --reps 1 --warmup 0 --k-layers 1 --k-block-factors 1 --threads 2 --quiet --db @D@/n.db
  add none -- tune --random 1 --seed "$v" --reps 1 --warmup 0 --k-layers 1 --k-block-factors 1 --threads 2 --quiet --db @D@/n.db
  add none -- tune --random 1 --range "$v:64" --reps 1 --warmup 0 --k-layers 1 --k-block-factors 1 --threads 2 --quiet --db @D@/n.db
  add none -- tune --grid "$v" --threads 2 --quiet --db @D@/n.db
  add none -- tune --grid "m=$v n=64 k=64" --threads 2 --quiet --db @D@/n.db
  for o in --threads --reps --warmup --passes --min-time --alpha --beta; do add none -- "${bench_base[@]}" "$o" "$v"; done
  add none -- "${query_base[@]}" --threads "$v"
  for o in --holdout --seed --train-max --threads --max-distance --l2-fraction --tie-tolerance --neighbours --warmup --reps; do
    add none -- "${eval_base[@]}" "$o" "$v"
  done
  add none -- calibrate --threads "$v" --db @D@/c.db
  add none -- record show "$fx/bad.record" --top "$v"
done

# Bad words: every option that takes a name, a list or a spec.
for w in "${words[@]}"; do
  for o in --dtype --layout; do
    add none -- "${gemm_base[@]}" "$o" "$w"
    add none -- "${tune_base[@]}" "$o" "$w"
    add none -- "${bench_base[@]}" "$o" "$w"
    add none -- "${query_base[@]}" "$o" "$w"
    add none -- "${eval_base[@]}" "$o" "$w"
    add none -- export --db "$fx/t.db" "$o" "$w" -o -
  done
  for o in --shard --grid --range --k-layers --k-block-factors; do add none -- "${tune_base[@]}" "$o" "$w"; done
  for o in --trans --vs --statistic --config --platform --grid; do add none -- "${bench_base[@]}" "$o" "$w"; done
  add none -- "${query_base[@]}" --platform "$w"
  add none -- "${eval_base[@]}" --platform "$w"
  add none -- "${eval_base[@]}" --policy-rule "$w"
  add none -- export --db "$fx/t.db" --format "$w" -o -
  add none -- export --db "$fx/t.db" --platform "$w" -o -
  add none -- "$w" --help
  add none -- db "$w"
done

# Special and crafted files wherever a file is read.
for f in "${special[@]}" "${crafted[@]}"; do
  add none -- tune --shapes "$f" --threads 2 --quiet --db @D@/n.db
  add none -- bench --shapes "$f" --vs none --threads 2
  add none -- evaluate --db "$fx/t.db" --test-shapes "$f" --threads 2
  add none -- evaluate --db "$fx/t.db" --test-db "$f" --threads 2
  add none -- evaluate --db "$f" --holdout 0.5 --threads 2
  add none -- query 64 64 64 --db "$f" --threads 2
  add none -- export --db "$f" -o @D@/out.csv
  add none -- export --db "$f" --format table -o @D@/out.table
  add none -- db info --db "$f"
  add none -- import "$f" --db @D@/n.db
  add db -- import "$f" --db @DB@
  add db -- merge @DB@ "$f" -o @D@/m.db
  add db -- merge "$fx/t.db" "$f" -o @DB@
  add none -- record show "$f"
  add none -- tune --from-record "$f" --threads 2 --quiet --db @D@/n.db
  add none -- bench --grid 64 --vs none --threads 2 --reps 1 --db "$f" --config tuned
done

# Outputs: onto the database's own files, special files, a directory.
for guard in db wal; do
  for suffix in "" -wal -shm -claims -journal; do
    for format in csv json table; do
      add "$guard" -- export --db @DB@ --format "$format" -o "@DB@$suffix"
      add "$guard" -- export --db @DB@ --format "$format" --all -o "@DB@$suffix"
    done
    add "$guard" -- merge @DB@ -o "@DB@$suffix"
    add "$guard" -- merge "$fx/t.db" -o "@DB@$suffix"
    add "$guard" -- bench --grid 64 --vs none --reps 1 --warmup 0 --threads 2 --db @DB@ --csv "@DB@$suffix"
    add "$guard" -- bench --grid 64 --vs none --reps 1 --warmup 0 --threads 2 --db @DB@ --plot "@DB@$suffix"
    add "$guard" -- import "@DB@$suffix" --db @DB@
  done
done
for out in "$fx/fifo" "$fx/dir" /dev/full "$fx/missing/x" /dev/null; do
  for format in csv json table; do add none -- export --db "$fx/t.db" --format "$format" -o "$out"; done
  add none -- bench --grid 64 --vs none --reps 1 --warmup 0 --threads 2 --csv "$out"
  add none -- merge "$fx/t.db" -o "$out"
done

# Bad environment, under every command.
envs=(OMP_NUM_THREADS=100000 OMP_NUM_THREADS=4097 OMP_NUM_THREADS=0 OMP_NUM_THREADS=-1 OMP_NUM_THREADS=abc
  OMP_NUM_THREADS=99999999999 OMP_NUM_THREADS=2,100000 SFC_COLD_BYTES=junk SFC_COLD_BYTES=-1
  SFC_COLD_BYTES=99999999999999999999 SFC_COLD_BYTES=1e99 SFC_PLATFORM=bogus SFC_PLATFORM=0000000000000000
  "HWLOC_XMLFILE=$fx/fifo" HWLOC_XMLFILE=/dev/zero "HWLOC_XMLFILE=$fx/dir" "HWLOC_XMLFILE=$fx/missing"
  "HWLOC_XMLFILE=$fx/garbage" "SFC_TUNING=$fx/fifo" SFC_TUNING=/dev/zero "SFC_TUNING=$fx/dir"
  "SFC_TUNING=$fx/garbage" SFC_TUNE=bogus SFC_TUNE=online SFC_TUNE_BUDGET_MS=nan SFC_TUNE_BUDGET_MS=-1
  SFC_LOG_LEVEL=bogus SFC_FAULT=bogus SFC_FAULT=crash:write:x "SFC_RECORD=$fx/dir" "SFC_RECORD=$fx/fifo"
  SFC_AMX=2)
for e in "${envs[@]}"; do
  add none "$e" -- "${gemm_base[@]}"
  add none "$e" -- "${tune_base[@]}"
  add none "$e" -- "${bench_base[@]}"
  add none "$e" -- "${query_base[@]}"
  add none "$e" -- db info --db "$fx/t.db"
  add none "$e" -- export --db "$fx/t.db" -o -
  add db "$e" -- import "$fx/all.json" --db @DB@
  add none "$e" -- "${eval_base[@]}"
  add none "$e" -- merge "$fx/t.db" -o @D@/m.db
  add none "$e" -- record show "$fx/bad.record"
  add none "$e" -- tune --shapes "$fx/good.shapes" --k-layers 1 --k-block-factors 1 --reps 1 --warmup 0 --threads 2 --quiet --db @D@/n.db
  add none "$e" -- export --db "$fx/t.table" --format table -o @D@/again.table
done

# ---- run ------------------------------------------------------------------
run_one() {  # run_one ID LINE: prints "ID CLASS"
  local id=$1 line=$2 dir=$work/runs/$1
  mkdir -p "$dir"
  eval "set -- $line"
  local guard=$1
  shift
  local env_args=()
  while [ "$1" != "--" ]; do env_args+=("$1"); shift; done
  shift
  local args=() a
  for a in "$@"; do a=${a//@DB@/$dir/t.db}; args+=("${a//@D@/$dir}"); done
  local expected=$baseline
  [ "$guard" = db ] && cp "$fx/t.db" "$dir/t.db"
  if [ "$guard" = wal ]; then
    cp "$fx/w.db" "$dir/t.db"
    cp "$fx/w.db-wal" "$dir/t.db-wal"
    expected=$baseline_wal
  fi
  env "${env_args[@]}" timeout -k 3 "$limit" "$bin" "${args[@]}" >"$dir/out" 2>"$dir/err" </dev/null
  local rc=$? class
  local lines
  # Log lines and libgomp's own note on a value it cannot parse (printed before main) are not the message.
  lines=$(grep -av '^\[[0-9:.]*\] \[\(info\|warning\)\]\|^libgomp: Invalid value' "$dir/err" | grep -c .)
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    class=hang
  elif [ $rc -gt 128 ] && [ $rc -ne 129 ] && [ $rc -ne 130 ] && [ $rc -ne 143 ]; then
    class=crash
  elif grep -av 'libgomp: Invalid value' "$dir/err" | grep -aq 'internal error\|terminate called\|libgomp: \|Assertion\|AddressSanitizer\|runtime error' ||
    [ $rc -eq 1 ]; then
    class=internal
  elif [ $rc -eq 0 ]; then
    class=accepted
  elif [ "$lines" -gt 1 ]; then
    class=multi-line
  else
    class=refused
  fi
  if [ "$guard" != none ] && [ "$class" != hang ] && [ "$class" != crash ]; then
    local left
    left=$("$bin" export --db "$dir/t.db" --all --format csv -o - 2>/dev/null | wc -l)
    [ "$left" -ge "$expected" ] || class=data-lost
  fi
  printf '%s %s\n' "$id" "$class"
  [ "$class" = accepted ] && printf '%s\n' "$line" >>"$work/accepted"
  [ "$class" = refused ] || [ "$class" = accepted ] || printf '%s\t%s\t%s\n' "$class" "$line" \
    "$(head -c 300 "$dir/err" | tr '\n' ' ')" >>"$work/findings"
  rm -rf "$dir"
}
export -f run_one
export work fx bin limit baseline baseline_wal

total=$(wc -l <"$probes")
echo "probe: $total inputs, $jobs at a time, each limited to ${limit} s"
start=$SECONDS
nl -ba -w1 -s$'\t' "$probes" | tr '\t' '\n' | xargs -d '\n' -n 2 -P "$jobs" bash -c 'run_one "$1" "$2"' _ \
  >"$work/results"
echo "probe: done in $((SECONDS - start)) s"
awk '{print $2}' "$work/results" | sort | uniq -c | sort -rn
for c in accepted refused multi-line internal crash hang data-lost; do
  printf '%s=%d ' "$c" "$(awk -v c="$c" '$2 == c' "$work/results" | wc -l)"
done
echo
if [ -s "$work/findings" ]; then
  echo "probe: findings (class, probe, stderr):"
  sort "$work/findings" | head -60
fi
[ -n "${SFC_PROBE_SHOW_ACCEPTED:-}" ] && [ -s "$work/accepted" ] && sort "$work/accepted" >"$SFC_PROBE_SHOW_ACCEPTED"
bad=$(awk '$2 == "crash" || $2 == "hang" || $2 == "internal" || $2 == "data-lost"' "$work/results" | wc -l)
[ "$bad" -eq 0 ]
