#!/usr/bin/env bash
# numpy_test.sh LIBSFCBLAS: Debian's numpy (/usr/bin/python3, python3-numpy,
# which calls the system CBLAS) with LD_PRELOAD=libsfcblas.so: a @ b for
# float32 and float64, C- and Fortran-ordered operands and transposed views,
# matches numpy without the preload within twice the gamma_K bound, and the
# SFC_BLAS_VERBOSE counts show the calls ran on SFC-CA; the same run's
# SFC_VERBOSE lines and SFC_RECORD file each count every one of those calls.
# With the default thresholds, a large GEMM runs on SFC-CA and a skinny one
# (K = 8) of as many flops goes to the real BLAS.
set -euo pipefail
library=$1
python=/usr/bin/python3
"$python" -c "import numpy" 2>/dev/null || { echo "numpy_test: /usr/bin/python3 has no numpy (apt-get install python3-numpy)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/products.py" <<'PY'
import sys
import numpy as np

rng = np.random.default_rng(7)
out = {}
for dtype in (np.float32, np.float64):
    for m, n, k in ((64, 48, 80), (130, 70, 90), (33, 257, 65)):
        a = rng.uniform(-1, 1, (m, k)).astype(dtype)
        b = rng.uniform(-1, 1, (k, n)).astype(dtype)
        views = {
            "C": (a, b),
            "F": (np.asfortranarray(a), np.asfortranarray(b)),
            "T": (np.ascontiguousarray(a.T).T, np.ascontiguousarray(b.T).T),  # transposed views
            "CT": (a, np.ascontiguousarray(b.T).T),
        }
        for name, (x, y) in views.items():
            key = f"{np.dtype(dtype).name}-{m}x{n}x{k}-{name}"
            out[key] = x @ y
            out["a-" + key], out["b-" + key] = a, b
np.savez(sys.argv[1], **out)
PY
"$python" "$dir/products.py" "$dir/plain.npz"
SFC_BLAS_ROUTE=sfc SFC_BLAS_MIN_FLOPS=0 SFC_BLAS_MIN_DIM=0 SFC_BLAS_VERBOSE=1 SFC_VERBOSE=1 SFC_RECORD="$dir/shapes.record" LD_PRELOAD="$library" \
  "$python" "$dir/products.py" "$dir/sfc.npz" \
  2> "$dir/verbose.txt" || { cat "$dir/verbose.txt" >&2; exit 1; }
grep -v '^sfc_verbose,' "$dir/verbose.txt" || true
"$python" - "$dir/plain.npz" "$dir/sfc.npz" <<'PY'
import sys
import numpy as np

plain, sfc = np.load(sys.argv[1]), np.load(sys.argv[2])
worst = 0.0
for key in plain.files:
    if key.startswith(("a-", "b-")):
        continue
    a, b = plain["a-" + key].astype(np.float64), plain["b-" + key].astype(np.float64)
    u = np.finfo(plain[key].dtype).eps / 2
    k = a.shape[1]
    gamma = k * u / (1 - k * u)
    bound = 2 * gamma * (np.abs(a) @ np.abs(b)) + np.finfo(np.float64).tiny
    ratio = float(np.max(np.abs(sfc[key].astype(np.float64) - plain[key].astype(np.float64)) / bound))
    worst = max(worst, ratio)
    if not ratio <= 1:
        sys.exit(f"{key}: error {ratio:.3g} x the bound")
print(f"{len([k for k in plain.files if not k.startswith(('a-', 'b-'))])} products match numpy without the "
      f"preload (worst {worst:.3g} of the bound)")
PY
calls=$(sed -n 's/^sfc-blas: \([0-9]*\) GEMM calls.*ran on SFC-CA.*/\1/p' "$dir/verbose.txt")
[ "${calls:-0}" -ge 24 ] || { echo "numpy_test: only ${calls:-0} calls reached SFC-CA" >&2; exit 1; }
lines=$(grep -c '^sfc_verbose,gemm,' "$dir/verbose.txt" || true)
[ "$lines" -eq "$calls" ] || { echo "numpy_test: $lines SFC_VERBOSE lines for $calls calls" >&2; exit 1; }
head -1 "$dir/shapes.record" | grep -qx 'sfc-shape-record 1' || { echo "numpy_test: no shape record" >&2; exit 1; }
recorded=$(awk '!/^#/ && NR > 1 { sum += $9 } END { print sum + 0 }' "$dir/shapes.record")
[ "$recorded" -eq "$calls" ] || { echo "numpy_test: the record holds $recorded calls of $calls" >&2; exit 1; }
echo "SFC_VERBOSE printed $lines lines and SFC_RECORD counted $recorded calls, one per call on SFC-CA"

# The routing: by default 512 x 512 x 512 and the thin 2048 x 2048 x 8 on
# SFC-CA, 64 x 64 x 64 (below SFC_BLAS_MIN_FLOPS) on the real BLAS; with
# SFC_BLAS_MIN_DIM=16 the thin one goes to the real BLAS too, for its K.
products='
import numpy as np
a, b = np.ones((512, 512), np.float32), np.ones((512, 512), np.float32)
assert (a @ b == 512).all()
a, b = np.ones((2048, 8), np.float32), np.ones((8, 2048), np.float32)
assert (a @ b == 8).all()
a, b = np.ones((64, 64), np.float32), np.ones((64, 64), np.float32)
assert (a @ b == 64).all()'
routing=$(env -u SFC_BLAS_MIN_FLOPS -u SFC_BLAS_MIN_DIM SFC_BLAS_VERBOSE=1 LD_PRELOAD="$library" "$python" -c "$products" 2>&1 |
  grep '^sfc-blas:')
echo "$routing"
echo "$routing" | grep -q '^sfc-blas: 2 GEMM calls .* ran on SFC-CA, 1 ' ||
  { echo "numpy_test: expected two calls on SFC-CA and one on the real BLAS by default" >&2; exit 1; }
routing=$(env -u SFC_BLAS_MIN_FLOPS SFC_BLAS_MIN_DIM=16 SFC_BLAS_VERBOSE=1 LD_PRELOAD="$library" "$python" -c "$products" 2>&1 |
  grep '^sfc-blas:')
echo "$routing"
echo "$routing" | grep -q '^sfc-blas: 1 GEMM calls .* ran on SFC-CA, 2 ' ||
  { echo "numpy_test: expected SFC_BLAS_MIN_DIM=16 to send the thin call to the real BLAS" >&2; exit 1; }

# The race: a shape's first call builds SFC-CA's plan, the next six time three
# calls of each (the real BLAS first), and every later call runs on the faster.
racing='
import numpy as np
a, b = np.ones((256, 256), np.float32), np.ones((256, 256), np.float32)
for _ in range(12): assert (a @ b == 256).all()'
routing=$(env -u SFC_BLAS_MIN_FLOPS -u SFC_BLAS_MIN_DIM SFC_BLAS_VERBOSE=1 LD_PRELOAD="$library" "$python" -c "$racing" 2>&1 |
  grep '^sfc-blas: routing')
echo "$routing"
echo "$routing" | grep -Eq '"racing":7,' ||
  { echo "numpy_test: expected seven racing calls" >&2; exit 1; }
echo "$routing" | grep -Eq '"race_won":5,"race_lost":0,|"race_won":0,"race_lost":5,' ||
  { echo "numpy_test: expected the five calls after the race all on its winner" >&2; exit 1; }
