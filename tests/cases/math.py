"""Rows for mjcore/lax/transcendental.py, special.py, complex.py and bitwise.py (and complex
`abs`)."""

from __future__ import annotations

import numpy as np
import scipy.special

from mjcore import lax
from tests.primitive_case import PrimCase

FLOATS = ("float32", "float64")
COMPLEXES = ("complex64", "complex128")
INTS = ("int8", "int32", "uint8", "uint32")
LOGICAL = ("bool", *INTS)


def _away_from_zero(rng, shape, dtype):
    return rng.choice([-1, 1], size=shape) * rng.uniform(0.5, 2.0, size=shape)


def _off_axes(rng, shape, dtype):
    """Parts of complex inputs: |re|, |im| >= 0.5 keeps every branch cut and pole at a distance."""
    return rng.choice([-1, 1], size=shape) * rng.uniform(0.5, 1.5, size=shape)


def _on_complex(f):
    """`f` of the complex number built from two float arrays (checks holomorphic derivatives)."""
    return lambda x, y: f(lax.complex(x, y))


def _on_complex_numpy(f):
    return lambda x, y: f(x + 1j * y)


def _bessel_domain(rng, shape, dtype):
    """Both of i0e's Chebyshev ranges (|x| <= 8 and above), away from the kink of exp(-|x|)."""
    return rng.choice([-1, 1], size=shape) * rng.uniform(0.5, 12.0, size=shape)


def _igamma_grad_a(a, x):
    """d/da of scipy's gammainc(a, x), from its series e^-x sum x^(a+n) / gamma(a+n+1)."""
    n = np.arange(200).reshape((-1,) + (1,) * np.ndim(a))
    a64, x64 = np.asarray(a, np.float64), np.asarray(x, np.float64)
    log_terms = (a64 + n) * np.log(x64) - x64 - scipy.special.gammaln(a64 + n + 1)
    terms = np.exp(log_terms) * (np.log(x64) - scipy.special.digamma(a64 + n + 1))
    return terms.sum(0).astype(np.result_type(a, x))


def _logistic(x):
    return 1 / (1 + np.exp(-x))


def _rsqrt(x):
    return 1 / np.sqrt(x)


# name, wrapper, NumPy oracle, real domain, whether complex input is supported
UNARY = [
    ("exp", lax.exp, np.exp, (-2.0, 2.0), True),
    ("exp2", lax.exp2, np.exp2, (-3.0, 3.0), True),
    ("log", lax.log, np.log, (0.2, 3.0), True),
    ("log1p", lax.log1p, np.log1p, (-0.7, 2.0), True),
    ("expm1", lax.expm1, np.expm1, (-2.0, 2.0), True),
    ("sqrt", lax.sqrt, np.sqrt, (0.2, 3.0), True),
    ("rsqrt", lax.rsqrt, _rsqrt, (0.2, 3.0), True),
    ("cbrt", lax.cbrt, np.cbrt, _away_from_zero, False),
    ("sin", lax.sin, np.sin, (-3.0, 3.0), True),
    ("cos", lax.cos, np.cos, (-3.0, 3.0), True),
    ("tan", lax.tan, np.tan, (-1.2, 1.2), True),
    ("asin", lax.asin, np.arcsin, (-0.9, 0.9), True),
    ("acos", lax.acos, np.arccos, (-0.9, 0.9), True),
    ("atan", lax.atan, np.arctan, (-3.0, 3.0), True),
    ("sinh", lax.sinh, np.sinh, (-3.0, 3.0), True),
    ("cosh", lax.cosh, np.cosh, (-3.0, 3.0), True),
    ("tanh", lax.tanh, np.tanh, (-3.0, 3.0), True),
    ("asinh", lax.asinh, np.arcsinh, (-3.0, 3.0), True),
    ("acosh", lax.acosh, np.arccosh, (1.1, 4.0), True),
    ("atanh", lax.atanh, np.arctanh, (-0.9, 0.9), True),
    ("logistic", lax.logistic, _logistic, (-4.0, 4.0), True),
    ("erf_inv", lax.erf_inv, scipy.special.erfinv, (-0.9, 0.9), False),
    ("erf", lax.erf, scipy.special.erf, (-2.0, 2.0), False),
    ("erfc", lax.erfc, scipy.special.erfc, (-2.0, 2.0), False),
    # lgamma has zeros at 1 and 2, digamma one near 1.46: relative tolerances hold above them.
    ("lgamma", lax.lgamma, scipy.special.gammaln, (2.5, 5.0), False),
    ("digamma", lax.digamma, scipy.special.digamma, (2.0, 5.0), False),
    ("bessel_i0e", lax.bessel_i0e, scipy.special.i0e, _bessel_domain, False),
    ("bessel_i1e", lax.bessel_i1e, scipy.special.i1e, _bessel_domain, False),
]

TRANSCENDENTAL_CASES = [
    PrimCase(name, f, np_f, ((3, 4),), FLOATS + (COMPLEXES if cplx else ()), domain=domain)
    for name, f, np_f, domain, cplx in UNARY
] + [
    PrimCase(
        f"{name}-holomorphic",
        _on_complex(f),
        _on_complex_numpy(np_f),
        ((3, 4), (3, 4)),
        ("float64",),
        domain=_off_axes,
    )
    for name, f, np_f, _, cplx in UNARY
    if cplx
]

TRANSCENDENTAL_CASES += [
    PrimCase("atan2", lax.atan2, np.arctan2, ((3, 4), (3, 4)), FLOATS),
    PrimCase("atan2-broadcast", lax.atan2, np.arctan2, ((3, 1), (4,)), FLOATS),
    PrimCase("hypot", lax.hypot, np.hypot, ((3, 4), (3, 4)), FLOATS),
    PrimCase("hypot-broadcast", lax.hypot, np.hypot, ((3, 1), (4,)), FLOATS),
    PrimCase("pow", lax.pow, np.power, ((3, 4), (3, 4)), FLOATS + COMPLEXES, domain=(0.5, 2.0)),
    PrimCase("pow-broadcast", lax.pow, np.power, ((3, 1), (4,)), FLOATS, domain=(0.5, 2.0)),
    PrimCase(
        "pow-neg-exponent",
        lambda x, y: lax.pow(x, lax.neg(y)),
        lambda x, y: np.power(x, -y),
        ((3, 4), (3, 4)),
        FLOATS,
        domain=(0.5, 2.0),
    ),
    PrimCase(
        # 0 ** y: the y-derivative reads log(0) as 0, as in JAX.
        "pow-zero-base",
        lambda x, y: lax.pow(lax.sub(x, x), y),
        lambda x, y: np.power(x - x, y),
        ((3, 4), (3, 4)),
        FLOATS,
        domain=(0.5, 2.0),
        diff_argnums=(1,),
    ),
    PrimCase(
        "pow-holomorphic",
        lambda a, b, c, d: lax.pow(lax.complex(a, b), lax.complex(c, d)),
        lambda a, b, c, d: np.power(a + 1j * b, c + 1j * d),
        ((3, 4), (3, 4), (3, 4), (3, 4)),
        ("float64",),
        domain=_off_axes,
    ),
    PrimCase(
        # NumPy rejects negative integer exponents, hence |y|.
        "pow-int",
        lambda x, y: lax.pow(x, lax.abs(y)),
        lambda x, y: np.power(x, np.abs(y)),
        ((3, 4), (3, 4)),
        ("int8", "int32", "uint8"),
        domain=(-3, 3),
    ),
]

TRANSCENDENTAL_CASES += [
    PrimCase(
        # The order m must be a whole number: floor(m) - 1 runs over 0, 1, 2 (digamma upwards).
        "polygamma",
        lambda m, x: lax.polygamma(lax.sub(lax.floor(m), 1.0), x),
        lambda m, x: scipy.special.polygamma(np.floor(m) - 1, x),
        ((3, 4), (3, 4)),
        FLOATS,
        domain=(1.0, 3.99),
        diff_argnums=(1,),
    ),
    PrimCase(
        "polygamma-broadcast",
        lambda m, x: lax.polygamma(lax.floor(m), x),
        lambda m, x: scipy.special.polygamma(np.floor(m), x),
        ((3, 1), (4,)),
        FLOATS,
        domain=(1.0, 2.99),
        diff_argnums=(1,),
    ),
    PrimCase(
        "zeta",
        lax.zeta,
        scipy.special.zeta,
        ((3, 4), (3, 4)),
        FLOATS,
        domain=(1.5, 3.0),
        diff_argnums=(1,),
    ),
    PrimCase(
        "zeta-broadcast",
        lax.zeta,
        scipy.special.zeta,
        ((3, 1), (4,)),
        FLOATS,
        domain=(1.5, 3.0),
        diff_argnums=(1,),
    ),
]

# The incomplete gamma functions, on a domain across both of their algorithms (series for
# x < max(1, a), continued fraction above). Their derivative in a, igamma_grad_a, is itself
# differentiable only in x (JAX's is not at all), hence second order only along x.
TRANSCENDENTAL_CASES += [
    PrimCase(
        f"{name}{suffix}",
        f,
        np_f,
        shapes,
        FLOATS,
        domain=(0.5, 3.0),
        diff_argnums=argnums,
        smooth=argnums == (1,),
    )
    for name, f, np_f in [
        ("igamma", lax.igamma, scipy.special.gammainc),
        ("igammac", lax.igammac, scipy.special.gammaincc),
    ]
    for suffix, shapes, argnums in [
        ("", ((3, 4), (3, 4)), (0, 1)),
        ("-in-x", ((3, 4), (3, 4)), (1,)),
        ("-broadcast", ((3, 1), (4,)), (0, 1)),
    ]
] + [
    PrimCase(
        "igamma_grad_a",
        lax.igamma_grad_a,
        _igamma_grad_a,
        ((3, 4), (3, 4)),
        FLOATS,
        domain=(0.5, 3.0),
        diff_argnums=(1,),
    ),
]


COMPLEX_CASES = [
    PrimCase("real", lax.real, np.real, ((3, 4),), COMPLEXES, linear=True),
    PrimCase("imag", lax.imag, np.imag, ((3, 4),), COMPLEXES, linear=True),
    PrimCase("conj", lax.conj, np.conj, ((3, 4),), FLOATS + COMPLEXES, linear=True),
    PrimCase("complex", lax.complex, lambda x, y: x + 1j * y, ((3, 4), (3, 4)), linear=True),
    PrimCase(
        "complex-broadcast", lax.complex, lambda x, y: x + 1j * y, ((3, 1), (4,)), linear=True
    ),
    PrimCase(
        "real-holomorphic", _on_complex(lax.real), _on_complex_numpy(np.real), ((3, 4), (3, 4))
    ),
    PrimCase(
        "imag-holomorphic", _on_complex(lax.imag), _on_complex_numpy(np.imag), ((3, 4), (3, 4))
    ),
    PrimCase(
        "conj-holomorphic", _on_complex(lax.conj), _on_complex_numpy(np.conj), ((3, 4), (3, 4))
    ),
    PrimCase("abs-complex", lax.abs, np.abs, ((3, 4),), COMPLEXES, domain=_off_axes),
    PrimCase(
        "abs-holomorphic",
        _on_complex(lax.abs),
        _on_complex_numpy(np.abs),
        ((3, 4), (3, 4)),
        domain=_off_axes,
    ),
]


def _bits(rng, shape, dtype):
    """Arbitrary bit patterns of an integer (or bool) dtype."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def _shift_operands(rng, shape, dtype):
    """Half in-range shift amounts, half arbitrary bits (out-of-range shifts follow NumPy)."""
    small = rng.integers(0, 8 * np.dtype(dtype).itemsize, size=shape).astype(dtype)
    return np.where(rng.random(shape) < 0.5, small, _bits(rng, shape, dtype))


def _reinterpreted(shift, kind):
    """`shift` applied to the bits of both operands read as signed ("i") or unsigned ("u")."""

    def f(x, y):
        as_kind = np.dtype(f"{kind}{x.dtype.itemsize}")
        return shift(x.view(as_kind), y.view(as_kind)).view(x.dtype)

    return f


def _popcount(x):
    # NB: numpy.bitwise_count counts the bits of |x|; the primitive counts two's complement bits.
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    return np.bitwise_count(unsigned).astype(x.dtype)


def _clz(x):
    width = 8 * x.dtype.itemsize
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    lengths = [int(v).bit_length() for v in unsigned.ravel()]
    return (width - np.array(lengths, dtype=np.int64)).astype(x.dtype).reshape(x.shape)


def _special_floats(rng, shape, dtype):
    values = np.array([0.0, -1.5, 3.0, 1e30, np.inf, -np.inf, np.nan])
    return rng.choice(values, size=shape)


BITWISE_CASES = [
    PrimCase(
        "bitwise_and", lax.bitwise_and, np.bitwise_and, ((3, 4), (3, 4)), LOGICAL, domain=_bits
    ),
    PrimCase("bitwise_or", lax.bitwise_or, np.bitwise_or, ((3, 4), (3, 4)), LOGICAL, domain=_bits),
    PrimCase(
        "bitwise_xor", lax.bitwise_xor, np.bitwise_xor, ((3, 4), (3, 4)), LOGICAL, domain=_bits
    ),
    PrimCase(
        "bitwise_and-broadcast",
        lax.bitwise_and,
        np.bitwise_and,
        ((3, 1), (4,)),
        ("int32",),
        domain=_bits,
    ),
    PrimCase("bitwise_not", lax.bitwise_not, np.invert, ((3, 4),), LOGICAL, domain=_bits),
    PrimCase(
        "shift_left",
        lax.shift_left,
        np.left_shift,
        ((3, 4), (3, 4)),
        INTS,
        domain=_shift_operands,
    ),
    PrimCase(
        "shift_right_arithmetic",
        lax.shift_right_arithmetic,
        _reinterpreted(np.right_shift, "i"),
        ((3, 4), (3, 4)),
        INTS,
        domain=_shift_operands,
    ),
    PrimCase(
        "shift_right_logical",
        lax.shift_right_logical,
        _reinterpreted(np.right_shift, "u"),
        ((3, 4), (3, 4)),
        INTS,
        domain=_shift_operands,
    ),
    PrimCase(
        "population_count",
        lax.population_count,
        _popcount,
        ((3, 4),),
        (*INTS, "int64"),
        domain=_bits,
    ),
    PrimCase("clz", lax.clz, _clz, ((3, 4),), (*INTS, "int64"), domain=_bits),
    PrimCase("is_finite", lax.is_finite, np.isfinite, ((3, 4),), FLOATS, domain=_special_floats),
]

CASES = TRANSCENDENTAL_CASES + COMPLEX_CASES + BITWISE_CASES
