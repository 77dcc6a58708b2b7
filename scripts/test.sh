#!/usr/bin/env bash
# Sets up, builds and runs every test (doctest cases through ctest). The real
# clients the drop-in is tested under come first: Debian's PyTorch and pytest
# (a test that cannot have torch says it is skipped, and why).
set -euo pipefail
cd "$(dirname "$0")/.."
clients=(python3-torch python3-pytest)
missing=()
for p in "${clients[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  { "${sudo_cmd[@]}" apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
    echo "test: could not install ${missing[*]}; the tests that need them are skipped" >&2
fi
bash scripts/setup.sh
# Benchmarks registered in ctest (label benchmark) print figures; run them with `ctest -L benchmark`.
cd build && ctest --output-on-failure -j2 --timeout 900 -LE benchmark
