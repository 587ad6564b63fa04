"""Rows for mjcore/lax/convolution.py, with a direct NumPy convolution as the oracle."""

from __future__ import annotations

import itertools

import numpy as np

from mjcore import lax
from tests.primitive_case import PrimCase

# Positive values keep float32 sums free of cancellation (see tests/cases/reductions.py).
POSITIVE = (0.5, 2.0)


def _np_conv(lhs, rhs, *, strides, padding, lhs_dilation, rhs_dilation, specs, fgc, bgc):
    """XLA's Conv, written out: dilate and pad lhs, slide the dilated kernel, sum per group."""
    lhs_spec, rhs_spec, out_spec = specs
    x, w = np.transpose(lhs, lhs_spec), np.transpose(rhs, rhs_spec)
    n = x.ndim - 2
    dilated = [
        0 if s == 0 else 1 + d * (s - 1) for s, d in zip(x.shape[2:], lhs_dilation, strict=True)
    ]
    xd = np.zeros(x.shape[:2] + tuple(dilated), x.dtype)
    xd[(slice(None), slice(None), *(slice(None, None, d) for d in lhs_dilation))] = x
    for i, (lo, hi) in enumerate(padding):
        xd = np.pad(xd, [(0, 0)] * (2 + i) + [(max(lo, 0), max(hi, 0))] + [(0, 0)] * (n - i - 1))
        stop = xd.shape[2 + i] - max(-hi, 0)
        xd = xd[(slice(None),) * (2 + i) + (slice(max(-lo, 0), stop),)]
    windows = [1 + d * (k - 1) for k, d in zip(w.shape[2:], rhs_dilation, strict=True)]
    outs = [(p - k) // s + 1 for p, k, s in zip(xd.shape[2:], windows, strides, strict=True)]
    groups = max(fgc, bgc)
    wg = w.reshape(groups, w.shape[0] // groups, *w.shape[1:])
    result = 0
    for taps in itertools.product(*(range(k) for k in w.shape[2:])):
        window = (slice(None), slice(None)) + tuple(
            slice(t * d, t * d + (o - 1) * s + 1, s)
            for t, d, o, s in zip(taps, rhs_dilation, outs, strides, strict=True)
        )
        patch, kernel = xd[window], wg[(..., *taps)]
        if bgc > 1:  # batch groups: [g*nb, c] x [g, ob, c] -> [nb, g*ob]
            patch = patch.reshape(bgc, -1, *patch.shape[1:])
            term = np.einsum("gnc...,goc->ngo...", patch, kernel)
        else:  # feature groups: [n, g*c] x [g, ob, c] -> [n, g*ob]
            patch = patch.reshape(patch.shape[0], fgc, -1, *patch.shape[2:])
            term = np.einsum("ngc...,goc->ngo...", patch, kernel)
        result = result + term.reshape(term.shape[0], -1, *term.shape[3:])
    return np.transpose(np.asarray(result, x.dtype), np.argsort(out_spec))


def _conv_case(name, shapes, dtypes, strides, padding, *, lhs_dilation=None, rhs_dilation=None,
               dimension_numbers=None, fgc=1, bgc=1):  # fmt: skip
    n = len(shapes[0]) - 2
    dnums = lax.conv_dimension_numbers(shapes[0], shapes[1], dimension_numbers)

    def fun(x, y):
        return lax.conv_general_dilated(
            x, y, strides, padding, lhs_dilation, rhs_dilation, dimension_numbers, fgc, bgc
        )

    def oracle(x, y):
        return _np_conv(
            x,
            y,
            strides=strides,
            padding=padding,
            lhs_dilation=lhs_dilation or (1,) * n,
            rhs_dilation=rhs_dilation or (1,) * n,
            specs=dnums,
            fgc=fgc,
            bgc=bgc,
        )

    return PrimCase(name, fun, oracle, shapes, dtypes, domain=POSITIVE)


CASES = [
    _conv_case(
        "conv_general_dilated-2d",
        ((2, 3, 5, 4), (2, 3, 2, 2)),
        ("float32", "int32", "complex128", "float64"),
        (2, 1),
        ((1, 0), (0, 1)),
        rhs_dilation=(1, 2),
    ),
    _conv_case(
        "conv_general_dilated-nwc-groups",
        ((2, 5, 4), (2, 2, 4)),
        ("float32", "float64"),
        (1,),
        ((1, -1),),
        lhs_dilation=(2,),
        dimension_numbers=("NWC", "WIO", "NWC"),
        fgc=2,
    ),
    _conv_case(
        "conv_general_dilated-batch-groups",
        ((4, 2, 5), (4, 2, 2)),
        ("float32", "float64"),
        (2,),
        ((1, 1),),
        bgc=2,
    ),
]
