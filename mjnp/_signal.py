"""One-dimensional discrete convolution and cross-correlation: `convolve` and `correlate`, with
NumPy's modes, operand swap and conjugation.

Both reduce to NumPy's correlation kernel, `out[i] = sum_j a_padded[i + j] * v[j]` with the
longer operand as `a`: one gather builds the windows of `a` (an `(len(out), len(v))` matrix)
and one dot product contracts them with `v`. So they work under every transformation and are
bilinear (differentiable in both operands); memory is O(len(out) * len(v)).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from mjcore import lax
from mjnp import _elementwise as ew
from mjnp._indexing import getitem
from mjnp._manipulation import asarray_strong
from mjnp._matrix_products import dot
from mjnp._promotion import promote_args

ArrayLike = Any
Array = Any

_MODES = {"valid": 0, "same": 1, "full": 2}


def _mode_number(fname: str, mode: Any) -> int:
    """NumPy's mode: 'valid', 'same' or 'full', or the integers 0, 1 and 2."""
    if isinstance(mode, str):
        if mode not in _MODES:
            raise ValueError(
                f"mjnp.{fname}: mode must be one of 'valid', 'same', or 'full' (got {mode!r})"
            )
        return _MODES[mode]
    if isinstance(mode, bool) or not hasattr(mode, "__index__"):
        raise TypeError(
            f"mjnp.{fname}: convolve/correlate mode not understood: {mode!r}; use 'valid', "
            "'same' or 'full'"
        )
    number = operator.index(mode)
    if number not in (0, 1, 2):
        raise ValueError(
            f"mjnp.{fname}: integer convolve/correlate mode must be 0, 1, or 2, got {number}"
        )
    return number


def _check_vector(fname: str, which: str, x: Array) -> None:
    if x.ndim == 0:
        raise ValueError(
            f"mjnp.{fname}: object of too small depth for desired array: the {which} argument "
            "must be 1-D, got a 0-d array"
        )
    if x.ndim > 1:
        raise ValueError(
            f"mjnp.{fname}: object too deep for desired array: the {which} argument must be "
            f"1-D, got shape {x.shape}"
        )


def _correlate_kernel(a: Array, v: Array, mode: int) -> Array:
    """NumPy's `_pyarray_correlate` for `len(a) >= len(v)` (no conjugation, no swap)."""
    n1, n2 = a.shape[0], v.shape[0]
    if mode == 0:
        n_left = n_right = 0
        length = n1 - n2 + 1
    elif mode == 1:
        n_left = n2 // 2
        n_right = n2 - n_left - 1
        length = n1
    else:
        n_left = n_right = n2 - 1
        length = n1 + n2 - 1
    padded = lax.pad(a, 0, ((n_left, n_right, 0),))
    # Static window positions: row i holds the indices i, i+1, ..., i+n2-1 of `padded`.
    windows = np.arange(length)[:, None] + np.arange(n2)[None, :]
    return dot(getitem(padded, windows), v)


def _operands(fname: str, a: ArrayLike, v: ArrayLike, ndmin: bool) -> tuple[Array, Array]:
    a, v = asarray_strong(fname, a), asarray_strong(fname, v)
    if ndmin:  # NumPy's `array(a, ndmin=1)`
        a = lax.reshape(a, (1,)) if a.ndim == 0 else a
        v = lax.reshape(v, (1,)) if v.ndim == 0 else v
    return a, v


def correlate(a: ArrayLike, v: ArrayLike, mode: str | int = "valid") -> Array:
    """Cross-correlation of two 1-D sequences, as `numpy.correlate`:
    `c[k] = sum_n a[n + k] * conj(v[n])`, cropped by `mode` ('valid', 'same' or 'full').

    When `v` is longer than `a`, NumPy correlates the other way round and reverses the result;
    so does mjnp, which matters for the centring of 'same'.

    Raises:
        ValueError: for empty or non-1-D operands and unknown modes.
        TypeError: for a mode that is neither a string nor an integer.
    """
    number = _mode_number("correlate", mode)
    a, v = _operands("correlate", a, v, ndmin=False)
    _check_vector("correlate", "first", a)
    _check_vector("correlate", "second", v)
    if a.shape[0] == 0:
        raise ValueError("mjnp.correlate: first array argument cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("mjnp.correlate: second array argument cannot be empty")
    a, v = promote_args("correlate", a, v)
    if v.dtype.kind == "c":
        v = ew.conjugate(v)
    if a.shape[0] < v.shape[0]:
        return lax.rev(_correlate_kernel(v, a, number), (0,))
    return _correlate_kernel(a, v, number)


def convolve(a: ArrayLike, v: ArrayLike, mode: str | int = "full") -> Array:
    """Discrete linear convolution of two 1-D sequences, as `numpy.convolve`:
    `c[k] = sum_n a[n] * v[k - n]`, cropped by `mode` ('full', 'same' or 'valid').

    Scalars count as length-1 sequences. The operands are swapped so that the longer one is
    slid over (this decides the centring of 'same'); nothing is conjugated.

    Raises:
        ValueError: for empty or non-1-D operands and unknown modes.
        TypeError: for a mode that is neither a string nor an integer.
    """
    a, v = _operands("convolve", a, v, ndmin=True)
    if a.shape[0] == 0:
        raise ValueError("mjnp.convolve: a cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("mjnp.convolve: v cannot be empty")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    number = _mode_number("convolve", mode)
    _check_vector("convolve", "first", a)
    _check_vector("convolve", "second", v)
    a, v = promote_args("convolve", a, v)
    return _correlate_kernel(a, lax.rev(v, (0,)), number)
