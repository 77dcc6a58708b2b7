"""sfctune.record and sfctune.status: process-wide state of the sfc
libraries (private: use the names in sfctune)."""

import contextlib
import ctypes
import json
import os

from . import _library

_RECORD_PREFIXES = ("sfcconf", "sfc_gemm")


def _address(function):
    return ctypes.cast(function, ctypes.c_void_p).value


def _recorders():
    """(prefix, record_open, record_close, last_error) for each distinct shape
    recorder in the process: libsfcconf's and the GEMM library's that sfctune
    uses (loaded now when they can be), and those of any other sfc library
    already loaded that exports the record calls (a preloaded libsfcblas)."""
    libraries = []
    for load in (_library.conf, _library.gemm):
        try:
            libraries.append(load())
        except OSError:
            pass  # not installed: nothing of sfctune's own can run there to record
    libraries += _library.loaded_libraries()
    found, seen = [], set()
    for library in libraries:
        for prefix in _RECORD_PREFIXES:
            try:
                record_open = getattr(library, prefix + "_record_open")
                record_close = getattr(library, prefix + "_record_close")
            except AttributeError:
                continue
            if _address(record_open) in seen:
                continue
            seen.add(_address(record_open))
            record_open.argtypes, record_open.restype = [ctypes.c_char_p], ctypes.c_int
            record_close.argtypes, record_close.restype = [], ctypes.c_int
            error = getattr(library, "sfcconf_last_error" if prefix == "sfcconf" else "sfc_gemm_last_error")
            error.argtypes, error.restype = [], ctypes.c_char_p
            found.append((prefix, record_open, record_close, error))
    return found


@contextlib.contextmanager
def record(path):
    """Records the GEMM shapes this process runs into `path` while the block
    runs: starts shape recording (sfcconf_record_open, sfc_gemm_record_open)
    in every sfc library the process has loaded, libsfcconf and the GEMM
    library sfctune calls included, and on exit writes the counts and stops.

    The file is a shape record: `sfc-tune record show FILE` ranks it and
    `sfc-tune tune --from-record FILE` tunes it. Counts merge with what the
    file holds. Recording is process-wide (calls from every thread count) and
    one file at a time: a nested record() switches to its file.
    Raises ValueError (an empty path), OSError (no sfc library could be
    loaded) or RuntimeError (the file is not a shape record, cannot be
    created, or the last counts could not be written), with the library's
    message."""
    encoded = os.fsencode(path)
    recorders = _recorders()
    if not recorders:
        raise OSError("sfctune.record: no sfc library with shape recording is loaded or loadable "
                      "(set SFCTUNE_LIBDIR to the directory of libsfcconf.so and libsfcgemm.so)")
    started = []
    try:
        for name, record_open, record_close, error in recorders:
            status = record_open(encoded)
            if status != 0:
                message = _library.text(error()) or "%s_record_open failed with status %d" % (name, status)
                raise (ValueError if status == 1 else RuntimeError)(message)
            started.append((name, record_close, error))
        yield path
    finally:
        failures = []
        for name, record_close, error in reversed(started):
            if record_close() != 0:
                failures.append(_library.text(error()) or name + "_record_close failed")
    if failures:
        raise RuntimeError("; ".join(failures))


def status():
    """What the sfc libraries do in this process, as a dict:

    "active": whether the drop-in libsfcblas routes this process's BLAS GEMMs
        (it is preloaded or linked and exports sfc_blas_routing); when it is,
        the keys of its routing report follow: "fallback" (the real BLAS),
        "sfc_calls", "sfc_gflop", "fallback_calls", "fallback_gflop" and
        "reasons" (fallback calls by reason);
    "libraries": the paths of the sfc libraries mapped into the process;
    "version": the version of sfctune and the libraries it was built with."""
    from . import __version__

    report = {"active": False}
    try:
        routing = ctypes.CDLL(None).sfc_blas_routing
    except AttributeError:
        routing = None
    if routing is not None:
        routing.argtypes, routing.restype = [], ctypes.c_char_p
        text = _library.text(routing())
        try:
            report = json.loads(text)
            report.setdefault("active", True)
        except ValueError:
            report = {"active": True, "routing_unparsed": text}
    report["libraries"] = _library.loaded_paths()
    report["version"] = __version__
    return report
