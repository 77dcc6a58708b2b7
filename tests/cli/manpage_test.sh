#!/usr/bin/env bash
# manpage_test.sh PAGE: the generated sfc-tune(1) holds every command's
# section, the environment variables and the options users look up.
set -uo pipefail
text=$(sed -e 's/\\-/-/g' -e 's/\\e/\\/g' "$1")  # roff's escaped dashes, as a reader sees them
status=0
for wanted in "sfc-tune gemm" "sfc-tune tune" "sfc-tune export" "sfc-tune import" "sfc-tune merge" \
              "sfc-tune db info" "sfc-tune query" "sfc-tune calibrate" "sfc-tune evaluate" "sfc-tune bench" \
              "ENVIRONMENT" "SFC_PLATFORM" "SFC_TUNING" "--shapes" "--k-block-factors" "--platform"; do
  grep -qF -- "$wanted" <<< "$text" || { echo "the man page lacks '$wanted'" >&2; status=1; }
done
exit $status
