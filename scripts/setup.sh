#!/usr/bin/env bash
# Installs what sfc-tune needs (Debian packages; root), then configures and
# builds into build/: everything, or only the targets named as arguments
# (scripts/main.sh builds sfc-tune alone, about half the build). Safe to rerun:
# installs only what is missing, and the build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake make ninja-build pkg-config libxsmm-dev libsqlite3-dev libnanoflann-dev libspdlog-dev
          doctest-dev libhwloc-dev libcli11-dev nlohmann-json3-dev sqlite3 librsvg2-bin python3-numpy python3-pytest
          libopenblas-dev libblis-dev libdnnl-dev)  # the last three: peers for `sfc-tune bench`
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# SFC_CMAKE_ARGS: extra options, e.g. "-DSFC_NATIVE=ON" (CI passes -DSFC_WERROR=ON).
# A new build folder uses Ninja: it compiles a target's files while the
# libraries it links are still building, which make does not; a folder
# configured earlier keeps its generator (CMake refuses to change it).
generator=()
[ -f build/CMakeCache.txt ] || generator=(-G Ninja)
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release ${SFC_CMAKE_ARGS:-} >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
