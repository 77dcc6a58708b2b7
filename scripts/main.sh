#!/usr/bin/env bash
# The main job: set up and build; check one GEMM against the fp64 reference;
# tune the quick grid ({256,512,1024}^3) through the native blocked entry and
# a smaller one ({256,512}^3) through the row-major entry (the one numpy,
# PyTorch and sfc_sgemm callers use) into build/sfc-tune.db (resuming: shapes
# already there are not measured again); then ask both entries for the
# configuration of a shape that was never tuned. The database stays in the
# build folder: the checkout is left as it was.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh sfc-tune  # the tests and the libraries build in scripts/test.sh
bin=./build/bin/sfc-tune
db=build/sfc-tune.db
$bin gemm 1024 1024 1024 --k-layers 2 --k-block-factor 2 --check
$bin tune --shapes data/grids/quick.shapes --db "$db"
$bin tune --grid 256,512 --layout row --db "$db"
$bin calibrate --db "$db"
$bin query 700 1500 3000 --db "$db"
$bin query 700 1500 3000 --layout row --db "$db"
