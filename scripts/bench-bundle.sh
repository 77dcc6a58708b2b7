#!/usr/bin/env bash
# Builds sfc-tune for carrying to another x86-64 Linux machine where nothing
# can be installed (e.g. a 16-core box for `sfc-tune bench --threads 16`), and
# packs it with the peer libraries it dlopen()s and every shared library
# those need (glibc's too, used only where the target's is older):
#
#   bash scripts/bench-bundle.sh [OUT_DIR]      # default: build-bundle/sfc-tune-bundle
#   scp build-bundle/sfc-tune-bundle.tar.gz there: && tar xzf sfc-tune-bundle.tar.gz
#   sfc-tune-bundle/sfc-tune bench --grid 256,512,1024,2048 --threads 16
#   THREADS=16 VS=openblas,onednn sfc-tune-bundle/bench-small-grid.sh OUT   # the issue's run, both layouts
#   THREADS=16 BUDGET=480 sfc-tune-bundle/bench-many-core.sh OUT   # small and large grids within 8 minutes
#
# The launcher sets LD_LIBRARY_PATH to the bundle's lib/ and SFC_<PEER>_LIBRARY
# to each bundled peer, so nothing is looked up on the target machine. Where
# the target's glibc is older than this machine's (printed at the end), it runs
# sfc-tune through the bundle's own glibc and loader instead.
# Built without -march=native (SFC_NATIVE=OFF): LIBXSMM generates its kernels
# for the CPU it runs on, so the binary is fast there anyway. Not linked
# statically (SFC_STATIC=OFF): the bundle carries every shared library
# anyway, and a static libstdc++ next to the shared spdlog and fmt (which
# use the shared one) would put two C++ runtimes in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-bundle
out=${1:-$build/sfc-tune-bundle}

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSFC_NATIVE=OFF -DSFC_STATIC=OFF \
      -DSFC_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target sfc-tune

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$build/bin/sfc-tune" "$out/bin/"

# The peers CMake found for this build (the same paths the binary defaults to).
declare -A peers
for peer in OPENBLAS BLIS ONEDNN; do
  path=$(sed -n "s/^SFC_${peer}_LIBRARY:FILEPATH=//p" "$build/CMakeCache.txt")
  if [ -n "$path" ] && [ -e "$path" ]; then
    real=$(readlink -f "$path")
    # Keep the soname as the file name: the peers' own dependencies ask for it.
    soname=$(objdump -p "$real" | awk '/SONAME/ {print $2}')
    cp "$real" "$out/lib/${soname:-$(basename "$real")}"
    peers[$peer]=${soname:-$(basename "$real")}
  else
    echo "bench-bundle: no $peer library found by CMake; the bundle skips that peer" >&2
  fi
done

# Every shared library the binary and the peers need in lib/, but glibc's own,
# which go to lib/glibc/ with glibc's loader: a process uses one glibc
# throughout, the target's wherever it is new enough (the launcher below), and
# these only where it is older than the one sfc-tune was built against (an
# older distribution on the lent machine).
is_glibc() {
  case "$1" in
    linux-vdso.so.*|ld-linux*.so.*|libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*) return 0 ;;
  esac
  return 1
}
mkdir -p "$out/lib/glibc"
for object in "$out/bin/sfc-tune" "$out"/lib/*.so*; do
  ldd "$object" | awk '/=> \// {print $1, $3} /^[[:space:]]*\/[^ ]*ld-linux/ {print $1, $1}' |
    while read -r name path; do
      name=$(basename "$name")
      if is_glibc "$name"; then
        [ -e "$out/lib/glibc/$name" ] || cp "$(readlink -f "$path")" "$out/lib/glibc/$name"
      else
        [ -e "$out/lib/$name" ] || cp "$(readlink -f "$path")" "$out/lib/$name"
      fi
    done
done
loader=$(cd "$out/lib/glibc" && ls ld-linux*.so.* 2>/dev/null | head -1)

{
  echo '#!/bin/sh'
  echo '# sfc-tune with its bundled libraries and peers (see scripts/bench-bundle.sh).'
  echo 'here=$(cd "$(dirname "$0")" && pwd)'
  echo 'export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"'
  [ -n "${peers[OPENBLAS]:-}" ] && echo "export SFC_OPENBLAS_LIBRARY=\"\$here/lib/${peers[OPENBLAS]}\""
  [ -n "${peers[BLIS]:-}" ] && echo "export SFC_BLIS_LIBRARY=\"\$here/lib/${peers[BLIS]}\""
  [ -n "${peers[ONEDNN]:-}" ] && echo "export SFC_ONEDNN_LIBRARY=\"\$here/lib/${peers[ONEDNN]}\""
  # The target's glibc where sfc-tune runs on it (SFC_BUNDLED_GLIBC=1 skips
  # the try, to rehearse the other way); else the bundle's, through its loader.
  echo 'if [ -z "${SFC_BUNDLED_GLIBC:-}" ] && "$here/bin/sfc-tune" --version >/dev/null 2>&1; then'
  echo '  exec "$here/bin/sfc-tune" "$@"'
  echo 'fi'
  if [ -n "$loader" ]; then
    echo "exec \"\$here/lib/glibc/$loader\" --library-path \"\$here/lib/glibc:\$here/lib\" \"\$here/bin/sfc-tune\" \"\$@\""
  else
    echo 'exec "$here/bin/sfc-tune" "$@"'
  fi
} > "$out/sfc-tune"
chmod +x "$out/sfc-tune"
# The issue's measurements, which find the launcher next to them (and the
# many-core run its large grid).
cp scripts/bench-small-grid.sh scripts/bench-many-core.sh data/grids/large.shapes "$out/"

tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
glibc=$(objdump -T "$out/bin/sfc-tune" "$out"/lib/*.so* 2>/dev/null |
        grep -o 'GLIBC_[0-9.]*' | sort -t. -k2,2n -k3,3n -u | tail -1)
echo "bench-bundle: $out.tar.gz ($(du -h "$out.tar.gz" | cut -f1)); built against ${glibc:-glibc}, carries its own for older targets"
