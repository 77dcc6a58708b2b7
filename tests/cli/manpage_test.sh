#!/usr/bin/env bash
# manpage_test.sh BINARY PAGE: the generated sfc-tune(1) holds a section for
# every command the binary lists, every environment variable of `help
# environment`, EXAMPLES, FILES and EXIT STATUS; rendered at 80 columns no
# line is wider; it names no build-host CPU and no source-tree path.
set -uo pipefail
binary=$1 page=$2
status=0
rendered=$(LC_ALL=C MANWIDTH=80 MAN_KEEP_FORMATTING= man --nh --nj -l "$page" 2>/dev/null || LC_ALL=C groff -man -Tascii -rLL=80n "$page")
rendered=$(sed 's/.\x08//g' <<< "$rendered")  # overstrikes (bold) as plain text
[ -n "$rendered" ] || { echo "the man page renders to nothing" >&2; exit 1; }
wanted=("NAME" "SYNOPSIS" "COMMANDS" "EXAMPLES" "EXIT STATUS" "ENVIRONMENT" "FILES" "SEE ALSO")
while read -r command; do wanted+=("sfc-tune $command"); done < <("$binary" help commands)
while read -r variable; do wanted+=("$variable"); done < <("$binary" help environment | awk '/^  [A-Z_]+( |$)/ && $1 ~ /_|NO_COLOR/ { print $1 }')
wanted+=("--shapes" "--k-block-factors" "--platform" "record show")
for text in "${wanted[@]}"; do
  grep -qF -- "$text" <<< "$rendered" || { echo "the man page lacks '$text'" >&2; status=1; }
done
wide=$(awk 'length($0) > 80' <<< "$rendered")
[ -z "$wide" ] || { echo "lines wider than 80 columns:" >&2; echo "$wide" >&2; status=1; }
if grep -q "platform of this machine\|in the source tree\|docs/reference.md" <<< "$rendered"; then
  echo "the man page names the build host's CPU or the source tree" >&2
  status=1
fi
exit $status
