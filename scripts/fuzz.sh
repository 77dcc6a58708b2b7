#!/usr/bin/env bash
# Fuzzes every reader of outside input (tests/fuzz/fuzz_*.cpp) with libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer, SECONDS per target (default
# 60), starting from the seed corpus in tests/fuzz/corpus. Builds with clang-14
# into build-fuzz/ (or the SFC_FUZZ build named by SFC_FUZZ_BUILD); new
# interesting inputs go to <build>/corpus/<target>/ (the checked-in seeds are
# never changed), findings to <build>/findings/<target>/.
# Exits non-zero when a target finds a crash, a sanitizer report, a leak, an
# exception other than a refusal, a broken round trip or a slow input.
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. bash scripts/fuzz.sh 20 table import
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(table import shapes platform sfcconf record environment)

build=${SFC_FUZZ_BUILD:-build-fuzz}  # scripts/test-sanitize.sh passes its own tree
if [ ! -f "$build/CMakeCache.txt" ]; then
  if ! command -v clang++-14 >/dev/null || [ ! -d /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev \
      libomp-14-dev >/dev/null
  fi
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DSFC_FUZZ=ON -DSFC_BUILD_TESTS=OFF >/dev/null
fi
grep -q '^SFC_FUZZ:BOOL=ON' "$build/CMakeCache.txt" ||
  { echo "fuzz: $build was not configured with -DSFC_FUZZ=ON" >&2; exit 2; }
cmake --build "$build" -j"$(nproc)" --target sfc_fuzzers

export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=0
for target in "${targets[@]}"; do
  corpus=$build/corpus/$target findings=$build/findings/$target
  mkdir -p "$corpus" "$findings"
  # rss_limit: a reader must not need more than this for any input (a 1 GiB
  # cap on files bounds the honest cases); timeout: nor take seconds on one.
  if ! "$build/bin/fuzz_$target" "$corpus" tests/fuzz/corpus/"$target" -max_total_time="$seconds" \
      -rss_limit_mb=2048 -timeout=10 -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" \
      >"$build/$target.log" 2>&1; then
    failed=1
    echo "fuzz_$target: FOUND SOMETHING ($build/$target.log, inputs in $findings/)"
    tail -30 "$build/$target.log"
  fi
  awk -v t="$target" '/stat::number_of_executed_units/ {runs=$2} /stat::peak_rss_mb/ {rss=$2}
       /cov: / {cov=$0} END {sub(/.*cov: /, "", cov); sub(/ .*/, "", cov);
       printf "fuzz_%-9s %10d executions  edges covered %s  peak %s MB\n", t, runs, cov, rss}' "$build/$target.log"
done
exit $failed
