#!/usr/bin/env bash
# Checks that every C and C++ source follows .clang-format (exit 1 and the
# files that do not, otherwise silent); `--fix` rewrites them instead.
# Formatting differs between clang-format releases, so the check pins the
# one the tree was formatted with (Debian's clang-format-14).
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-14 || true)
if [ -z "$fmt" ]; then
  echo "check-format: clang-format-14 not found (apt-get install clang-format-14)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' ':!:tests/data/*')
if [ "${1:-}" = --fix ]; then
  "$fmt" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$fmt" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  printf 'check-format: not formatted: %s\n' "${bad[@]}" >&2
  echo "check-format: run 'bash scripts/check-format.sh --fix'" >&2
  exit 1
fi
