"""Finding and loading the sfc shared libraries (private).

Where the libraries come from, first match wins:
  1. the directory in the environment variable SFCTUNE_LIBDIR;
  2. the directory this copy of the package was configured with (_config.py,
     written by CMake: the build tree's lib folder, or the installed one);
  3. the system loader's search (ld.so.conf, LD_LIBRARY_PATH).

The GEMM entry points come from the process's global scope when it already
has them (a preloaded libsfcblas carrying the sfc_gemm API), so that one
process runs one engine; otherwise from libsfcgemm.
"""

import ctypes
import os
import re
import threading

try:
    from . import _config
except ImportError:  # a copy of the sources that CMake did not configure
    _config = None

_lock = threading.Lock()
_conf = None
_gemm = None

# The status codes of sfcconf.h and sfc_gemm.h.
SFCCONF_OK, SFCCONF_ERR_ARGUMENT, SFCCONF_ERR_UNREADABLE, SFCCONF_ERR_MEMORY = 0, 1, 2, 5
SFC_GEMM_OK, SFC_GEMM_ERR_ARGUMENT = 0, 1


class AnswerStruct(ctypes.Structure):
    """sfcconf_answer (sfcconf.h)."""

    _fields_ = [
        ("k_layers", ctypes.c_int),
        ("k_block_factor", ctypes.c_int),
        ("tier", ctypes.c_int),
        ("distance", ctypes.c_double),
        ("nearest_m", ctypes.c_int64),
        ("nearest_n", ctypes.c_int64),
        ("nearest_k", ctypes.c_int64),
    ]


def library_dir():
    """The directory the libraries are loaded from, or None for the system loader."""
    configured = os.environ.get("SFCTUNE_LIBDIR")
    if configured:
        return configured
    return getattr(_config, "LIBDIR", None) or None


def _soname(name):
    return getattr(_config, name.upper() + "_SONAME", None) or "lib%s.so.0" % name


def _load(name):
    """Loads libNAME (its soname) from library_dir(), else through the system loader."""
    directory = library_dir()
    target = os.path.join(directory, _soname(name)) if directory else _soname(name)
    try:
        return ctypes.CDLL(target)
    except OSError as e:
        where = ("from %s (SFCTUNE_LIBDIR, or the directory sfctune was configured with)" % directory
                 if directory else "through the system loader (set SFCTUNE_LIBDIR to its directory)")
        raise OSError("sfctune: cannot load %s %s: %s" % (_soname(name), where, e)) from None


def _declare(function, restype, *argtypes):
    function.restype = restype
    function.argtypes = list(argtypes)


def _declare_record(library, prefix):
    _declare(getattr(library, prefix + "_record_open"), ctypes.c_int, ctypes.c_char_p)
    _declare(getattr(library, prefix + "_record_flush"), ctypes.c_int)
    _declare(getattr(library, prefix + "_record_close"), ctypes.c_int)


def conf():
    """libsfcconf, its functions declared."""
    global _conf
    with _lock:
        if _conf is None:
            library = _load("sfcconf")
            handle = ctypes.c_void_p
            _declare(library.sfcconf_open, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                     ctypes.POINTER(handle))
            _declare(library.sfcconf_query_source, ctypes.c_int, handle, ctypes.c_int64, ctypes.c_int64,
                     ctypes.c_int64, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.POINTER(AnswerStruct),
                     ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
            _declare(library.sfcconf_close, None, handle)
            _declare(library.sfcconf_last_error, ctypes.c_char_p)
            for name in ("sfcconf_tier_name", "sfcconf_platform_match_name", "sfcconf_status_name"):
                _declare(getattr(library, name), ctypes.c_char_p, ctypes.c_int)
            _declare_record(library, "sfcconf")
            _conf = library
        return _conf


def _has(library, symbol):
    try:
        getattr(library, symbol)
        return True
    except AttributeError:
        return False


def gemm():
    """The library whose sfc_sgemm/sfc_dgemm this process calls: the global
    scope's when it has them (a preloaded libsfcblas), else libsfcgemm."""
    global _gemm
    with _lock:
        if _gemm is None:
            process = ctypes.CDLL(None)
            library = process if _has(process, "sfc_sgemm") else _load("sfcgemm")
            i, p = ctypes.c_int, ctypes.c_void_p
            for name, real in (("sfc_sgemm", ctypes.c_float), ("sfc_dgemm", ctypes.c_double)):
                _declare(getattr(library, name), i, i, i, i, i, i, i, real, p, i, p, i, real, p, i)
            _declare(library.sfc_gemm_last_error, ctypes.c_char_p)
            if _has(library, "sfc_gemm_record_open"):
                _declare_record(library, "sfc_gemm")
            _gemm = library
        return _gemm


def text(value):
    """A C string from the libraries as str."""
    return value.decode("utf-8", "replace") if value else ""


_SFC_LIBRARY = re.compile(r"/libsfc(conf|gemm|blas)\.so[.0-9]*$")


def loaded_paths():
    """Paths of the sfc libraries (libsfcconf, libsfcgemm, libsfcblas) mapped
    into this process, in the order they appear in /proc/self/maps ([] where
    that cannot be read)."""
    paths = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                path = fields[5].strip() if len(fields) == 6 else ""
                if _SFC_LIBRARY.search(path) and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    return paths


def loaded_libraries():
    """Every sfc library already in this process as a ctypes library, the
    global scope first (where a preloaded library's exported symbols are),
    loading nothing new."""
    libraries = [ctypes.CDLL(None)]
    for path in loaded_paths():
        try:
            libraries.append(ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY))
        except OSError:
            pass
    return libraries
