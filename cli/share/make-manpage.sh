#!/usr/bin/env bash
# make-manpage.sh BINARY OUTPUT [DOCDIR [DATADIR]]: the sfc-tune(1) man page,
# generated from the binary itself: every command `sfc-tune help commands`
# lists (with its own --help), and the environment and exit status from
# `sfc-tune help environment` (the settings table). Option lists become
# .TP paragraphs that man fills to the reader's width (80 columns fit).
# DOCDIR and DATADIR: where the documentation and shape grids are installed.
set -euo pipefail
binary=$1 output=$2
docdir=${3:-/usr/local/share/doc/sfc-tune}
datadir=${4:-/usr/local/share}
version=$("$binary" --version | head -1)

# roff text: backslashes escaped, a leading dot or quote made literal, and
# "-" written as \- so options copy as ASCII hyphens.
escape() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

# A --help text (CLI11's layout, or the environment block) as man markup:
# "Usage:" and section titles as paragraphs, each "  TERM   text" line as a
# .TP item (an indented line continues the item before it).
to_man() {
  awk '
    function flush() { if (term != "" || text != "") { print ".TP"; print "\\fB" term "\\fR"; print text } term = ""; text = "" }
    /^Environment and exit status: sfc\\-tune help environment$/ { next }
    /^  \\-h,\\-\\-help / { next }
    /^$/ { flush(); next }
    /^Usage: / { flush(); print ".PP"; sub(/^Usage: /, ""); print "\\fBUsage:\\fR " $0; next }
    /^[A-Z][A-Za-z ]*:$/ { flush(); print ".PP"; print "\\fB" $0 "\\fR"; next }
    /^   / { line = $0; sub(/^ +/, "", line); if (term != "" || text != "") text = text (text == "" ? "" : " ") line; else print line; next }
    /^  [^ ]/ {
      line = substr($0, 3)
      if (match(line, /  +/)) { flush(); term = substr(line, 1, RSTART - 1); text = substr(line, RSTART + RLENGTH); next }
      if (line ~ /^\\-/ || line ~ /^[A-Z][A-Z_]*( |$)/) { flush(); term = line; next }  # text on the next line
      flush(); print line; next
    }
    { flush(); print ".PP"; print $0 }
    END { flush() }'
}

{
  echo ".TH SFC-TUNE 1 \"\" \"$version\" \"User Commands\""
  echo ".nh"
  echo ".ad l"
  echo ".SH NAME"
  echo "sfc-tune \\- autotuning for Space-Filling-Curve Communication-Avoiding GEMM"
  echo ".SH SYNOPSIS"
  echo ".B sfc-tune"
  echo ".I COMMAND"
  echo "[\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR]"
  echo ".br"
  echo ".B sfc-tune help"
  echo "[\\fBenvironment\\fR|\\fBcommands\\fR|\\fICOMMAND\\fR]"
  echo ".SH DESCRIPTION"
  echo "sfc-tune measures the best configuration of SFC-CA GEMM for each shape,"
  echo "stores the winners in a tuning database, and answers shapes it never"
  echo "measured from them; libsfcgemm, sfc::gemm and the drop-in BLAS answer"
  echo "their callers' GEMMs from the same database."
  echo ".SH COMMANDS"
  while read -r command; do
    echo ".SS sfc\\-tune $command"
    # shellcheck disable=SC2086  # "db info" is two words on purpose
    "$binary" help $command | sed 's/[[:space:]]*$//' | escape | to_man
  done < <("$binary" help commands)
  echo ".SH EXAMPLES"
  while IFS='|' read -r example meaning; do
    echo ".TP"
    echo "\\fB$(escape <<< "$example")\\fR"
    echo "$meaning" | escape
  done <<'EXAMPLES'
sfc-tune tune --grid 256,512,1024 --db sfc-tune.db|Tune a grid of shapes into a database (resumable: rerun after an interruption).
sfc-tune query 700 1500 3000 --db sfc-tune.db|The configuration for a shape never tuned, and where the answer comes from.
sfc-tune export --db sfc-tune.db --format table -o fleet.table|The winners as a tuning table that libsfcgemm and SFC_TUNING read.
sfc-tune gemm 2048 2048 2048 --check|Run one shape and check its result against fp64.
SFC_RECORD=app.record ./app; sfc-tune record show app.record|Record the shapes an application runs, then rank them by share of GEMM time.
sfc-tune tune --from-record app.record --db sfc-tune.db|Tune the shapes a record holds.
EXAMPLES
  # The exit status and environment block: "TITLE:" lines start the sections.
  "$binary" help environment | sed 's/[[:space:]]*$//' | escape | awk '
    /^EXIT STATUS:$/ { print ".SH \"EXIT STATUS\""; next }
    /^ENVIRONMENT:$/ { print ".SH ENVIRONMENT"; next }
    { print }' | to_man
  echo ".SH FILES"
  echo ".TP"
  echo "\\fBsfc-tune.db\\fR"
  echo "The tuning database every command reads or writes unless \\fB\\-\\-db\\fR names another (in the current directory)."
  echo ".TP"
  echo "\\fB$(escape <<< "$datadir/sfc-tune/grids/*.shapes")\\fR"
  echo "Shape grids for \\fB\\-\\-shapes\\fR."
  echo ".TP"
  echo "\\fB$(escape <<< "$datadir/bash-completion/completions/sfc-tune")\\fR"
  echo "Bash completion."
  echo ".SH \"SEE ALSO\""
  echo "$docdir/getting-started.md (how the commands work together)," | escape
  echo "$docdir/reference.md (every command and option) and" | escape
  echo "$docdir/architecture.md." | escape
} > "$output"
