#!/usr/bin/env bash
# make-manpage.sh BINARY OUTPUT: the sfc-tune(1) man page, from --help and
# --version (help2man), with every command's own --help as a COMMANDS
# section, so the page says what the binary it was built with does.
set -euo pipefail
binary=$1 output=$2
include=$(mktemp)
trap 'rm -f "$include"' EXIT
{
  echo "[COMMANDS]"
  for command in gemm tune export import merge "db info" query calibrate evaluate bench; do
    echo ".SS sfc-tune $command"
    echo ".nf"
    # shellcheck disable=SC2086  # "db info" is two words on purpose
    "$binary" $command --help | sed -e 's/\\/\\e/g' -e 's/^\./\\\&./'
    echo ".fi"
  done
  echo "[SEE ALSO]"
  echo "docs/reference.md, docs/getting-started.md and docs/architecture.md in the source tree."
} > "$include"
help2man --no-info --no-discard-stderr --name "autotuning for Space-Filling-Curve Communication-Avoiding GEMM" \
         --include "$include" --output "$output" "$binary"
