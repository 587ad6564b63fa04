"""NumPy's binary operations beyond the elementwise bitwise ufuncs: `bitwise_count` (set bits)
and `packbits`/`unpackbits` (booleans to and from the bits of uint8).

Compositions of `mjcore.lax` ops, so all transformations apply.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore import lax
from mjnp import _manipulation
from mjnp._floating_point import _const
from mjnp._manipulation import normalize_axis
from mjnp._out import ufunc_out
from mjnp._promotion import asarray_arg

ArrayLike = Any
Array = Any

_BOOL = np.dtype(bool)
_UINT8 = np.dtype("uint8")


@ufunc_out
def bitwise_count(x: ArrayLike, /) -> Array:
    """Number of set bits of `abs(x)`, as uint8, as `numpy.bitwise_count`."""
    x = asarray_arg("bitwise_count", x)
    if x.dtype.kind not in "iub":
        raise TypeError(
            f"mjnp.bitwise_count: not supported for input dtype {x.dtype.name}; it needs "
            "integer input"
        )
    if x.dtype == _BOOL:
        x = lax.convert_element_type(x, _UINT8)
    if x.dtype.kind == "i":
        x = lax.abs(x)
    return lax.convert_element_type(lax.population_count(x), _UINT8)


# --- packbits / unpackbits ------------------------------------------------------------------


def _bits_axis(fname: str, a: Array, axis: int | None) -> tuple[Array, int]:
    if axis is None or a.ndim == 0:
        # NumPy treats a 0-d array as 1-d here, whatever the axis (as long as it is valid there).
        if axis is not None:
            normalize_axis(fname, axis, 1, allow_bool=False)
        return lax.reshape(a, (a.size,)), 0
    return a, normalize_axis(fname, axis, a.ndim, allow_bool=False)


def _check_bitorder(fname: str, bitorder: str) -> bool:
    if bitorder not in ("big", "little"):
        raise ValueError(
            f"mjnp.{fname}: 'order' must be either 'little' or 'big', got {bitorder!r}"
        )
    return bitorder == "big"


def packbits(a: ArrayLike, /, axis: int | None = None, bitorder: str = "big") -> Array:
    """Pack truthy elements into the bits of uint8 along `axis` (flattened when None), as
    `numpy.packbits`; the axis is zero-padded to a multiple of 8."""
    a = asarray_arg("packbits", a)
    if a.dtype.kind not in "biu":
        raise TypeError(
            f"mjnp.packbits: Expected an input array of integer or boolean data type, got "
            f"{a.dtype.name}"
        )
    big = _check_bitorder("packbits", bitorder)
    a, axis = _bits_axis("packbits", a, axis)
    bits = lax.convert_element_type(lax.ne(a, _const(0, a)), _UINT8)
    bits = _manipulation.moveaxis(bits, axis, -1)
    n = bits.shape[-1]
    padded = -(-n // 8) * 8
    if padded != n:
        bits = lax.pad(
            bits, lax.full((), 0, _UINT8), [(0, 0, 0)] * (bits.ndim - 1) + [(0, padded - n, 0)]
        )
    bits = lax.reshape(bits, (*bits.shape[:-1], padded // 8, 8))
    shifts = np.arange(7, -1, -1) if big else np.arange(8)
    weighted = lax.shift_left(bits, lax.convert_element_type(np.asarray(shifts, _UINT8), _UINT8))
    packed = lax.reduce_or(weighted, (bits.ndim - 1,))
    return _manipulation.moveaxis(packed, -1, axis)


def unpackbits(
    a: ArrayLike, /, axis: int | None = None, count: int | None = None, bitorder: str = "big"
) -> Array:
    """Unpack uint8 elements into bits (uint8 0/1) along `axis`, as `numpy.unpackbits`."""
    a = asarray_arg("unpackbits", a)
    if a.dtype != _UINT8:
        raise TypeError(
            f"mjnp.unpackbits: Expected an input array of unsigned byte data type, got "
            f"{a.dtype.name}"
        )
    big = _check_bitorder("unpackbits", bitorder)
    a, axis = _bits_axis("unpackbits", a, axis)
    a = _manipulation.moveaxis(a, axis, -1)
    shifts = np.arange(7, -1, -1) if big else np.arange(8)
    expanded = lax.expand_dims(a, (a.ndim,))
    bits = lax.bitwise_and(
        lax.shift_right_logical(
            expanded, lax.convert_element_type(np.asarray(shifts, _UINT8), _UINT8)
        ),
        lax.full((), 1, _UINT8),
    )
    bits = lax.reshape(bits, (*a.shape[:-1], a.shape[-1] * 8))
    if count is not None:
        count = int(count)
        n = bits.shape[-1]
        if count < -n:
            raise ValueError("mjnp.unpackbits: -count larger than number of elements")
        keep = count if count >= 0 else n + count
        if keep <= n:
            bits = lax.slice_in_dim(bits, 0, keep, axis=bits.ndim - 1)
        else:
            bits = lax.pad(
                bits, lax.full((), 0, _UINT8), [(0, 0, 0)] * (bits.ndim - 1) + [(0, keep - n, 0)]
            )
    return _manipulation.moveaxis(bits, -1, axis)
