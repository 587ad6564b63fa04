"""The table of differentiable mjnp functions whose derivatives tests/test_mjnp_grads.py checks
(`check_grads` and agreement with JAX's). Plain data and mjnp-or-JAX lambdas, no JAX import, so
`conformance.differentiability` can read it to mark those functions as checked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

X = np.array([0.31, 0.47, 0.62, 0.78])
Y = np.array([0.56, 0.27, 0.71, 0.38])
Z = np.array([0.45, 0.66, 0.25, 0.59])
_R = np.random.default_rng(0).uniform(-0.5, 0.5, (3, 3))
SPD = (_R + 2 * np.eye(3)) @ (_R + 2 * np.eye(3)).T  # symmetric positive definite
M = np.array([[1.3, 0.2, -0.4], [0.5, 1.7, 0.3], [-0.2, 0.6, 1.1]])  # well-conditioned
M2 = np.array([[0.9, -0.3, 0.5], [0.2, 1.4, -0.1], [0.7, 0.4, 1.6]])
COND = np.array([True, False, True, True])


class GradCase(NamedTuple):
    """One function, differentiated in every array of `args`: `fun(module, *args)` for module
    mjnp or JAX's numpy, by default `module.<name>(*args, *static)`. `jax=False` when JAX has
    no derivative for it (then check_grads alone); `order` for check_grads."""

    name: str
    args: tuple[Any, ...]
    fun: Callable[..., Any] | None = None
    static: tuple[Any, ...] = ()
    jax: bool = True
    order: int = 1
    rtol: float = 1e-6

    def call(self, module: Any, *args: Any) -> Any:
        if self.fun is not None:
            return self.fun(module, *args)
        return resolve(module, self.name)(*args, *self.static)


def resolve(module: Any, name: str) -> Any:
    """`module.linalg.inv` for "linalg.inv"."""
    for part in name.split("."):
        module = getattr(module, part)
    return module


def _sym(m: Any, a: Any) -> Any:
    """A symmetric matrix from `a`: functions of Hermitian matrices read one triangle only."""
    return (a + m.swapaxes(a, -1, -2)) / 2


def _rows(names: str, args: tuple[Any, ...], **kwargs: Any) -> list[GradCase]:
    return [GradCase(n, args, **kwargs) for n in names.split()]


# --- the table ---------------------------------------------------------------------------------

_SMOOTH_UNARY = """abs absolute acos arccos asin arcsin atan arctan asinh arcsinh atanh arctanh
cbrt conj conjugate cos cosh deg2rad degrees exp exp2 expm1 fabs log log10 log1p log2 negative
positive rad2deg radians reciprocal sin sinc sinh sqrt square tan tanh i0 real imag angle"""
_PIECEWISE_UNARY = "ceil floor rint round around trunc sign nan_to_num"
_SMOOTH_BINARY = """add subtract multiply divide true_divide power pow float_power arctan2 atan2
hypot logaddexp logaddexp2 copysign heaviside maximum minimum fmax fmin fmod mod remainder
floor_divide"""
_REDUCTIONS = """sum prod mean max min amax amin var std ptp median cumsum cumprod
cumulative_sum cumulative_prod nansum nanprod nanmean nanvar nanstd nanmax nanmin nanmedian
nancumsum nancumprod diff ediff1d sort unwrap"""
_SHAPES = """array asarray copy ravel squeeze transpose flip flipud atleast_1d atleast_2d
atleast_3d diag diagflat vander stack vstack hstack dstack column_stack unstack block
broadcast_arrays meshgrid ix_ zeros_like ones_like empty_like poly polyder polyint"""
_FFT = """fft.fft fft.ifft fft.rfft fft.irfft fft.hfft fft.ihfft fft.fftn fft.ifftn fft.rfftn
fft.irfftn fft.fftshift fft.ifftshift"""
_PAIRS = """dot vdot inner outer kron matmul vecdot linalg.matmul linalg.outer linalg.vecdot
polyadd polysub polymul polyval append full_like linspace geomspace logspace"""
_MATRIX = """diagonal trace matrix_transpose rot90 fliplr concat concatenate linalg.det
linalg.inv linalg.pinv linalg.cond linalg.svdvals linalg.diagonal linalg.trace
linalg.matrix_transpose linalg.matrix_norm linalg.qr linalg.slogdet fft.fft2 fft.ifft2
fft.rfft2 fft.irfft2"""
_MATRIX_PAIRS = "matvec vecmat tensordot linalg.tensordot linalg.solve"

GRAD_CASES: list[GradCase] = [
    *_rows(_SMOOTH_UNARY, (X,), order=2),
    GradCase("acosh", (X + 1,), order=2),
    GradCase("arccosh", (X + 1,), order=2),
    *_rows(_PIECEWISE_UNARY, (X,)),
    GradCase("clip", (X,), static=(0.4, 0.7)),
    GradCase("modf", (X * 3,)),
    GradCase("frexp", (X * 3,), jax=False),  # JAX's frexp has no derivative rule
    GradCase("ldexp", (X,), static=(3,)),
    GradCase("nextafter", (X, Y), jax=False),  # JAX's nextafter has no derivative rule
    GradCase("spacing", (X,), jax=False),  # nor has JAX's spacing
    GradCase("divmod", (X + 1, Y)),
    GradCase("where", (X, Y), lambda m, x, y: m.where(COND, x, y)),
    *_rows(_SMOOTH_BINARY, (X, Y), order=2),
    *_rows(_REDUCTIONS, (X,)),
    *_rows("average cov corrcoef", (M,)),
    *_rows("quantile nanquantile", (X,), static=(0.3,)),
    *_rows("percentile nanpercentile", (X,), static=(65.0,)),
    GradCase("linalg.norm", (X,)),
    GradCase("linalg.vector_norm", (X,)),
    *_rows(_SHAPES, (X,)),
    GradCase("row_stack", (X, Y), lambda m, x, y: m.vstack([x, y])),  # NumPy's alias of vstack
    *_rows("tril triu", (M,)),
    GradCase("permute_dims", (M,), static=((1, 0),)),
    # JAX's numpy lacks these:
    *_rows("asanyarray ascontiguousarray asarray_chkfinite asfortranarray", (X,), jax=False),
    GradCase("fix", (X * 3,), jax=False),
    GradCase("require", (X,), jax=False),
    GradCase("real_if_close", (X,), jax=False),
    GradCase("sort_complex", (X,)),
    GradCase("trim_zeros", (X,), jax=False),  # JAX's needs values; zeros would move under FD
    GradCase("roots", (np.array([1.0, -2.1, 1.05]),), jax=False),  # JAX's needs values
    GradCase("polyfit", (X, Y), static=(2,)),
    # Edges move with the data's min and max; counts are linear in the weights.
    GradCase("histogram_bin_edges", (X,), static=(3,)),
    GradCase("histogram2d", (Y,), lambda m, w: m.histogram2d(X, Z, bins=2, weights=w)[0]),
    GradCase(
        "histogramdd",
        (Y,),
        lambda m, w: m.histogramdd(np.stack([X, Z, Y], axis=1), bins=2, weights=w)[0],
    ),
    GradCase("partition", (X,), static=(2,)),
    GradCase("take", (X,), static=(np.array([2, 0, 3]),)),
    GradCase("delete", (X,), static=(1,)),
    GradCase("expand_dims", (X,), static=(0,)),
    GradCase("pad", (X,), static=(2,)),
    GradCase("repeat", (X,), static=(2,)),
    GradCase("resize", (X,), static=(6,)),
    GradCase("roll", (X,), static=(1,)),
    GradCase("rollaxis", (M,), static=(1,)),
    GradCase("tile", (X,), static=(2,)),
    *_rows("split array_split hsplit", (X,), static=(2,)),
    GradCase("compress", (X,), lambda m, x: m.compress(COND, x), jax=False),  # JAX: not under jit
    GradCase("extract", (X,), lambda m, x: m.extract(COND, x), jax=False),  # JAX's needs values
    GradCase("cross", (M, M2)),
    GradCase("linalg.cross", (M, M2)),
    GradCase("linalg.multi_dot", (M, M2, SPD), lambda m, *xs: m.linalg.multi_dot(list(xs))),
    *_rows(_FFT, (X,)),
    *_rows(_PAIRS, (X, Y)),
    *_rows(_MATRIX, (M,)),
    *_rows(_MATRIX_PAIRS, (M, M2)),
    GradCase("linalg.cholesky", (SPD,)),
    GradCase("linalg.eigh", (SPD,), lambda m, a: m.linalg.eigh(_sym(m, a))),
    GradCase("linalg.eigvalsh", (SPD,), lambda m, a: m.linalg.eigvalsh(_sym(m, a))),
    GradCase("linalg.eigvals", (SPD,)),
    # Shapes that depend on values (a trimmed remainder, lstsq's residuals) differ under a
    # transformation, so only the other outputs are compared.
    GradCase("polydiv", (X, Y[:2]), lambda m, u, v: m.polydiv(u, v)[0]),
    GradCase("linalg.lstsq", (M, M2), lambda m, a, b: m.linalg.lstsq(a, b, rcond=None)[0::3]),
]
