"""Debian's PyTorch under the drop-in: a transformer encoder layer's forward
pass (d_model 1024, 16 heads, FFN 4096, batch 2 x 256 tokens) computed in
this process and, with LD_PRELOAD=libsfcblas.so, in a child; the outputs agree
within 1e-4 relative (Frobenius), and the child's nn.Linear GEMMs (sgemm_,
column-major) ran on SFC-CA. Exit 77 (skipped) when torch cannot be imported.
Usage: torch_test.py LIBSFCBLAS"""
import ctypes
import json
import os
import subprocess
import sys

try:
    import torch
except ImportError as e:
    print(f"torch_test: skipped: PyTorch cannot be imported ({e}); apt-get install python3-torch")
    sys.exit(77)


def forward():
    torch.manual_seed(0)
    torch.set_num_threads(2)
    layer = torch.nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096, batch_first=True)
    layer.eval()
    x = torch.randn(2, 256, 1024)
    with torch.no_grad():
        for _ in range(2):  # the second pass runs on plans (and routes) the first one made
            y = layer(x)
    return y


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[2] == "--child":
        torch.save(forward(), sys.argv[1])
        routing = ctypes.CDLL(None).sfc_blas_routing
        routing.restype = ctypes.c_char_p
        print(routing().decode())
        sys.exit(0)
    library = sys.argv[1]
    plain = forward()
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"torch_test_{os.getpid()}.pt")
    env = dict(os.environ, LD_PRELOAD=library, SFC_BLAS_ROUTE="sfc")
    child = subprocess.run([sys.executable, __file__, out, "--child"], env=env, capture_output=True, text=True,
                           timeout=600)
    if child.returncode != 0:
        sys.exit(f"torch_test: the preloaded run failed:\n{child.stderr}")
    preloaded = torch.load(out)
    os.remove(out)
    routing = json.loads(child.stdout.strip().splitlines()[-1])
    error = float(torch.linalg.norm(preloaded - plain) / torch.linalg.norm(plain))
    print(f"relative difference {error:.2e}; routing {routing}")
    # Per pass: the four projections (in_proj, out_proj, linear1, linear2) at least.
    assert routing["sfc_calls"] >= 8, "the layer's GEMMs did not reach SFC-CA"
    assert error <= 1e-4, f"outputs differ by {error:.2e} relative"
    print("1 passed, 0 failed")
