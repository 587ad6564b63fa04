"""`poly1d`, NumPy's one-dimensional polynomial class, over mjnp's polynomial functions.

A `poly1d` holds its coefficients (highest power first) as an mjnp array, and every operation
forwards to `polyval`, `polyadd`, `polymul`, ... in `mjnp._ufunc_extra`, so a polynomial built
from traced coefficients, or evaluated at traced points, works under every transformation.
Only printing and the trimming of leading zeros look at concrete values.
"""

from __future__ import annotations

import operator
import re
from typing import Any

import numpy as np

from mjcore import lax
from mjcore.array import Array as _Array
from mjcore.core import Tracer
from mjnp import _elementwise as ew
from mjnp import _reductions
from mjnp._manipulation import atleast_1d
from mjnp._ufunc_extra import (
    _pad_front,
    _trim_leading_zeros,
    isscalar,
    poly,
    polyadd,
    polyder,
    polydiv,
    polyint,
    polymul,
    polysub,
    polyval,
    roots,
)

ArrayLike = Any
Array = Any


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
