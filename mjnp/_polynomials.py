"""NumPy's classic polynomials: the functions `poly`, `polyval`, `polyadd`, `polysub`,
`polymul`, `polydiv`, `polyder`, `polyint`, `roots` and `polyfit` (coefficients highest power
first), and the class `poly1d` over them.

A `poly1d` holds its coefficients as an mjnp array, and every operation forwards to the
functions here, so a polynomial built from traced coefficients, or evaluated at traced points,
works under every transformation. Only printing and the trimming of leading zeros look at
concrete values. The functions take poly1d arguments and then return poly1d, as NumPy's do.
"""

from __future__ import annotations

import operator
import re
from typing import Any

import numpy as np

from mjcore import dtypes, lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjnp import _elementwise as ew
from mjnp import _reductions
from mjnp._logic import isscalar
from mjnp._manipulation import atleast_1d
from mjnp._promotion import asarray_arg, promote_args
from mjnp.linalg import eigvals, lstsq

ArrayLike = Any
Array = Any


# --- the functions --------------------------------------------------------------------------


def _unwrap_poly1d(*args: Any) -> tuple[bool, list[Any]]:
    """Whether some argument is a `poly1d` (NumPy's poly* functions then return poly1d), and
    the arguments with each poly1d replaced by its coefficients."""
    truepoly = any(isinstance(a, poly1d) for a in args)
    return truepoly, [a.coeffs if isinstance(a, poly1d) else a for a in args]


def _as_poly1d(truepoly: bool, val: Any) -> Any:
    return poly1d(val) if truepoly else val


def _poly_1d(fname: str, a: ArrayLike) -> Array:
    a = asarray_arg(fname, a)
    if a.ndim == 0:
        a = lax.reshape(a, (1,))
    if a.ndim != 1:
        raise ValueError(f"mjnp.{fname}: expected a 1-d coefficient array, got shape {a.shape}")
    return a


def polyval(p: ArrayLike, x: ArrayLike) -> Array:
    """Evaluate the polynomial `p` at `x` by Horner's rule, as `numpy.polyval`; at a poly1d
    `x` the result is the composition `p(x)`, a poly1d."""
    _, (p,) = _unwrap_poly1d(p)
    p = _poly_1d("polyval", p)
    x_is_poly, _ = _unwrap_poly1d(x)
    if x_is_poly:  # the composition, by poly1d arithmetic
        if p.shape[0] == 0:
            return 0  # as NumPy
        # NumPy's first step, `0 * x + p[0]`, without the zero coefficients a traced `x` keeps.
        first = ew.add(ew.multiply(_index(x.coeffs, 0), 0), _index(p, 0))
        out = _as_poly1d(True, first)
        for i in range(1, p.shape[0]):
            out = out * x + _index(p, i)
        return out
    x = _strong(asarray_arg("polyval", x))
    y = lax.full(x.shape, 0, x.dtype)
    for i in range(p.shape[0]):
        y = ew.add(ew.multiply(y, x), _index(p, i))
    return y


def _strong(x: Array) -> Array:
    """NumPy's `asarray` of a Python scalar: a strongly typed array (not a weak scalar)."""
    if getattr(x, "weak_type", False):
        return lax.convert_element_type(x, x.dtype, weak_type=False)
    return x


def _index(a: Array, i: int) -> Array:
    return lax.reshape(lax.slice_in_dim(a, i, i + 1, axis=0), ())


def _pad_front(a: Array, n: int) -> Array:
    if n <= 0:
        return a
    return lax.pad(a, lax.full((), 0, a.dtype), [(n, 0, 0)])


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Sum of two polynomials, as `numpy.polyadd` (a poly1d if an input is one)."""
    truepoly, (a1, a2) = _unwrap_poly1d(a1, a2)
    a1, a2 = promote_args("polyadd", _poly_1d("polyadd", a1), _poly_1d("polyadd", a2))
    n = max(a1.shape[0], a2.shape[0])
    return _as_poly1d(
        truepoly, ew.add(_pad_front(a1, n - a1.shape[0]), _pad_front(a2, n - a2.shape[0]))
    )


def polysub(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Difference of two polynomials, as `numpy.polysub` (a poly1d if an input is one)."""
    truepoly, (a1, a2) = _unwrap_poly1d(a1, a2)
    a1, a2 = promote_args("polysub", _poly_1d("polysub", a1), _poly_1d("polysub", a2))
    n = max(a1.shape[0], a2.shape[0])
    return _as_poly1d(
        truepoly, ew.subtract(_pad_front(a1, n - a1.shape[0]), _pad_front(a2, n - a2.shape[0]))
    )


def _trim_leading_zeros(p: Array) -> Array:
    """`p` without leading zero coefficients, `[0]` if none is left, as `numpy.poly1d` makes
    it; a traced `p` has no values to look at and is kept whole."""
    if isinstance(p, Tracer):
        return p
    nonzero = np.flatnonzero(np.asarray(p))
    return p[int(nonzero[0]) :] if nonzero.size else lax.full((1,), 0, p.dtype)


def polymul(a1: ArrayLike, a2: ArrayLike) -> Array:
    """Product of two polynomials (full convolution of coefficients), as `numpy.polymul`.

    As NumPy (which goes through `poly1d`), leading zero coefficients are dropped first, an
    empty or all-zero polynomial being `[0]`; a poly1d input gives a poly1d. NB: only for
    concrete values; traced ones keep their length.
    """
    truepoly, (a1, a2) = _unwrap_poly1d(a1, a2)
    a1, a2 = promote_args("polymul", _poly_1d("polymul", a1), _poly_1d("polymul", a2))
    a1, a2 = _trim_leading_zeros(a1), _trim_leading_zeros(a2)
    n1, n2 = a1.shape[0], a2.shape[0]
    if n1 == 0 or n2 == 0:
        return _as_poly1d(truepoly, lax.full((0,), 0, a1.dtype))
    out = None
    for i in range(n1):
        term = lax.pad(
            ew.multiply(_index(a1, i), a2), lax.full((), 0, a1.dtype), [(i, n1 - 1 - i, 0)]
        )
        out = term if out is None else ew.add(out, term)
    return _as_poly1d(truepoly, out)


def polyder(p: ArrayLike, m: int = 1) -> Array:
    """The `m`-th derivative of a polynomial, as `numpy.polyder` (a poly1d for a poly1d)."""
    m = int(m)
    if m < 0:
        raise ValueError("mjnp.polyder: Order of derivative must be positive (see polyint)")
    truepoly, (p,) = _unwrap_poly1d(p)
    p = _poly_1d("polyder", p)
    for _ in range(m):
        n = p.shape[0] - 1
        p = ew.multiply(lax.slice_in_dim(p, 0, max(n, 0), axis=0), np.arange(n, 0, -1))
    return _as_poly1d(truepoly, p)


def polyint(p: ArrayLike, m: int = 1, k: ArrayLike | None = None) -> Array:
    """The `m`-th antiderivative with integration constants `k`, as `numpy.polyint` (a poly1d
    for a poly1d)."""
    m = int(m)
    if m < 0:
        raise ValueError("mjnp.polyint: Order of integral must be positive (see polyder)")
    truepoly, (p,) = _unwrap_poly1d(p)
    p = _poly_1d("polyint", p)
    ks = np.zeros(m) if k is None else k
    if isinstance(ks, _Array | Tracer):
        ks = lax.reshape(ks, (ks.size,))
        if ks.shape[0] == 1 and m > 1:
            ks = lax.broadcast_to(lax.reshape(ks, ()), (m,))
        if ks.shape[0] < m:
            raise ValueError(
                "mjnp.polyint: k must be a scalar or a rank-1 array of length 1 or >m."
            )
        consts = [_index(ks, i) for i in range(m)]
    else:
        arr = np.atleast_1d(np.asarray(ks))
        if arr.size == 1 and m > 1:
            arr = arr[0] * np.ones(m, float)
        if arr.size < m:
            raise ValueError(
                "mjnp.polyint: k must be a scalar or a rank-1 array of length 1 or >m."
            )
        consts = [asarray_arg("polyint", arr[i : i + 1].reshape(())) for i in range(m)]
    for i in range(m):
        n = p.shape[0]
        scaled = ew.true_divide(p, np.arange(n, 0, -1))
        scaled, c = promote_args("polyint", scaled, consts[i])
        p = lax.concatenate([scaled, lax.reshape(c, (1,))], 0)
    return _as_poly1d(truepoly, p)


def poly(seq_of_zeros: ArrayLike) -> Array | float:
    """Coefficients of the monic polynomial with the given roots, as `numpy.poly`; a square
    matrix stands for its eigenvalues (by `mjnp.linalg.eigvals`, so real when NumPy's are).

    NB: traced complex roots stay complex even in conjugate pairs (NumPy then returns the real
    part).

    Raises:
        TypeError: for a 0-d input (NumPy cannot iterate it either).
        ValueError: for anything but a 1-d array or a non-empty square matrix.
    """
    _, (seq_of_zeros,) = _unwrap_poly1d(seq_of_zeros)
    z = asarray_arg("poly", seq_of_zeros)
    if z.ndim == 0:
        raise TypeError(
            f"mjnp.poly: seq_of_zeros must be a sequence of roots or a square matrix, got a 0-d "
            f"{z.dtype} value; pass a single root as [root]"
        )
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        z = eigvals(z)
    elif z.ndim == 1:
        z = lax.convert_element_type(z, np.dtype(_mintypecode_of(z.dtype)))
    else:
        raise ValueError(
            f"mjnp.poly: input must be 1d or non-empty square 2d array, got shape {tuple(z.shape)}"
        )
    if z.shape[0] == 0:
        return 1.0  # NumPy returns the Python float 1.0
    dtype = z.dtype
    one = lax.full((1,), 1, dtype)
    a = one
    for i in range(z.shape[0]):
        factor = lax.concatenate([one, lax.reshape(lax.neg(_index(z, i)), (1,))], 0)
        a = polymul(a, factor)
    if dtype.kind == "c" and not isinstance(z, Tracer):
        roots = np.asarray(z)
        if np.all(np.sort(roots) == np.sort(roots.conjugate())):
            a = lax.real(a)
    return a


def _mintypecode_of(dtype: np.dtype) -> str:
    """NumPy's `mintypecode(dtype.char)`: float32 and the complex types stay, others go to d."""
    return {"f": "f", "d": "d", "F": "F", "D": "D"}.get(dtype.char, "d")


def polydiv(u: ArrayLike, v: ArrayLike) -> tuple[Array, Array]:
    """Quotient and remainder of polynomial division, as `numpy.polydiv`.

    Quotient and remainder are poly1d if an input is one.

    NB: leading (near-)zeros of the remainder are trimmed only for concrete values.
    """
    truepoly, (u, v) = _unwrap_poly1d(u, v)
    u = ew.add(_poly_1d("polydiv", u), 0.0)
    v = ew.add(_poly_1d("polydiv", v), 0.0)
    u, v = promote_args("polydiv", u, v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = ew.true_divide(1.0, _index(v, 0))
    r = [_index(u, i) for i in range(m + 1)]
    q = [lax.full((), 0, u.dtype) for _ in range(max(m - n + 1, 1))]
    for k in range(0, m - n + 1):
        d = ew.multiply(scale, r[k])
        q[k] = d
        for j in range(n + 1):
            r[k + j] = ew.subtract(r[k + j], ew.multiply(d, _index(v, j)))
    rem = lax.concatenate([lax.reshape(c, (1,)) for c in r], 0)
    quot = lax.concatenate([lax.reshape(c, (1,)) for c in q], 0)
    if not isinstance(rem, Tracer):
        host = np.asarray(rem)
        start = 0
        while start < host.shape[0] - 1 and np.allclose(host[start], 0, rtol=1e-14):
            start += 1
        rem = lax.slice_in_dim(rem, start, host.shape[0], axis=0)
    return _as_poly1d(truepoly, quot), _as_poly1d(truepoly, rem)


def roots(p: ArrayLike) -> Array:
    """Roots of a polynomial, as `numpy.roots`: the eigenvalues of its companion matrix (by
    `mjnp.linalg.eigvals`, so real when NumPy's are).

    NB: leading and trailing zero coefficients are trimmed only for concrete input; a traced
    `p` must have a nonzero first and last coefficient.
    """
    _, (p,) = _unwrap_poly1d(p)
    p = asarray_arg("roots", p)
    if p.ndim == 0:
        p = lax.reshape(p, (1,))
    if p.ndim != 1:
        raise ValueError("mjnp.roots: Input must be a rank-1 array.")
    trailing = 0
    if not isinstance(p, Tracer):
        non_zero = np.flatnonzero(np.asarray(p))
        if non_zero.size == 0:
            return lax.full((0,), 0, np.dtype("float64"))
        trailing = p.shape[0] - int(non_zero[-1]) - 1
        p = lax.slice_in_dim(p, int(non_zero[0]), int(non_zero[-1]) + 1, axis=0)
    if dtypes.kind(p.dtype) not in "fc":
        p = lax.convert_element_type(p, np.dtype("float64"))
    n = p.shape[0]
    if n > 1:
        first = lax.reshape(
            lax.neg(ew.true_divide(lax.slice_in_dim(p, 1, n, axis=0), _index(p, 0))), (1, n - 1)
        )
        shift = lax.convert_element_type(np.eye(n - 2, n - 1), p.dtype)
        out = eigvals(lax.concatenate([first, shift], 0))
    else:  # a constant: no roots, float64 whatever p's dtype, as NumPy's `array([])`
        out = lax.full((0,), 0, np.dtype("float64"))
    if trailing:
        out = lax.concatenate([out, lax.full((trailing,), 0, out.dtype)], 0)
    return out


def polyfit(
    x: ArrayLike,
    y: ArrayLike,
    deg: int,
    rcond: float | None = None,
    full: bool = False,
    w: ArrayLike | None = None,
    cov: bool = False,
) -> Any:
    """Least-squares polynomial fit, as `numpy.polyfit`: `mjnp.linalg.lstsq` on the column-
    scaled Vandermonde matrix.

    NB: `cov` is not supported, and the RankWarning for a rank-deficient fit is only issued
    for concrete input.
    """
    if cov:
        raise NotImplementedError("mjnp.polyfit: cov=True is not supported")
    order = int(deg) + 1
    x = ew.add(_strong(asarray_arg("polyfit", x)), 0.0)
    y = ew.add(_strong(asarray_arg("polyfit", y)), 0.0)
    if deg < 0:
        raise ValueError("mjnp.polyfit: expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("mjnp.polyfit: expected 1D vector for x")
    if x.size == 0:
        raise TypeError("mjnp.polyfit: expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("mjnp.polyfit: expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("mjnp.polyfit: expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * float(dtypes.finfo(x.dtype).eps)
    lhs = ew.power(lax.expand_dims(x, (1,)), np.arange(order - 1, -1, -1))
    rhs = y
    if w is not None:
        w = ew.add(asarray_arg("polyfit", w), 0.0)
        if w.ndim != 1:
            raise TypeError("mjnp.polyfit: expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("mjnp.polyfit: expected w and y to have the same length")
        lhs = ew.multiply(lhs, lax.expand_dims(w, (1,)))
        rhs = ew.multiply(rhs, w if rhs.ndim == 1 else lax.expand_dims(w, (1,)))
    scale = ew.sqrt(_reductions.sum(ew.multiply(lhs, lhs), axis=0))
    lhs = ew.true_divide(lhs, scale)
    c, resids, rank, s = lstsq(lhs, rhs, rcond=rcond)
    c = ew.true_divide(c, scale if c.ndim == 1 else lax.expand_dims(scale, (1,)))
    if not isinstance(rank, Tracer) and int(rank) != order and not full:
        import warnings

        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=2)
    if full:
        return c, resids, rank, s, rcond
    return c


# --- poly1d ---------------------------------------------------------------------------------


class poly1d:  # noqa: N801  (NumPy's class name)
    """A one-dimensional polynomial, as `numpy.poly1d`: `poly1d([1, 2, 3])` is x**2 + 2x + 3,
    `poly1d([1, 2], r=True)` is (x - 1)(x - 2).

    Args:
        c_or_r: coefficients, highest power first (leading zeros are dropped), or with
            `r=True` the roots; a poly1d is copied (its coefficients are shared).
        r: whether `c_or_r` holds roots.
        variable: the name printed for the variable (default "x").

    Raises:
        ValueError: for coefficients of more than one dimension.

    NB: mjnp arrays are values, so `p[k] = v` gives `p` new coefficients and a poly1d copied
    from `p` (or an earlier `p.coeffs`) does not follow, unlike NumPy's shared buffer. As mjnp
    arrays have no in-place arithmetic, `p.coeffs *= 2` assigns a new array; the `coeffs`
    setter accepts an mjnp array of the same shape and dtype, which is what NumPy's in-place
    operation leaves. Traced coefficients keep their leading zeros (their values are unknown),
    and such a polynomial prints as its tracer. Arithmetic with an mjnp array on the left
    (`mjnp.array(2.0) * p`) is elementwise on the coefficients, as with NumPy arrays.
    """

    __hash__ = None  # type: ignore[assignment]  # mutable through `p[k] = v`, as NumPy's
    _coeffs: Array
    _variable: str

    def __init__(self, c_or_r: Any, r: bool = False, variable: str | None = None) -> None:
        if isinstance(c_or_r, poly1d):
            self._coeffs = c_or_r._coeffs
            self._variable = c_or_r._variable if variable is None else variable
            return
        if r:
            c_or_r = poly(c_or_r)
        coeffs: Array = atleast_1d(c_or_r)
        if coeffs.ndim > 1:
            raise ValueError(
                f"mjnp.poly1d: Polynomial must be 1d only, got coefficients of shape "
                f"{tuple(coeffs.shape)}"
            )
        if coeffs.shape[0] == 0:
            coeffs = lax.full((1,), 0, coeffs.dtype)
        self._coeffs = _trim_leading_zeros(coeffs)
        self._variable = "x" if variable is None else variable

    # --- attributes -----------------------------------------------------------------------

    @property
    def coeffs(self) -> Array:
        """The coefficients, highest power first (an mjnp array)."""
        return self._coeffs

    @coeffs.setter
    def coeffs(self, value: Any) -> None:
        # `p.coeffs *= 2` is in place in NumPy; here it makes a new array of the same kind.
        if value is self._coeffs:
            return
        if (
            isinstance(value, _Array | Tracer)
            and value.shape == self._coeffs.shape
            and value.dtype == self._coeffs.dtype
        ):
            self._coeffs = value
            return
        raise AttributeError(
            "mjnp.poly1d: cannot set attribute coeffs except to an mjnp array of the same shape "
            f"{tuple(self._coeffs.shape)} and dtype {self._coeffs.dtype}; build a new poly1d"
        )

    c = coef = coefficients = coeffs

    @property
    def variable(self) -> str:
        """The name of the polynomial's variable."""
        return self._variable

    @property
    def order(self) -> int:
        """The order (degree) of the polynomial: the number of coefficients less one."""
        return self._coeffs.shape[0] - 1

    o = order

    @property
    def roots(self) -> Array:
        """The roots of the polynomial, as `mjnp.roots` of its coefficients."""
        return roots(self._coeffs)

    r = roots

    # --- conversion and printing ----------------------------------------------------------

    def __array__(self, t: Any = None, copy: bool | None = None) -> np.ndarray:
        if t:
            return np.asarray(self._coeffs, t, copy=copy)
        return np.asarray(self._coeffs, copy=copy)

    def __repr__(self) -> str:
        if isinstance(self._coeffs, Tracer):
            return f"poly1d({self._coeffs!r})"
        # NumPy's repr of the coefficients without its "array(" and ")".
        return f"poly1d({repr(np.asarray(self._coeffs))[6:-1]})"

    def __str__(self) -> str:
        if isinstance(self._coeffs, Tracer):
            return repr(self)
        return _format(np.asarray(self._coeffs), self._variable)

    def __len__(self) -> int:
        return self.order

    def __iter__(self) -> Any:
        return iter(self._coeffs)

    # --- evaluation and arithmetic --------------------------------------------------------

    def __call__(self, val: Any) -> Any:
        """The polynomial at `val` (an array, or a poly1d to compose with), by `polyval`."""
        return polyval(self._coeffs, val)

    def __neg__(self) -> poly1d:
        return poly1d(ew.negative(self._coeffs))

    def __pos__(self) -> poly1d:
        return self

    def __mul__(self, other: Any) -> poly1d:
        if isscalar(other):
            return poly1d(ew.multiply(self._coeffs, other))
        return poly1d(polymul(self._coeffs, poly1d(other)._coeffs))

    def __rmul__(self, other: Any) -> Any:
        if isinstance(other, _Array | Tracer):
            return ew.multiply(other, self._coeffs)
        if isscalar(other):
            return poly1d(ew.multiply(other, self._coeffs))
        return poly1d(polymul(self._coeffs, poly1d(other)._coeffs))

    def __add__(self, other: Any) -> poly1d:
        return poly1d(polyadd(self._coeffs, poly1d(other)._coeffs))

    def __radd__(self, other: Any) -> Any:
        if isinstance(other, _Array | Tracer):
            return ew.add(other, self._coeffs)
        return poly1d(polyadd(self._coeffs, poly1d(other)._coeffs))

    def __sub__(self, other: Any) -> poly1d:
        return poly1d(polysub(self._coeffs, poly1d(other)._coeffs))

    def __rsub__(self, other: Any) -> Any:
        if isinstance(other, _Array | Tracer):
            return ew.subtract(other, self._coeffs)
        return poly1d(polysub(poly1d(other)._coeffs, self._coeffs))

    def __truediv__(self, other: Any) -> Any:
        if isscalar(other):
            return poly1d(ew.true_divide(self._coeffs, other))
        return polydiv(self, poly1d(other))

    def __rtruediv__(self, other: Any) -> Any:
        if isinstance(other, _Array | Tracer):
            return ew.true_divide(other, self._coeffs)
        if isscalar(other):
            return poly1d(ew.true_divide(other, self._coeffs))
        return polydiv(poly1d(other), self)

    def __pow__(self, val: Any) -> poly1d:
        if not isscalar(val) or int(val) != val or val < 0:
            raise ValueError(f"mjnp.poly1d: Power to non-negative integers only, got {val!r:.80}")
        try:
            n = operator.index(val)
        except TypeError as err:
            raise TypeError(
                f"mjnp.poly1d: the power must be an integer, got {type(val).__name__} {val!r}; "
                f"pass {int(val)}"
            ) from err
        res: Any = [1]
        for _ in range(n):
            res = polymul(self._coeffs, res)
        return poly1d(res)

    def __eq__(self, other: object) -> Any:
        if not isinstance(other, poly1d):
            return NotImplemented
        if self._coeffs.shape != other._coeffs.shape:
            return False
        same = _reductions.all(ew.equal(self._coeffs, other._coeffs))
        return same if isinstance(same, Tracer) else bool(same)

    def __ne__(self, other: object) -> Any:
        if not isinstance(other, poly1d):
            return NotImplemented
        same = self.__eq__(other)
        return ew.logical_not(same) if isinstance(same, Tracer) else not same

    # --- coefficients by power ------------------------------------------------------------

    def __getitem__(self, val: Any) -> Array:
        """The coefficient of x**val (zero for a power the polynomial does not have)."""
        if val > self.order or val < 0:
            return lax.full((), 0, self._coeffs.dtype)
        return self._coeffs[self.order - val]

    def __setitem__(self, key: Any, val: Any) -> None:
        """Set the coefficient of x**key, growing the polynomial if key exceeds its order.

        Raises:
            ValueError: for a negative power.
        """
        if key < 0:
            raise ValueError(f"mjnp.poly1d: Does not support negative powers, got {key!r}")
        coeffs, ind = self._coeffs, self.order - key
        if key > self.order:
            coeffs, ind = _pad_front(coeffs, key - self.order), 0
        self._coeffs = coeffs.at[ind].set(val)

    # --- calculus -------------------------------------------------------------------------

    def integ(self, m: int = 1, k: ArrayLike = 0) -> poly1d:
        """The `m`-th antiderivative with integration constants `k`, as `mjnp.polyint`."""
        return poly1d(polyint(self._coeffs, m=m, k=k))

    def deriv(self, m: int = 1) -> poly1d:
        """The `m`-th derivative, as `mjnp.polyder`."""
        return poly1d(polyder(self._coeffs, m=m))


# --- printing (NumPy's layout: powers raised onto a line above the terms) --------------------

_POWER = re.compile(r"\*\*([0-9]*)")


def _format(coeffs: np.ndarray, var: str) -> str:
    """The two-line text NumPy prints for a poly1d with host coefficients `coeffs`."""
    started = np.logical_or.accumulate(coeffs != 0)
    coeffs = coeffs[started]
    top = len(coeffs) - 1
    text = "0"
    for k, coeff in enumerate(coeffs):
        if not np.iscomplex(coeff):
            coefstr = _fmt_float(np.real(coeff))
        elif np.real(coeff) == 0:
            coefstr = f"{_fmt_float(np.imag(coeff))}j"
        else:
            coefstr = f"({_fmt_float(np.real(coeff))} + {_fmt_float(np.imag(coeff))}j)"
        power = top - k
        if coefstr == "0":
            term = "0" if power == 0 and k == 0 else ""
        elif power == 0:
            term = coefstr
        elif power == 1:
            term = f"{coefstr} {var}"
        else:
            term = f"{coefstr} {var}**{power}"
        if k == 0:
            text = term
        elif term.startswith("-"):
            text = f"{text} - {term[1:]}"
        elif term:
            text = f"{text} + {term}"
    return _raise_powers(text)


def _fmt_float(q: Any) -> str:
    return f"{q:.4g}".removesuffix(".0000")


def _raise_powers(text: str, wrap: int = 70) -> str:
    """Move each `**n` of `text` onto a line of exponents above it, wrapping at `wrap`."""
    upper, lower, out, pos = "", "", " ", 0
    for match in _POWER.finditer(text):
        part, power = text[pos : match.start()], match.group(1)
        pos = match.end()
        add_lower = part + " " * (len(power) - 1)
        add_upper = " " * (len(part) - 1) + power
        if len(lower) + len(add_lower) > wrap or len(upper) + len(add_upper) > wrap:
            out += upper + "\n" + lower + "\n "
            upper, lower = add_upper, add_lower
        else:
            upper += add_upper
            lower += add_lower
    return out + upper + "\n" + lower + text[pos:]
