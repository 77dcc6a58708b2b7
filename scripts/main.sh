#!/usr/bin/env bash
# The main job: set up and build; check one GEMM against the fp64 reference;
# tune the quick grid ({256,512,1024}^3) into the default database sfc-tune.db
# (resuming: shapes already there are not measured again); then ask for the
# configuration of a shape that was never tuned.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh sfc-tune  # the tests and the libraries build in scripts/test.sh
bin=./build/bin/sfc-tune
$bin gemm 1024 1024 1024 --k-layers 2 --k-block-factor 2 --check
$bin tune --shapes data/grids/quick.shapes --db sfc-tune.db
$bin calibrate --db sfc-tune.db
$bin query 700 1500 3000 --db sfc-tune.db
