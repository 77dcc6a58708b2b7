#!/usr/bin/env bash
# completion_test.sh BINARY COMPLETION_SCRIPT: what bash completion offers for
# a few command lines, through the installed script's own function.
set -uo pipefail
binary=$(realpath "$1")
script=$(realpath "$2")
# A directory holding one file, so that a file completion has something to offer.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
touch app.record
compopt() { :; }  # only valid inside a completion bash runs itself
# shellcheck disable=SC1090
source "$script"
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
# A file where the command takes one; values where an option takes them.
expect "record show " app.record
expect "import " app.record
expect "tune --from-record " app.record
expect "bench --vs " blis
expect "bench --vs openblas," openblas,onednn
expect "bench --trans " TT
expect "bench --trans NN,T" NN,TN
expect "bench --statistic " mean
expect "help " environment
expect "help " "record"
# nothing: an option name, a file or a command would all be wrong here.
expect_nothing() {
  read -r -a COMP_WORDS <<< "$binary $1"
  [[ $1 == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _sfc_tune
  if ((${#COMPREPLY[@]})); then
    echo "completing '$1': expected nothing, got: ${COMPREPLY[*]}" >&2
    failures=$((failures + 1))
  fi
}
expect_nothing "bench --threads "
expect_nothing "gemm 64 64 64 --threads "
expect_nothing "gemm 64 "
expect_nothing "tune --grid "
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
