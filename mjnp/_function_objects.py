"""NumPy's C functions as mjnp objects: `c_function` makes an mjnp function that, like
NumPy's builtin of the same name (`numpy.array`, `numpy.zeros`, ...), does not bind as a
method when stored on a class (`class T: array = np.array`; `T().array(x)` is `np.array(x)`).

The object is a `functools.partial` with no bound arguments (as `mjnp.ufunc`): its C call adds
no Python frame, and partials are not descriptors. It keeps the function's `__name__`,
`__qualname__`, `__module__`, `__doc__`, `__wrapped__` (so `inspect.signature` is the
function's) and the eager-fusion handles, and pickles by name. NumPy's Python-level functions
(`numpy.mean`, `numpy.linalg.norm`) do bind, so mjnp's stay plain functions;
`tests/test_numpy_suite_numeric_linalg.py` keeps the two sets equal to NumPy's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _CFunction(functools.partial):
    """An mjnp function that does not bind as a method (see the module docstring)."""

    __name__: str
    __qualname__: str
    __wrapped__: Callable[..., Any]

    def __new__(cls, fun: Callable[..., Any]) -> _CFunction:
        self = super().__new__(cls, fun)
        # The function's own attributes first (eager-fusion handles), then its identity.
        self.__dict__.update(getattr(fun, "__dict__", {}))
        self.__name__ = fun.__name__
        self.__qualname__ = fun.__qualname__
        self.__module__ = fun.__module__
        self.__doc__ = fun.__doc__
        self.__wrapped__ = fun
        return self

    def __repr__(self) -> str:
        return f"<function {self.__module__}.{self.__qualname__}>"

    def __reduce__(self) -> str:  # pickled as the module attribute it is
        return self.__qualname__


def c_function(fun: F) -> F:
    """`fun` as an object that does not bind as a method, as NumPy's builtin functions."""
    return _CFunction(fun)  # type: ignore[return-value]
