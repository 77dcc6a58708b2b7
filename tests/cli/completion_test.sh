#!/usr/bin/env bash
# completion_test.sh BINARY COMPLETION_SCRIPT: what bash completion offers for
# a few command lines, through the installed script's own function.
set -uo pipefail
binary=$1
# shellcheck disable=SC1090
source "$2"
failures=0
# expect "WORDS..." WANTED: completing the last word of WORDS offers WANTED.
expect() {
  local words=$1 wanted=$2
  read -r -a COMP_WORDS <<< "$binary $words"
  [[ $words == *" " || -z $words ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _sfc_tune
  if [[ " ${COMPREPLY[*]} " != *" $wanted "* ]]; then
    echo "completing '$words': '$wanted' not among: ${COMPREPLY[*]}" >&2
    failures=$((failures + 1))
  fi
}
expect "tu" tune
expect "" bench
expect "bench --sha" --shapes
expect "tune --k-block" --k-block-factors
expect "query 64 64 64 --lay" --layout
expect "query 64 64 64 --layout " row
expect "db " info
expect "db info --j" --json
expect "rec" record
expect "record " show
expect "tune --from" --from-record
expect "gemm 64 64 64 --dtype b" bf16
# Nothing offered that is not an option of that command.
read -r -a COMP_WORDS <<< "$binary export --sha"
COMP_CWORD=2
COMPREPLY=()
_sfc_tune
if ((${#COMPREPLY[@]})); then
  echo "export has no --shapes, yet completion offered: ${COMPREPLY[*]}" >&2
  failures=$((failures + 1))
fi
exit $((failures > 0))
