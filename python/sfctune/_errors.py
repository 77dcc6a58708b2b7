"""C status codes to Python exceptions (private)."""

from . import _library

# sfcconf_status: argument, unreadable, corrupt, platform, memory, internal.
_CONF_EXCEPTIONS = {1: ValueError, 2: OSError, 5: MemoryError}


def conf_error(status):
    """The exception for a failed libsfcconf call, with the library's message:
    ValueError for a bad argument, OSError for a file that cannot be read,
    MemoryError, else RuntimeError (a corrupt file, a foreign platform, a bug)."""
    library = _library.conf()
    message = _library.text(library.sfcconf_last_error()) or _library.text(library.sfcconf_status_name(status))
    return _CONF_EXCEPTIONS.get(status, RuntimeError)(message)


def gemm_error(library, status, call):
    """The exception for a failed sfc_gemm call: ValueError for a bad argument,
    RuntimeError for the others (tuning file, engine, internal)."""
    message = _library.text(library.sfc_gemm_last_error()) or "%s failed with status %d" % (call, status)
    return (ValueError if status == _library.SFC_GEMM_ERR_ARGUMENT else RuntimeError)(message)
