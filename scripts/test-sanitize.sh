#!/usr/bin/env bash
# The whole test suite again, built with AddressSanitizer and
# UndefinedBehaviorSanitizer (-DSFC_SANITIZE=ON) in a Debug build, so that
# assert()s on internal invariants are checked too. Builds into build-sanitize/.
# Run scripts/setup.sh (or scripts/test.sh) once first for the packages.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
      -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DSFC_SANITIZE=ON ${SFC_CMAKE_ARGS:-} >/dev/null
cmake --build build-sanitize -j"$(nproc)"
# detect_leaks: LIBXSMM keeps its JIT code and registry for the life of the
# process on purpose; a leak anywhere else still fails (see tests/lsan.supp).
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd build-sanitize
# The benchmark's tests dlopen() OpenBLAS and BLIS, whose own thread pools are
# still running at exit, where LeakSanitizer's tracer faults ("Tracer caught
# signal 11"): they run under ASan and UBSan without the leak check.
ctest --output-on-failure -j2 --timeout 900 -E '^bench'
ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 ctest --output-on-failure -j2 --timeout 900 -R '^bench'
