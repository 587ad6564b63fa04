"""The ``np`` that `conformance.numpy_suite` gives NumPy's rewritten test files: mjnp, plus
NumPy's test infrastructure.

While the tests *run*, an attribute mjnp has comes from mjnp: that is the namespace under test.
The few listed in `INFRASTRUCTURE` (``np.testing``, the masked-array and stride-trick helpers
the tests use to build inputs or check results) and private names come from NumPy, because
they are how the tests check, not what they check. Any other name mjnp lacks raises
AttributeError there, so a test that needs a missing public name fails.

While pytest *collects* (imports the file, evaluates decorators and class bodies), the module
level builds test data (``_ndat = np.array(...)``, ``np.zeros(3, dtype=object)``) and
parameter lists (``[np.nanmin, np.nanmax]``, ``np.longdouble``). One unsupported call there
would fail the whole file's collection, so that no test of it runs. So during collection a
function call is answered by NumPy (test data is input, built as NumPy builds it), a name mjnp
lacks is NumPy's object (a test that uses it then fails inside mjnp), and every function is
handed out as a `_Function` that calls mjnp's function once the tests run: a parameter list of
functions tests mjnp's functions. `_Function` binds as a method where mjnp's function would,
so the measurement keeps that difference from NumPy's builtins. The plugin ends the
collection phase (`end_collection`).
"""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable

import numpy as _numpy

import mjnp as _mjnp

#: Public names taken from NumPy itself: test helpers and subclass machinery, not API under test.
INFRASTRUCTURE = frozenset({"testing", "core", "ma", "lib", "typing", "f2py", "ctypeslib"})

_collecting = True


def end_collection() -> None:
    """From now on, names resolve to mjnp's objects (the tests are running)."""
    global _collecting
    _collecting = False


class _Function:
    """An mjnp function as handed out during collection: NumPy's when called during
    collection, mjnp's when called while the tests run."""

    def __init__(self, mjnp_fun: object, numpy_fun: object):
        functools.update_wrapper(self, mjnp_fun)  # name, doc, __wrapped__ for signatures
        self._mjnp = mjnp_fun
        self._numpy = numpy_fun

    def _target(self) -> object:
        return self._numpy if _collecting else self._mjnp

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self._target()(*args, **kwargs)

    def __getattr__(self, name: str) -> object:
        return getattr(self._target(), name)

    def __get__(self, instance: object, owner: type | None = None) -> object:
        # A class attribute binds as the target would: mjnp's Python functions become methods
        # (NumPy's builtins and ufuncs do not), a difference this run should show.
        target = self._target()
        if instance is not None and isinstance(target, types.FunctionType):
            return target.__get__(instance, owner)
        return self

    def __repr__(self) -> str:
        return repr(self._target())


class _Namespace:
    """mjnp's module (or a submodule: random, linalg, fft) as the tests see it."""

    def __init__(self, mjnp_module: types.ModuleType, numpy_module: types.ModuleType):
        self._mjnp = mjnp_module
        self._numpy = numpy_module
        self._functions: dict[str, object] = {}
        self.__name__ = mjnp_module.__name__

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        if self._mjnp is _mjnp and name == "testing":
            return _testing
        if self._mjnp is _mjnp and (name in INFRASTRUCTURE or name.startswith("_")):
            return getattr(_numpy, name)
        if name in self._functions:  # one object per name, so `f is np.nanmin` holds
            return self._functions[name]
        if not hasattr(self._mjnp, name):
            if _collecting and hasattr(self._numpy, name):
                return getattr(self._numpy, name)
            raise AttributeError(
                f"module {self._mjnp.__name__!r} has no attribute {name!r} (NumPy's test "
                "asked for it)"
            )
        value = getattr(self._mjnp, name)
        numpy_value = getattr(self._numpy, name, None)
        if isinstance(value, types.ModuleType) and isinstance(numpy_value, types.ModuleType):
            self._functions[name] = _Namespace(value, numpy_value)
            return self._functions[name]
        if not _collecting:
            return value
        if isinstance(value, type) or not callable(value) or not callable(numpy_value):
            # Test data and parameters are built from NumPy's types and constants.
            return value if numpy_value is None else numpy_value
        self._functions[name] = _Function(value, numpy_value)
        return self._functions[name]

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self._mjnp)))


#: numpy.testing's value checks. They treat only `numpy.ndarray` as an array (an mjnp array
#: reaches their scalar branch, whose `if not (desired == actual)` is ambiguous), so the tests'
#: copies of them see mjnp arrays, also inside tuples, lists and named tuples (`SlogdetResult`),
#: as NumPy arrays, and a 0-d mjnp array as the NumPy scalar NumPy returns where mjnp returns a
#: 0-d array (as JAX does): the checks take NumPy's scalar branch for it, as they do in NumPy's
#: run (`assert_almost_equal` of two float16 scalars differs from that of 0-d arrays). Tests
#: that check `isscalar` or `type(...)` still see the difference.
_COMPARISONS = (
    "assert_equal",
    "assert_array_equal",
    "assert_almost_equal",
    "assert_array_almost_equal",
    "assert_allclose",
    "assert_array_less",
    "assert_array_max_ulp",
    "assert_array_almost_equal_nulp",
    "assert_approx_equal",
    "assert_array_compare",
)


def _to_numpy(x: object) -> object:
    if isinstance(x, _mjnp.ndarray) and not isinstance(x, _numpy.ndarray):
        host = _numpy.asarray(x)
        return host[()] if host.ndim == 0 else host
    if type(x) in (list, tuple):
        return type(x)(_to_numpy(v) for v in x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a NamedTuple result
        return type(x)(*(_to_numpy(v) for v in x))
    return x


def _host_comparison(check: Callable[..., object]) -> Callable[..., object]:
    @functools.wraps(check)
    def compare(*args: object, **kwargs: object) -> object:
        args = tuple(_to_numpy(a) for a in args)
        kwargs = {k: _to_numpy(v) for k, v in kwargs.items()}
        return check(*args, **kwargs)

    return compare


_testing = types.ModuleType(f"{__name__}_testing", _numpy.testing.__doc__)
for _name in _numpy.testing.__all__:
    _value = getattr(_numpy.testing, _name)
    setattr(_testing, _name, _host_comparison(_value) if _name in _COMPARISONS else _value)
sys.modules[_testing.__name__] = _testing

_TOP = _Namespace(_mjnp, _numpy)
# `from numpy.random import rand` is rewritten to import from these.
for _sub in ("random", "linalg", "fft"):
    sys.modules[f"{__name__}_{_sub}"] = getattr(_TOP, _sub)


def __getattr__(name: str) -> object:
    return getattr(_TOP, name)


def __dir__() -> list[str]:
    return sorted(set(dir(_mjnp)) | INFRASTRUCTURE)
