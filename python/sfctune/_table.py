"""sfctune.open and the Table it returns (private: use the names in sfctune)."""

import ctypes
import dataclasses
import math
import operator
import os
import threading

from . import _errors, _library

_DTYPES = {"f32": 0, "f64": 1, "bf16": 2}
_LAYOUTS = {"blocked": 0, "row": 1, "col": 2}
_LAYOUT_NAMES = {code: name for name, code in _LAYOUTS.items()}
_TIERS = ("exact", "nearest", "model", "default")
_PLATFORMS = ("exact", "compatible", "foreign")
_INT64 = (-(1 << 63), (1 << 63) - 1)
_INT32 = (-(1 << 31), (1 << 31) - 1)


@dataclasses.dataclass(frozen=True)
class Answer:
    """The configuration a table gives one GEMM shape.

    k_layers, k_block_factor: the SFC-CA parameters to run it with (1..8 each).
    tier: which answered: "exact" (a tuned shape), "nearest" (a tuned shape
        nearby), "model" (the analytical model), "default" (neither).
    distance: log2-space distance to the nearest tuned shape of the same
        dtype, threads and layout; math.inf when there is none.
    nearest: that shape as (m, n, k), or None when there is none.
    platform: how the platform that answered matches this machine: "exact",
        "compatible" or "foreign" (only with platform="any").
    borrowed_from: None when the queried layout's own tuned shapes answered
        (or the model or default tier did), else the layout ("row", "col" or
        "blocked") whose tuned shapes gave an exact or nearest answer.
    """

    k_layers: int
    k_block_factor: int
    tier: str
    distance: float
    nearest: tuple
    platform: str
    borrowed_from: str = None


def default_threads():
    """OpenMP's default thread count: OMP_NUM_THREADS when it holds a positive
    integer (its first entry, for a nested list such as "4,2"), else the CPUs
    this process may run on."""
    value = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    try:
        threads = int(value)
        if threads >= 1:
            return threads
    except ValueError:
        pass
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _integer(value, name, bounds):
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, not %s" % (name, type(value).__name__)) from None
    if not bounds[0] <= number <= bounds[1]:
        raise ValueError("%s is %d, out of the range the C library takes" % (name, number))
    return number


def _choice(value, name, choices):
    if value not in choices:
        raise ValueError("%s is %r, not one of %s" % (name, value, ", ".join(map(repr, choices))))
    return choices[value]


class Table:
    """An opened tuning table or database (sfcconf_open). Use as a context
    manager, or call close(). Queries may come from any number of threads at
    once; close() must not run while one does."""

    def __init__(self, path, platform=None):
        library = _library.conf()
        self.path = None if path is None else os.fsdecode(path)
        self.platform = platform
        handle = ctypes.c_void_p()
        status = library.sfcconf_open(None if path is None else os.fsencode(path),
                                      None if platform is None else platform.encode(), ctypes.byref(handle))
        if status != _library.SFCCONF_OK:
            raise _errors.conf_error(status)
        self._library = library
        self._handle = handle
        self._close_lock = threading.Lock()

    def query(self, m, n, k, dtype="f32", threads=None, layout="row"):
        """The Answer for C = A B with A m x k and B k x n, of `dtype` ("f32",
        "f64", "bf16") on `threads` threads (None: default_threads()), called
        on `layout` ("row", "col" or "blocked"). ValueError for a size or
        thread count below 1 (the library's message), an unknown dtype or
        layout, or a closed table; TypeError for a size that is not an integer."""
        m, n, k = (_integer(v, name, _INT64) for v, name in ((m, "m"), (n, "n"), (k, "k")))
        threads = default_threads() if threads is None else _integer(threads, "threads", _INT32)
        dtype_code = _choice(dtype, "dtype", _DTYPES)
        layout_code = _choice(layout, "layout", _LAYOUTS)
        handle = self._handle
        if handle is None:
            raise ValueError("query on a closed sfctune.Table")
        answer, match, source = _library.AnswerStruct(), ctypes.c_int(), ctypes.c_int()
        status = self._library.sfcconf_query_source(handle, m, n, k, dtype_code, threads, layout_code,
                                                    ctypes.byref(answer), ctypes.byref(match), ctypes.byref(source))
        if status != _library.SFCCONF_OK:
            raise _errors.conf_error(status)
        found = not math.isinf(answer.distance)
        return Answer(
            k_layers=answer.k_layers,
            k_block_factor=answer.k_block_factor,
            tier=_TIERS[answer.tier],
            distance=answer.distance,
            nearest=(answer.nearest_m, answer.nearest_n, answer.nearest_k) if found else None,
            platform=_PLATFORMS[match.value],
            borrowed_from=None if source.value == layout_code else _LAYOUT_NAMES[source.value],
        )

    @property
    def closed(self):
        return self._handle is None

    def close(self):
        """Releases the table (a second call does nothing)."""
        with self._close_lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            self._library.sfcconf_close(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            self.close()

    def __repr__(self):
        state = "closed" if self.closed else "open"
        return "<sfctune.Table %r platform=%r %s>" % (self.path, self.platform, state)


def open(path, platform=None):  # noqa: A001 (the public name is sfctune.open)
    """Opens a tuning table, database or folder of tables (sfcconf_open) and
    returns a Table.

    path: the file or folder (str or os.PathLike): of a folder, the table for
        this machine, dtype and thread count is used (docs/getting-started.md);
        None opens no file, so every answer is the model or default tier for
        this machine.
    platform: "this" (this machine's results, else a compatible platform's),
        "any" (the best match the file holds, foreign included), a platform
        hash (16 hex digits), or None: the environment variable SFC_PLATFORM,
        else "this".
    Raises OSError (missing or unreadable file), RuntimeError (not a tuning
    file, or tuned on another platform) or ValueError (a bad platform name),
    each with the library's message."""
    return Table(path, platform)
