"""`fft`: XLA's fast Fourier transforms over the trailing axes (complex, real-to-complex and
complex-to-real), with JAX's linear transpose rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.ad import linear_jvp
from mjcore.backend.hlo import i64_array
from mjcore.backend.lowering import LoweringContext
from mjcore.batching import move_bdim
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.lax.arithmetic import mul
from mjcore.lax.base import broadcast_in_dim, full
from mjcore.lax.complex import conj, real
from mjcore.lax.structural import concatenate, pad

ArrayLike = Any
FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")

fft_p = Primitive("fft")


def fft(x: ArrayLike, fft_type: str, fft_lengths: Sequence[int]) -> Any:
    """Discrete Fourier transform over the last `len(fft_lengths)` axes of `x`, unnormalised
    forward and `1/n`-normalised inverse, as JAX's `lax.fft`.

    `fft_type` is "FFT" or "IFFT" (complex to complex), "RFFT" (real to complex: the last axis
    becomes `n // 2 + 1` long) or "IRFFT" (complex to real: the last axis of length
    `n // 2 + 1` becomes `n`). `fft_lengths` are the logical lengths of the transformed axes.
    """
    fft_type = str(fft_type).upper()
    if fft_type not in FFT_TYPES:
        raise ValueError(f"fft: fft_type must be one of {FFT_TYPES}, got {fft_type!r}")
    fft_lengths = tuple(int(n) for n in fft_lengths)
    return fft_p.bind1(x, fft_type=fft_type, fft_lengths=fft_lengths)


def _complex_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.complex64) if dtype == np.float32 else np.dtype(np.complex128)


def _real_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype == np.complex64 else np.dtype(np.float64)


@fft_p.def_abstract_eval
def _fft_abstract_eval(x: ShapedArray, *, fft_type: str, fft_lengths: tuple[int, ...]):
    k = len(fft_lengths)
    if not 1 <= k <= 3 or x.ndim < k:
        raise ValueError(
            f"fft: transforms 1 to 3 trailing axes of an array with at least that many, got "
            f"fft_lengths {fft_lengths} for shape {x.shape}"
        )
    lead, tail = x.shape[: x.ndim - k], x.shape[x.ndim - k :]
    want_kind = "f" if fft_type == "RFFT" else "c"
    if dtypes.kind(x.dtype) != want_kind or x.dtype.itemsize not in (
        (4, 8) if want_kind == "f" else (8, 16)
    ):
        raise TypeError(
            f"fft: {fft_type} needs a {'float32/float64' if want_kind == 'f' else 'complex'} "
            f"operand, got {x.dtype.name}"
        )
    expected = list(fft_lengths)
    if fft_type == "IRFFT":
        expected[-1] = fft_lengths[-1] // 2 + 1
    if tuple(tail) != tuple(expected):
        raise ValueError(
            f"fft: {fft_type} with fft_lengths {fft_lengths} needs trailing axes "
            f"{tuple(expected)}, got shape {x.shape}"
        )
    if fft_type == "RFFT":
        out_tail = (*fft_lengths[:-1], fft_lengths[-1] // 2 + 1)
        return ShapedArray((*lead, *out_tail), _complex_of(x.dtype))
    if fft_type == "IRFFT":
        return ShapedArray((*lead, *fft_lengths), _real_of(x.dtype))
    return ShapedArray(x.shape, x.dtype)


@fft_p.def_lowering
def _fft_lowering(ctx: LoweringContext, x: Any, *, fft_type: str, fft_lengths):
    if any(n == 0 for n in (*ctx.aval_out.shape, *x.aval.shape)):
        # XLA's FFT rejects empty operands; an empty result is all there is to compute.
        return ctx.builder.constant(0, ctx.aval_out.strip_weak_type())
    return ctx.builder.op(
        "stablehlo.fft",
        [x],
        ctx.aval_out.strip_weak_type(),
        f"fft_type = #stablehlo<fft_type {fft_type}>, fft_length = {i64_array(fft_lengths)}",
    )


linear_jvp(fft_p)


@fft_p.def_host
def _fft_host(x: np.ndarray, *, fft_type: str, fft_lengths: tuple[int, ...]) -> np.ndarray:
    aval = _fft_abstract_eval(
        ShapedArray(x.shape, x.dtype), fft_type=fft_type, fft_lengths=fft_lengths
    )
    if 0 in (*aval.shape, *x.shape):
        return np.zeros(aval.shape, aval.dtype)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    out: np.ndarray
    if fft_type == "FFT":
        out = np.fft.fftn(x, axes=axes)
    elif fft_type == "IFFT":
        out = np.fft.ifftn(x, axes=axes)
    elif fft_type == "RFFT":
        out = np.fft.rfftn(x, axes=axes)
    else:
        out = np.fft.irfftn(x, s=fft_lengths, axes=axes)
    # NumPy may compute in double precision: back to the primitive's dtype.
    return out.astype(aval.dtype, copy=False)


@fft_p.def_transpose
def _fft_transpose(ct, x, *, fft_type: str, fft_lengths):
    if fft_type == "RFFT":
        # RFFT is "FFT of the real input, keep the first n // 2 + 1 bins": transpose those
        # steps in reverse (zero-pad, FFT, take the real part).
        n = fft_lengths[-1]
        ct_aval = get_aval(ct)
        config = [(0, 0, 0)] * (ct_aval.ndim - 1) + [(0, n - ct_aval.shape[-1], 0)]
        padded = pad(ct, full((), 0, ct_aval.dtype), config)
        return [real(fft(padded, "FFT", fft_lengths))]
    if fft_type == "IRFFT":
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft(ct, fft_type, fft_lengths)]


def _irfft_transpose(ct: Any, fft_lengths: tuple[int, ...]) -> Any:
    """JAX's `_irfft_transpose`: an RFFT, bins counted twice by Hermitian symmetry doubled."""
    y = fft(ct, "RFFT", fft_lengths)
    y_aval = get_aval(y)
    m = y_aval.shape[-1]
    odd = fft_lengths[-1] % 2
    scale = 1.0 / float(np.prod(fft_lengths))
    sizes = (1, m - 2 + odd, 1 - odd)
    parts = [
        full((k,), w * scale, y_aval.dtype) for k, w in zip(sizes, (1, 2, 1), strict=True) if k > 0
    ]
    mask = concatenate(parts, 0) if len(parts) > 1 else parts[0]
    mask = broadcast_in_dim(mask, y_aval.shape, (y_aval.ndim - 1,))
    # JAX's convention for complex cotangents.
    return conj(mul(mask, y))


@fft_p.def_batching
def _fft_batching(vals, dims, *, fft_type: str, fft_lengths):
    (x,), (bdim,) = vals, dims
    return fft_p.bind1(move_bdim(x, bdim, 0), fft_type=fft_type, fft_lengths=fft_lengths), 0


__all__ = ["fft"]
