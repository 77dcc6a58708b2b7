#!/usr/bin/env bash
# The main job: set up and build, then run and check a demo GEMM.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/bin/sfc-tune gemm 1024 1024 1024 --k-layers 2 --kbf 2 --check
