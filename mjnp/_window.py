"""NumPy's window functions: `bartlett`, `blackman`, `hamming`, `hanning` and `kaiser`.

`M` is static; `beta` in `kaiser` may be traced (the window is differentiable in it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore import core, lax
from mjnp import _elementwise as ew
from mjnp._bessel import i0
from mjnp._creation import asarray

ArrayLike = Any
Array = Any

_FLOAT64 = np.dtype("float64")


def _window_positions(fname: str, M: Any) -> tuple[float, np.ndarray | None]:  # noqa: N803
    """M as a float (NumPy's window argument) and the positions arange(1 - M, M, 2)."""
    m = float(np.asarray(core.concrete_or_error(M, f"mjnp.{fname}(M=...)")))
    if m < 1 or m == 1:
        return m, None
    return m, np.arange(1 - m, m, 2)


def _small_window(m: float) -> Array:
    return lax.full((0,) if m < 1 else (1,), 1.0, _FLOAT64)


def bartlett(M: int) -> Array:  # noqa: N803  (NumPy's argument name)
    """The Bartlett (triangular) window of `M` points, as `numpy.bartlett`."""
    m, n = _window_positions("bartlett", M)
    if n is None:
        return _small_window(m)
    n = asarray(n)
    ratio = ew.true_divide(n, m - 1)
    return ew.where(ew.less_equal(n, 0), ew.add(1, ratio), ew.subtract(1, ratio))


def _cosine_window(fname: str, M: Any, coeffs: tuple[float, ...]) -> Array:  # noqa: N803
    m, n = _window_positions(fname, M)
    if n is None:
        return _small_window(m)
    phase = ew.true_divide(ew.multiply(np.pi, asarray(n)), m - 1)
    out = asarray(coeffs[0])
    for i, c in enumerate(coeffs[1:], start=1):
        out = ew.add(out, ew.multiply(c, ew.cos(ew.multiply(float(i), phase) if i > 1 else phase)))
    return out


def blackman(M: int) -> Array:  # noqa: N803  (NumPy's argument name)
    """The Blackman window of `M` points, as `numpy.blackman`."""
    return _cosine_window("blackman", M, (0.42, 0.5, 0.08))


def hamming(M: int) -> Array:  # noqa: N803  (NumPy's argument name)
    """The Hamming window of `M` points, as `numpy.hamming`."""
    return _cosine_window("hamming", M, (0.54, 0.46))


def hanning(M: int) -> Array:  # noqa: N803  (NumPy's argument name)
    """The Hann window of `M` points, as `numpy.hanning`."""
    return _cosine_window("hanning", M, (0.5, 0.5))


def kaiser(M: int, beta: ArrayLike) -> Array:  # noqa: N803  (NumPy's argument name)
    """The Kaiser window of `M` points and shape `beta`, as `numpy.kaiser`.

    `beta` may be traced (the window is differentiable in it); `M` is static.
    """
    m = float(np.asarray(core.concrete_or_error(M, "mjnp.kaiser(M=...)")))
    beta = lax.convert_element_type(asarray(beta), _FLOAT64)
    if m == 1:
        return lax.full((1,), 1.0, _FLOAT64)
    n = np.arange(0, m)
    if n.size == 0:
        return lax.full((0,), 0.0, _FLOAT64)
    alpha = (m - 1) / 2.0
    ratio = asarray((n - alpha) / alpha)
    arg = ew.multiply(beta, ew.sqrt(ew.subtract(1.0, ew.multiply(ratio, ratio))))
    # One evaluation of the series for the numerators and the denominator.
    both = i0(lax.concatenate([arg, lax.reshape(beta, (1,))], 0))
    size = arg.shape[0]
    return ew.true_divide(lax.slice(both, (0,), (size,)), lax.slice(both, (size,), (size + 1,)))
