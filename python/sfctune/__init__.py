"""sfctune: SFC-CA GEMM and its tuning tables from Python (ctypes over
libsfcconf and libsfcgemm; no compiled extension).

    import numpy as np, sfctune

    with sfctune.open("tuned.sfctable") as table:
        answer = table.query(512, 2048, 2048, dtype="f32", threads=2)
        print(answer.k_layers, answer.k_block_factor, answer.tier)

    c = sfctune.gemm(np.ones((64, 32), np.float32), np.ones((32, 16), np.float32))

    with sfctune.record("shapes.record"):
        run_the_model()          # its GEMM shapes are counted into the file

    sfctune.status()             # {"active": False, ...} without the drop-in BLAS

The libraries are found through SFCTUNE_LIBDIR, else the directory this copy
was built or installed with, else the system loader. docs/python.md has more.
"""

from ._gemm import gemm
from ._process import record, status
from ._table import Answer, Table, default_threads, open

try:
    from ._config import VERSION as __version__
except ImportError:  # sources not configured by CMake
    __version__ = "unknown"

__all__ = ["Answer", "Table", "default_threads", "gemm", "open", "record", "status"]
