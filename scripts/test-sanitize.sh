#!/usr/bin/env bash
# The whole test suite again, built by clang-14 with AddressSanitizer and
# UndefinedBehaviorSanitizer (-DSFC_SANITIZE=ON) in a Debug build, so that
# assert()s on internal invariants are checked too, and with libFuzzer's
# instrumentation (-DSFC_FUZZ=ON), so that the same tree ends with a short
# fuzzing smoke of every reader (scripts/fuzz.sh, SFC_FUZZ_SECONDS per
# target, default 10). One build for both: CI's time is the budget.
# Builds into build-sanitize/. Run scripts/setup.sh (or scripts/test.sh) first.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang++-14 >/dev/null || [ ! -d /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux ] ||
   [ ! -e /usr/lib/llvm-14/lib/libomp.so ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev \
    libomp-14-dev >/dev/null
fi
# A tree another compiler configured cannot be reconfigured for this one.
if [ -f build-sanitize/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang++-14' build-sanitize/CMakeCache.txt; then
  rm -rf build-sanitize
fi
CC=clang-14 CXX=clang++-14 cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DSFC_SANITIZE=ON -DSFC_FUZZ=ON ${SFC_CMAKE_ARGS:-} >/dev/null
cmake --build build-sanitize -j"$(nproc)"
# detect_leaks: LIBXSMM and the OpenMP runtime keep their JIT code, registry
# and thread pool for the life of the process on purpose; a leak anywhere else
# still fails (see tests/lsan.supp).
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(
  cd build-sanitize
  # The benchmark's tests dlopen() OpenBLAS and BLIS, whose own thread pools
  # are still running at exit, where LeakSanitizer's tracer faults ("Tracer
  # caught signal 11"): they run under ASan and UBSan without the leak check.
  ctest --output-on-failure -j2 --timeout 900 -E '^bench'
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 ctest --output-on-failure -j2 --timeout 900 -R '^bench'
)
SFC_FUZZ_BUILD=build-sanitize bash scripts/fuzz.sh "${SFC_FUZZ_SECONDS:-10}"
