"""Rows for mjcore/lax/fft.py. Complex operands are built from two real arguments, so the
generic real-valued checks (finite differences, vjp, vmap) apply unchanged."""

from __future__ import annotations

import numpy as np

from mjcore import lax
from tests.primitive_case import PrimCase

FLOATS = ("float32", "float64")


def _c(a, b):
    return lax.complex(a, b)


CASES = [
    PrimCase(
        "fft-1d",
        lambda a, b: lax.fft(_c(a, b), "FFT", (6,)),
        lambda a, b: np.fft.fft(a + 1j * b),
        ((3, 6), (3, 6)),
        FLOATS,
        linear=True,
        rtol=1e-4,
    ),
    PrimCase(
        "ifft-2d",
        lambda a, b: lax.fft(_c(a, b), "IFFT", (4, 5)),
        lambda a, b: np.fft.ifft2(a + 1j * b),
        ((2, 4, 5), (2, 4, 5)),
        FLOATS,
        linear=True,
        rtol=1e-4,
    ),
    PrimCase(
        "rfft-1d",
        lambda x: lax.fft(x, "RFFT", (8,)),
        lambda x: np.fft.rfft(x),
        ((3, 8),),
        FLOATS,
        linear=True,
        rtol=1e-4,
    ),
    PrimCase(
        "rfft-3d-odd",
        lambda x: lax.fft(x, "RFFT", (2, 3, 5)),
        lambda x: np.fft.rfftn(x, axes=(-3, -2, -1)),
        ((2, 3, 5),),
        FLOATS,
        linear=True,
        rtol=1e-4,
    ),
    PrimCase(
        "irfft-even",
        lambda a, b: lax.fft(_c(a, b), "IRFFT", (8,)),
        lambda a, b: np.fft.irfft(a + 1j * b, 8),
        ((3, 5), (3, 5)),
        FLOATS,
        linear=True,
        rtol=1e-4,
    ),
    PrimCase(
        "irfft-2d-odd",
        lambda a, b: lax.fft(_c(a, b), "IRFFT", (3, 7)),
        lambda a, b: np.fft.irfft2(a + 1j * b, (3, 7)),
        ((2, 3, 4), (2, 3, 4)),
        FLOATS,
        linear=True,
        rtol=1e-4,
    ),
]
