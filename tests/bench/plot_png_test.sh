#!/usr/bin/env bash
# plot_png_test.sh BINARY: a small benchmark's SVG plot renders to PNG with a
# real SVG renderer (rsvg-convert, Debian's librsvg2-bin), so a plot that a
# browser would refuse fails the suite, not a reader.
set -euo pipefail
binary=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Three shapes, two peers if they load, a noisy-looking short run: every
# element of the plot is drawn (series, roofline, FMA peak, legend, labels).
SFC_COLD_BYTES=4194304 "$binary" bench --grid 24,40 --threads 2 --reps 2 --warmup 1 --config 1,1 \
  --vs openblas,blis --plot "$dir/plot.svg" > "$dir/report.txt" 2>&1 || { cat "$dir/report.txt" >&2; exit 1; }
rsvg-convert --format png --output "$dir/plot.png" "$dir/plot.svg"
signature=$(head -c 8 "$dir/plot.png" | od -An -tx1 | tr -d ' \n')
[ "$signature" = 89504e470d0a1a0a ] || { echo "not a PNG: $signature" >&2; exit 1; }
# The IHDR chunk: width and height, big-endian, at bytes 16..23.
size=$(od -An -tu1 -j16 -N8 "$dir/plot.png" | tr -s ' ' | sed 's/^ //')
read -r w3 w2 w1 w0 h3 h2 h1 h0 <<< "$size"
width=$(( (w3 << 24) + (w2 << 16) + (w1 << 8) + w0 )) height=$(( (h3 << 24) + (h2 << 16) + (h1 << 8) + h0 ))
[ "$width" -ge 600 ] && [ "$height" -ge 400 ] || { echo "rendered ${width}x${height}" >&2; exit 1; }
for wanted in 'WHM' 'FMA peak' 'roofline'; do
  grep -q "$wanted" "$dir/plot.svg" || { echo "the plot lacks '$wanted'" >&2; exit 1; }
done
echo "plot rendered to a ${width}x${height} PNG"
