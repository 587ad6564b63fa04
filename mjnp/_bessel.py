"""NumPy's Bessel function `i0`: Cephes' Chebyshev series (the one `lax.bessel_i0e` evaluates)
in NumPy's order of operations, so the values are NumPy's bit for bit. Its own module so that
both the elementwise functions and the Kaiser window import it from below."""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.array import Array
from mjcore.eager_fusion import fuse_eagerly
from mjcore.lax.special import I0E_CHEBYSHEV_LARGE, I0E_CHEBYSHEV_SMALL, chebyshev_series
from mjnp._promotion import asarray_arg

ArrayLike = Any


def _const(value: Any, like: Array) -> Array:
    return lax.full((), value, like.dtype)


def _where(pred: Array, on_true: Array, on_false: Array) -> Array:
    """`select_n` with NumPy's argument order, broadcasting all three."""
    shape = np.broadcast_shapes(pred.shape, on_true.shape, on_false.shape)
    return lax.select_n(
        lax.broadcast_to(pred, shape),
        lax.broadcast_to(on_false, shape),
        lax.broadcast_to(on_true, shape),
    )


@fuse_eagerly
def i0(x: ArrayLike) -> Array:
    """Modified Bessel function of the first kind, order 0, as `numpy.i0` (same Chebyshev
    expansion, so the same values).

    Raises:
        TypeError: for complex input, as NumPy.
    """
    x = asarray_arg("i0", x)
    if x.dtype.kind == "c":
        raise TypeError("mjnp.i0: i0 not supported for complex values")
    if dtypes.kind(x.dtype) != "f":
        x = lax.convert_element_type(x, np.dtype("float64"))
    x = lax.abs(x)
    small = lax.le(x, _const(8.0, x))
    x_small = _where(small, x, _const(0, x))
    x_large = _where(small, _const(8.0, x), x)
    # NumPy's order of operations, exp(x) * chbevl(...) [/ sqrt(x)], on the Cephes series that
    # `lax.bessel_i0e` evaluates, so the values are NumPy's bit for bit.
    lo = lax.mul(
        lax.exp(x),
        chebyshev_series(
            lax.sub(lax.div(x_small, _const(2.0, x)), _const(2.0, x)), I0E_CHEBYSHEV_SMALL
        ),
    )
    hi = lax.div(
        lax.mul(
            lax.exp(x_large),
            chebyshev_series(
                lax.sub(lax.div(_const(32.0, x), x_large), _const(2.0, x)), I0E_CHEBYSHEV_LARGE
            ),
        ),
        lax.sqrt(x_large),
    )
    return _where(small, lo, hi)
