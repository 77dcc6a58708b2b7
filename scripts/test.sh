#!/usr/bin/env bash
# Sets up, builds and runs every test (doctest cases through ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build && ctest --output-on-failure -j2 --timeout 900
