"""Discrete Fourier transforms, as `numpy.fft`, built on `lax.fft`.

Every transform is a sequence of one-axis transforms (NumPy's own order), each moving its axis
last, cropping or zero-padding it to `n` and applying `lax.fft` over it. `out=` rebinds the given
array (`mjnp._out`, casting 'same_kind' as NumPy's). NB: NumPy 2's `hfft`, `ifft2` and `irfft2`
ignore `out` and its `ihfft` writes the unconjugated transform there; here all of them write
their result to `out`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.dtypes import DTypeLike, canonicalize_dtype
from mjnp import _host_numpy
from mjnp._creation import asarray
from mjnp._devices import check_device, to_device
from mjnp._host_numpy import host_size_ok, host_values, wrap_own
from mjnp._host_stats import call_or_none
from mjnp._joining import roll
from mjnp._manipulation import asarray_strong, moveaxis, normalize_axes, normalize_axis
from mjnp._out import write_out

ArrayLike = Any
Array = Any
_NORMS = (None, "backward", "ortho", "forward")


def _host_fft(fn: Any, a: Any, n: Any, axis: Any, norm: Any, out: Any, kinds: str) -> Any:
    """NumPy's one-axis transform `fn` (pocketfft: NumPy's bits) of a small eager Array `a`
    whose dtype kind is in `kinds`; None where the general path runs (and raises)."""
    if out is not None or norm not in _NORMS or type(axis) is not int:
        return None
    if n is not None and (type(n) is not int or n > _host_numpy.HOST_ELEMENTS):
        return None
    values = host_values(a)
    if values is None or dtypes.kind(values[0].dtype) not in kinds or values[0].dtype.itemsize < 4:
        return None
    found = call_or_none(fn, values[0], n, axis, norm)
    return None if found is None else wrap_own(found)


def _int_list(v: Any) -> bool:
    return (type(v) is tuple or type(v) is list) and all(type(i) is int for i in v)


def _host_fftn(fn: Any, a: Any, s: Any, axes: Any, norm: Any, out: Any, kinds: str) -> Any:
    """NumPy's n-dimensional transform `fn` of a small eager Array `a`, as `_host_fft`; `s`
    without `axes` (deprecated in NumPy 2, which warns) takes the general path."""
    if out is not None or norm not in _NORMS:
        return None
    if not (axes is None or _int_list(axes)) or not (s is None or (_int_list(s) and axes)):
        return None
    if s is not None and math.prod(s) > _host_numpy.HOST_ELEMENTS:
        return None
    values = host_values(a)
    if values is None or dtypes.kind(values[0].dtype) not in kinds or values[0].dtype.itemsize < 4:
        return None
    found = call_or_none(fn, values[0], s, axes, norm)
    return None if found is None else wrap_own(found)


def _check_norm(fname: str, norm: str | None) -> str:
    if norm not in _NORMS:
        raise ValueError(
            f'mjnp.fft.{fname}: invalid norm value {norm!r}; should be "backward", "ortho" or '
            '"forward"'
        )
    return norm or "backward"


def _swap_direction(norm: str | None) -> str:
    return {"backward": "forward", "ortho": "ortho", "forward": "backward"}[norm or "backward"]


def _complex_input(x: Array) -> Array:
    """float32, float16 and bfloat16 go to complex64 (NumPy 2 keeps single precision, JAX
    bfloat16's); the rest to complex128."""
    if x.dtype == np.complex64 or x.dtype in (np.float32, np.float16, dtypes.bfloat16):
        return lax.convert_element_type(x, np.complex64)
    return lax.convert_element_type(x, np.complex128)


def _real_input(x: Array) -> Array:
    if x.dtype.kind == "c":
        raise TypeError(f"mjnp.fft: a real-input transform got a {x.dtype.name} array")
    if x.dtype in (np.float32, np.float16, dtypes.bfloat16):
        return lax.convert_element_type(x, np.float32)
    return lax.convert_element_type(x, np.float64)


def _resize_last(x: Array, m: int) -> Array:
    """Crop or zero-pad the last axis of `x` to length `m`."""
    size = x.shape[-1]
    if m < size:
        return lax.slice_in_dim(x, 0, m, x.ndim - 1)
    if m > size:
        config = [(0, 0, 0)] * (x.ndim - 1) + [(0, m - size, 0)]
        return lax.pad(x, lax.full((), 0, x.dtype), config)
    return x


def _raw_fft(fname: str, x: Array, n: int | None, axis: int, norm: str, fft_type: str) -> Array:
    """One transform along `axis` of an array already in its input dtype."""
    axis = normalize_axis(f"mjnp.fft.{fname}", axis, x.ndim)
    if n is None:
        n = x.shape[axis] if fft_type != "IRFFT" else 2 * (x.shape[axis] - 1)
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"mjnp.fft.{fname}: invalid number of FFT data points ({n}) specified")
    y = moveaxis(x, axis, -1)
    y = _resize_last(y, n // 2 + 1 if fft_type == "IRFFT" else n)
    y = lax.fft(y, fft_type, (n,))
    inverse = fft_type in ("IFFT", "IRFFT")
    # lax's inverse transforms already divide by n.
    factor = {
        ("backward", False): 1.0,
        ("ortho", False): 1.0 / np.sqrt(n),
        ("forward", False): 1.0 / n,
        ("backward", True): 1.0,
        ("ortho", True): np.sqrt(n),
        ("forward", True): float(n),
    }[norm, inverse]
    if factor != 1.0:
        y = lax.mul(y, lax.full((), factor, y.dtype))
    return moveaxis(y, -1, axis)


def _c2r_output(x: Array, y: Array) -> Array:
    """float16 input gives a float16 result from the real-output transforms, as in NumPy."""
    return lax.convert_element_type(y, np.float16) if x.dtype == np.float16 else y


def fft(
    a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
) -> Array:
    """One-dimensional discrete Fourier transform, as `numpy.fft.fft`."""
    found = _host_fft(np.fft.fft, a, n, axis, norm, out, "biufc")
    if found is not None:
        return found
    norm = _check_norm("fft", norm)
    x = _complex_input(asarray_strong("fft.fft", a))
    return write_out("fft.fft", out, _raw_fft("fft", x, n, axis, norm, "FFT"), "same_kind")


def ifft(
    a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
) -> Array:
    """One-dimensional inverse discrete Fourier transform, as `numpy.fft.ifft`."""
    found = _host_fft(np.fft.ifft, a, n, axis, norm, out, "biufc")
    if found is not None:
        return found
    norm = _check_norm("ifft", norm)
    x = _complex_input(asarray_strong("fft.ifft", a))
    return write_out("fft.ifft", out, _raw_fft("ifft", x, n, axis, norm, "IFFT"), "same_kind")


def rfft(
    a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
) -> Array:
    """Discrete Fourier transform of real input (the `n // 2 + 1` non-negative frequency
    terms), as `numpy.fft.rfft`."""
    found = _host_fft(np.fft.rfft, a, n, axis, norm, out, "biuf")
    if found is not None:
        return found
    norm = _check_norm("rfft", norm)
    x = _real_input(asarray_strong("fft.rfft", a))
    return write_out("fft.rfft", out, _raw_fft("rfft", x, n, axis, norm, "RFFT"), "same_kind")


def irfft(
    a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
) -> Array:
    """Inverse of `rfft`: `n` real outputs (default `2 * (m - 1)`), as `numpy.fft.irfft`."""
    found = _host_fft(np.fft.irfft, a, n, axis, norm, out, "biufc")
    if found is not None:
        return found
    norm = _check_norm("irfft", norm)
    a = asarray_strong("fft.irfft", a)
    result = _c2r_output(a, _raw_fft("irfft", _complex_input(a), n, axis, norm, "IRFFT"))
    return write_out("fft.irfft", out, result, "same_kind")


def hfft(
    a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
) -> Array:
    """Transform of a Hermitian-symmetric signal given by its first half (a real spectrum),
    as `numpy.fft.hfft`."""
    found = _host_fft(np.fft.hfft, a, n, axis, norm, out, "biufc")
    if found is not None:
        return found
    norm = _check_norm("hfft", norm)
    a = asarray_strong("fft.hfft", a)
    x = lax.conj(_complex_input(a))
    result = _c2r_output(a, _raw_fft("hfft", x, n, axis, _swap_direction(norm), "IRFFT"))
    return write_out("fft.hfft", out, result, "same_kind")


def ihfft(
    a: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None
) -> Array:
    """Inverse of `hfft`, as `numpy.fft.ihfft`."""
    found = _host_fft(np.fft.ihfft, a, n, axis, norm, out, "biuf")
    if found is not None:
        return found
    norm = _check_norm("ihfft", norm)
    x = _real_input(asarray_strong("fft.ihfft", a))
    result = lax.conj(_raw_fft("ihfft", x, n, axis, _swap_direction(norm), "RFFT"))
    return write_out("fft.ihfft", out, result, "same_kind")


def _cook_nd_args(
    fname: str, x: Array, s: Sequence[int] | None, axes: Sequence[int] | None, c2r: bool = False
) -> tuple[list[int], list[int]]:
    """NumPy's `_cook_nd_args`: the lengths and axes of an n-dimensional transform."""
    if s is None:
        if axes is None:
            axes = range(-x.ndim, 0)
        axes = list(normalize_axes(f"mjnp.fft.{fname}", list(axes), x.ndim, "axes"))
        shape = [x.shape[ax] for ax in axes]
        if c2r and shape:
            shape[-1] = 2 * (shape[-1] - 1)
        return shape, axes
    s = [operator.index(d) for d in s]
    if axes is None:
        if len(s) > x.ndim:
            raise ValueError(f"mjnp.fft.{fname}: s has more entries ({len(s)}) than x dimensions")
        axes = list(range(-len(s), 0))
    axes = list(normalize_axes(f"mjnp.fft.{fname}", list(axes), x.ndim, "axes"))
    if len(s) != len(axes):
        raise ValueError(f"mjnp.fft.{fname}: shape s {s} and axes {axes} have different lengths")
    return s, axes


def _c2c_nd(fname: str, a: ArrayLike, s: Any, axes: Any, norm: str | None, fft_type: str) -> Array:
    norm = _check_norm(fname, norm)
    x = _complex_input(asarray_strong(f"fft.{fname}", a))
    shape, axes = _cook_nd_args(fname, x, s, axes)
    for ax, n in reversed(list(zip(axes, shape, strict=True))):
        x = _raw_fft(fname, x, n, ax, norm, fft_type)
    return x


def fftn(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm=None,
    out: Any = None,
) -> Array:
    """N-dimensional discrete Fourier transform, as `numpy.fft.fftn`."""
    found = _host_fftn(np.fft.fftn, a, s, axes, norm, out, "biufc")
    if found is not None:
        return found
    return write_out("fft.fftn", out, _c2c_nd("fftn", a, s, axes, norm, "FFT"), "same_kind")


def ifftn(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm=None,
    out: Any = None,
) -> Array:
    """N-dimensional inverse discrete Fourier transform, as `numpy.fft.ifftn`."""
    found = _host_fftn(np.fft.ifftn, a, s, axes, norm, out, "biufc")
    if found is not None:
        return found
    return write_out("fft.ifftn", out, _c2c_nd("ifftn", a, s, axes, norm, "IFFT"), "same_kind")


def fft2(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm=None,
    out: Any = None,
) -> Array:
    """Two-dimensional discrete Fourier transform, as `numpy.fft.fft2`."""
    found = _host_fftn(np.fft.fft2, a, s, axes, norm, out, "biufc")
    if found is not None:
        return found
    return write_out("fft.fft2", out, _c2c_nd("fft2", a, s, axes, norm, "FFT"), "same_kind")


def ifft2(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm=None,
    out: Any = None,
) -> Array:
    """Two-dimensional inverse discrete Fourier transform, as `numpy.fft.ifft2`."""
    found = _host_fftn(np.fft.ifft2, a, s, axes, norm, out, "biufc")
    if found is not None:
        return found
    return write_out("fft.ifft2", out, _c2c_nd("ifft2", a, s, axes, norm, "IFFT"), "same_kind")


def rfftn(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm=None,
    out: Any = None,
) -> Array:
    """N-dimensional transform of real input, as `numpy.fft.rfftn`."""
    found = _host_fftn(np.fft.rfftn, a, s, axes, norm, out, "biuf")
    if found is not None:
        return found
    norm = _check_norm("rfftn", norm)
    x = _real_input(asarray_strong("fft.rfftn", a))
    shape, axes = _cook_nd_args("rfftn", x, s, axes)
    if not axes:
        raise ValueError("mjnp.fft.rfftn: at least one axis must be transformed")
    x = _raw_fft("rfftn", x, shape[-1], axes[-1], norm, "RFFT")
    for ax, n in reversed(list(zip(axes[:-1], shape[:-1], strict=True))):
        x = _raw_fft("rfftn", x, n, ax, norm, "FFT")
    return write_out("fft.rfftn", out, x, "same_kind")


def irfftn(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm=None,
    out: Any = None,
) -> Array:
    """Inverse of `rfftn`, as `numpy.fft.irfftn`."""
    found = _host_fftn(np.fft.irfftn, a, s, axes, norm, out, "biufc")
    if found is not None:
        return found
    norm = _check_norm("irfftn", norm)
    a = asarray_strong("fft.irfftn", a)
    x = _complex_input(a)
    shape, axes = _cook_nd_args("irfftn", x, s, axes, c2r=True)
    if not axes:
        raise ValueError("mjnp.fft.irfftn: at least one axis must be transformed")
    for ax, n in zip(axes[:-1], shape[:-1], strict=True):
        x = _raw_fft("irfftn", x, n, ax, norm, "IFFT")
    result = _c2r_output(a, _raw_fft("irfftn", x, shape[-1], axes[-1], norm, "IRFFT"))
    return write_out("fft.irfftn", out, result, "same_kind")


def rfft2(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm=None,
    out: Any = None,
) -> Array:
    """Two-dimensional transform of real input, as `numpy.fft.rfft2`."""
    found = _host_fftn(np.fft.rfft2, a, s, axes, norm, out, "biuf")
    if found is not None:
        return found
    return write_out("fft.rfft2", out, rfftn(a, s, axes, norm), "same_kind")


def irfft2(
    a: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm=None,
    out: Any = None,
) -> Array:
    """Inverse of `rfft2`, as `numpy.fft.irfft2`."""
    found = _host_fftn(np.fft.irfft2, a, s, axes, norm, out, "biufc")
    if found is not None:
        return found
    return write_out("fft.irfft2", out, irfftn(a, s, axes, norm), "same_kind")


def _window_length(fname: str, n: Any) -> int:
    """`n` as an int, if it is a Python or NumPy integer (NumPy's `integer_types` check)."""
    if not isinstance(n, int | np.integer):
        # NumPy raises ValueError here, even for an integral float such as 3.0.
        raise ValueError(
            f"mjnp.fft.{fname}: n should be an integer, got {n!r} of type {type(n).__name__}; "
            "pass an int, e.g. int(n) for a whole-number float"
        )
    return int(n)


def _host_freq(fn: Any, n: Any, d: Any, device: Any, dtype: Any) -> Array | None:
    """NumPy's `fftfreq`/`rfftfreq` for a positive Python int `n` and a nonzero Python float or
    int `d`, computed eagerly on the CPU (float64, as the general path); None elsewhere."""
    if device is not None or dtype is not None or type(n) is not int or n <= 0:
        return None
    if (type(d) is not float and type(d) is not int) or d == 0 or not host_size_ok(n):
        return None
    return wrap_own(fn(n, d))


def _freq(
    fname: str, ints: np.ndarray, n: int, d: Any, device: Any, dtype: DTypeLike | None
) -> Array:
    check_device(f"fft.{fname}", device)
    out_dtype = None if dtype is None else canonicalize_dtype(dtype, f"mjnp.fft.{fname}")
    if out_dtype is not None and dtypes.kind(out_dtype) != "f":
        raise ValueError(
            f"mjnp.fft.{fname}: dtype must be a real floating-point dtype, got {out_dtype.name}"
        )
    if type(d) in (bool, int, float, complex) and n * d == 0:
        # NumPy computes 1.0 / (n * d) in Python first, so n or d zero raises this (a NumPy
        # scalar or array d gives inf instead, with an empty or inf result).
        raise ZeroDivisionError(
            f"mjnp.fft.{fname}: the sample spacing 1 / (n * d) divides by zero "
            f"(n={n}, d={d!r}); pass a nonzero n and d"
        )
    if n < 0 and fname == "fftfreq":
        raise ValueError(f"mjnp.fft.{fname}: n must be positive, got {n}")
    # An int64 array times 1 / (n * d), so the dtype follows NumPy's promotion of `d`.
    out = asarray(ints) * (1.0 / (n * asarray_strong(f"fft.{fname}", d)))
    out = out if out_dtype is None else lax.convert_element_type(out, out_dtype)
    return out if device is None else to_device(out, device)


def fftfreq(n: int, d: Any = 1.0, device: Any = None, *, dtype: DTypeLike | None = None) -> Array:
    """Sample frequencies of `fft` for window length `n` and spacing `d`, as
    `numpy.fft.fftfreq`; `dtype` (the Array API's keyword, which NumPy lacks) casts the result
    to a real floating-point dtype."""
    if n is True:
        # NumPy's `empty(n)` rejects a bool length with TypeError (n=False divides by zero
        # before that, and rfftfreq takes a bool as an int).
        raise TypeError("mjnp.fft.fftfreq: n must be an integer, not a bool (got True)")
    found = _host_freq(np.fft.fftfreq, n, d, device, dtype)
    if found is not None:
        return found
    n = _window_length("fftfreq", n)
    half = (n - 1) // 2 + 1
    ints = np.concatenate([np.arange(0, half), np.arange(-(n // 2), 0)]).astype(np.int64)
    return _freq("fftfreq", ints, n, d, device, dtype)


def rfftfreq(n: int, d: Any = 1.0, device: Any = None, *, dtype: DTypeLike | None = None) -> Array:
    """Sample frequencies of `rfft`, as `numpy.fft.rfftfreq`; `dtype` as in `fftfreq`."""
    found = _host_freq(np.fft.rfftfreq, n, d, device, dtype)
    if found is not None:
        return found
    n = _window_length("rfftfreq", n)
    return _freq("rfftfreq", np.arange(0, n // 2 + 1, dtype=np.int64), n, d, device, dtype)


def _shift(fname: str, x: ArrayLike, axes: Any, sign: int) -> Array:
    if axes is None or type(axes) is int or _int_list(axes):
        values = host_values(x)
        if values is not None and dtypes.kind(values[0].dtype) in "biufc":
            fn = np.fft.fftshift if sign == 1 else np.fft.ifftshift
            found = call_or_none(fn, values[0], axes)
            if found is not None:
                return wrap_own(found)
    x = asarray_strong(f"fft.{fname}", x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int | np.integer):
        axes = (axes,)
    axes = tuple(normalize_axis(f"mjnp.fft.{fname}", ax, x.ndim) for ax in axes)
    if x.ndim == 0:  # NumPy's roll-based shift raises ValueError on every 0-d input
        raise ValueError(f"mjnp.fft.{fname}: x must have at least one dimension, got a 0-d array")
    if not axes:
        return x
    shifts = tuple(sign * (x.shape[ax] // 2) for ax in axes)
    return roll(x, shifts, axes)


def fftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Array:
    """Move the zero-frequency term to the centre, as `numpy.fft.fftshift`."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: ArrayLike, axes: int | Sequence[int] | None = None) -> Array:
    """Inverse of `fftshift`, as `numpy.fft.ifftshift`."""
    return _shift("ifftshift", x, axes, -1)
