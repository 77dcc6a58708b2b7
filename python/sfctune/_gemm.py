"""sfctune.gemm over sfc_sgemm / sfc_dgemm (private: use sfctune.gemm)."""

from . import _errors, _library

try:
    import numpy as np
except ImportError:  # the rest of sfctune works without numpy; gemm says what it needs
    np = None

_ROW_MAJOR, _COL_MAJOR = 101, 102
_NO_TRANS, _TRANS = 111, 112
_INT_MAX = (1 << 31) - 1


def _copy(x):
    """The one copy of an operand (the tests count when it runs)."""
    return np.ascontiguousarray(x)


def _leading_dimension(x, row):
    """The leading dimension (in elements) with which `x` is stored row-major
    (row=True) or column-major, or None when its strides do not fit that
    order. A dimension of extent 1 fits any stride, an empty array any strides."""
    rows, cols = x.shape
    size = x.itemsize
    inner, outer = (x.strides[1], x.strides[0]) if row else (x.strides[0], x.strides[1])
    length, lines = (cols, rows) if row else (rows, cols)
    if x.size == 0:
        return max(1, length)
    if length > 1 and inner != size:
        return None
    if lines <= 1:
        return max(1, length)
    if outer <= 0 or outer % size or outer // size < max(1, length) or outer // size > _INT_MAX:
        return None
    return outer // size


def _operand(x, row):
    """(transpose, ld, array) for an input of a call in `row` order: as it is
    stored when its strides allow, else a C-ordered copy."""
    if x.flags.aligned:
        ld = _leading_dimension(x, row)
        if ld is not None:
            return _NO_TRANS, ld, x
        ld = _leading_dimension(x, not row)
        if ld is not None:
            return _TRANS, ld, x
    x = _copy(x)  # C-ordered: as it is in a row-major call, transposed in a column-major one
    return _NO_TRANS if row else _TRANS, max(1, x.shape[1]), x


def _check_operand(x, name):
    if not isinstance(x, np.ndarray):
        raise TypeError("%s must be a numpy.ndarray, not %s" % (name, type(x).__name__))
    if x.ndim != 2:
        raise ValueError("%s must be 2-D, not %d-D" % (name, x.ndim))
    if x.dtype not in (np.float32, np.float64):
        raise TypeError("%s has dtype %s; sfctune.gemm takes float32 or float64" % (name, x.dtype))


def _overlaps(out, x):
    try:
        return np.shares_memory(out, x, max_work=1000)
    except np.TooHardError:
        return True


def gemm(a, b, out=None, alpha=1.0, beta=0.0):
    """out = alpha * (a @ b) + beta * out on SFC-CA (sfc_sgemm / sfc_dgemm),
    and returns out.

    a (m x k) and b (k x n): 2-D numpy arrays, both float32 or both float64
    (else TypeError), C- or Fortran-ordered or transposed views of either,
    read where they are; any other strides are copied first.
    out: None (a new C-ordered m x n array; beta then has no effect) or a
    writable m x n array of the same dtype, C- or Fortran-ordered (strided
    rows or columns allowed), else ValueError. An out that shares memory with
    a or b is handled: that input is copied first.
    Shapes that do not match raise ValueError. A call the library refuses
    raises ValueError (an argument) or RuntimeError (the tuning file named by
    SFC_TUNING cannot be used, the engine failed), with its message.
    The tuning comes from SFC_TUNING; threads from OpenMP (OMP_NUM_THREADS).
    The GIL is released while the GEMM runs."""
    if np is None:
        raise ImportError("sfctune.gemm needs numpy (apt-get install python3-numpy)")
    _check_operand(a, "a")
    _check_operand(b, "b")
    if a.dtype != b.dtype:
        raise TypeError("a is %s and b is %s: sfctune.gemm takes one dtype for both" % (a.dtype, b.dtype))
    (m, k), (k_b, n) = a.shape, b.shape
    if k != k_b:
        raise ValueError("shapes %s and %s do not match: a has %d columns, b %d rows" % (a.shape, b.shape, k, k_b))
    if max(m, n, k) > _INT_MAX:
        raise ValueError("a dimension of %s x %s exceeds the C library's int range" % (a.shape, b.shape))
    dtype = a.dtype
    if out is None:
        out, beta = np.empty((m, n), dtype=dtype), 0.0
    else:
        if not isinstance(out, np.ndarray):
            raise ValueError("out must be a numpy.ndarray, not %s" % type(out).__name__)
        if out.shape != (m, n):
            raise ValueError("out has shape %s; a @ b has shape %s" % (out.shape, (m, n)))
        if out.dtype != dtype:
            raise ValueError("out has dtype %s; a and b are %s" % (out.dtype, dtype))
        if not out.flags.writeable:
            raise ValueError("out is read-only")
        if _overlaps(out, a):
            a = a.copy()
        if _overlaps(out, b):
            b = b.copy()
    row = True
    ldc = _leading_dimension(out, True) if out.flags.aligned else None
    if ldc is None and out.flags.aligned:
        row, ldc = False, _leading_dimension(out, False)
    if ldc is None:
        raise ValueError("out must be C- or Fortran-ordered (unit stride in one dimension), aligned, "
                         "with strides %s" % (out.strides,))
    trans_a, lda, a = _operand(a, row)
    trans_b, ldb, b = _operand(b, row)
    library = _library.gemm()
    call = library.sfc_sgemm if dtype == np.float32 else library.sfc_dgemm
    status = call(_ROW_MAJOR if row else _COL_MAJOR, trans_a, trans_b, m, n, k, float(alpha),
                  a.ctypes.data, lda, b.ctypes.data, ldb, float(beta), out.ctypes.data, ldc)
    if status != _library.SFC_GEMM_OK:
        raise _errors.gemm_error(library, status, "sfc_sgemm" if dtype == np.float32 else "sfc_dgemm")
    return out
