#!/usr/bin/env bash
# llm_shapes_test.sh SOURCE_DIR: data/grids/llm*.shapes are exactly what
# data/grids/make-llm.py writes, so the files and their generator cannot drift.
set -euo pipefail
source_dir=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$source_dir/data/grids/make-llm.py" "$out"
for name in llm llm-torch llm-decode llm-decode-torch; do
  diff -u "$source_dir/data/grids/$name.shapes" "$out/$name.shapes"
done
echo "the four LLM shape files match make-llm.py"
