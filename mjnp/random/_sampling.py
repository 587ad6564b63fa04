"""NumPy's random sampling, drawn by NumPy's own generators on the host, as mjnp arrays.

Every draw is made by `numpy.random` (the module-level functions by NumPy's global
`RandomState`, so `numpy.random.seed(0)` seeds them too), then put on the device: the same
seed gives the same numbers as NumPy, bit for bit.

Draws are host side effects, so they cannot be staged: under `jit` (and in `cond`, `scan` and
`while_loop` bodies) the values would be frozen into the compiled function. There they raise
`RandomStagingError`. Under `grad`, `jvp` and `vmap` of eager code they draw as NumPy would,
once per call (under `vmap` one draw is shared by the whole batch), and `normal`, `uniform`
and `lognormal` are differentiable in their location and scale (the draw is
`loc + scale * standard_normal`, the reparameterisation, which is also how NumPy computes it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from mjcore import core
from mjcore.array import Array
from mjcore.core import Tracer
from mjnp import _elementwise as ew
from mjnp._creation import asarray
from mjnp._indexing_functions import take


class RandomStagingError(TypeError):
    """A random draw inside a staged function (`jit`, control-flow bodies)."""


def _check_not_staged(name: str) -> None:
    staged_by = core.staging_description()
    if staged_by is not None:
        where = f"under {staged_by}"
        raise RandomStagingError(
            f"mjnp.random.{name} was called {where}. Draws are made by NumPy's generator on "
            "the host, so in a jitted function (or a cond/scan/while_loop body) the values "
            "would be frozen at trace time. Draw outside the staged function and pass the "
            "values in as an argument."
        )


def _to_host(name: str, value: Any) -> Any:
    """An argument as NumPy takes it: concrete mjnp arrays go to the host."""
    if isinstance(value, Tracer):
        raise RandomStagingError(
            f"mjnp.random.{name}: a traced argument {value.aval.str_short()} "
            f"({value._trace.main.description}); this distribution's parameters must be "
            "concrete (only normal, uniform and lognormal are differentiable in theirs)"
        )
    if isinstance(value, Array):
        return np.asarray(value)
    if isinstance(value, list | tuple) and any(isinstance(v, Array | Tracer) for v in value):
        return type(value)(_to_host(name, v) for v in value)
    return value


def _to_device(value: Any) -> Any:
    """NumPy's result as mjnp returns it: arrays on the device, scalars as NumPy gives them."""
    if isinstance(value, np.ndarray):
        return asarray(value)
    return value


def _host_call(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def sample(*args: Any, **kwargs: Any) -> Any:
        _check_not_staged(name)
        args = tuple(_to_host(name, a) for a in args)
        kwargs = {k: _to_host(name, v) for k, v in kwargs.items()}
        return _to_device(method(*args, **kwargs))

    sample.__doc__ = (
        f"`numpy.random.{name}`, drawn by NumPy on the host; arrays come back as mjnp arrays."
    )
    return sample


def _is_traced(*values: Any) -> bool:
    return any(isinstance(v, Tracer) for v in values)


def _shape_of(size: Any, *params: Any) -> tuple[int, ...]:
    if size is not None:
        return (int(size),) if isinstance(size, int | np.integer) else tuple(size)
    return tuple(np.broadcast_shapes(*(np.shape(p) for p in params)))


def _standard(draw: Callable[..., Any], size: tuple[int, ...]) -> Any:
    out = draw(size=size)
    return asarray(np.asarray(out, np.float64))


class Sampler:
    """An mjnp face on a NumPy `Generator` or `RandomState` (`numpy_sampler`): its methods draw
    with it and return mjnp arrays. Methods not listed here are wrapped on first use."""

    def __init__(self, numpy_sampler: Any):
        self._numpy = numpy_sampler

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._numpy, name)
        if not callable(attr) or name.startswith("_") or isinstance(attr, type):
            return attr
        return _host_call(name, attr)

    def __repr__(self) -> str:
        return f"mjnp.random.{type(self).__name__}({self._numpy!r})"

    # -- reparameterised continuous distributions -------------------------------------------
    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        """`normal(loc, scale, size)` as NumPy's; differentiable in `loc` and `scale`."""
        _check_not_staged("normal")
        if not _is_traced(loc, scale):
            return _host_call("normal", self._numpy.normal)(loc, scale, size)
        z = _standard(self._numpy.standard_normal, _shape_of(size, loc, scale))
        return ew.add(loc, ew.multiply(scale, z))

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None) -> Any:
        """`lognormal(mean, sigma, size)` as NumPy's; differentiable in `mean` and `sigma`."""
        _check_not_staged("lognormal")
        if not _is_traced(mean, sigma):
            return _host_call("lognormal", self._numpy.lognormal)(mean, sigma, size)
        z = _standard(self._numpy.standard_normal, _shape_of(size, mean, sigma))
        return ew.exp(ew.add(mean, ew.multiply(sigma, z)))

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
        """`uniform(low, high, size)` as NumPy's; differentiable in `low` and `high`."""
        _check_not_staged("uniform")
        if not _is_traced(low, high):
            return _host_call("uniform", self._numpy.uniform)(low, high, size)
        draw = getattr(self._numpy, "random_sample", None) or self._numpy.random
        u = _standard(draw, _shape_of(size, low, high))
        return ew.add(low, ew.multiply(ew.subtract(high, low), u))

    # -- draws that index an array -----------------------------------------------------------
    def permutation(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        """A permuted range (`x` an int) or a permuted copy of `x` along axis 0 (or `axis`)."""
        _check_not_staged("permutation")
        if not isinstance(x, Array | Tracer):
            return _host_call("permutation", self._numpy.permutation)(x, *args, **kwargs)
        axis = kwargs.get("axis", args[0] if args else 0)
        n = x.shape[axis] if x.ndim else 0
        if x.ndim == 0:
            raise ValueError("mjnp.random.permutation: x must be an integer or at least 1-d")
        # NumPy permutes an array as it permutes its index range: the same draws.
        return take(x, asarray(self._numpy.permutation(n)), axis=axis)

    def shuffle(self, x: Any, *args: Any, **kwargs: Any) -> None:
        """Shuffle `x` in place along axis 0 (or `axis`): rebinds the handle, as `x[...] = v`."""
        _check_not_staged("shuffle")
        if not isinstance(x, Array | Tracer):
            self._numpy.shuffle(x, *args, **kwargs)
            return
        if x.ndim == 0:
            raise TypeError("mjnp.random.shuffle: x must be at least 1-d")
        core.rebind(x, self.permutation(x, *args, **kwargs))

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, **kw: Any):
        """`choice(a, size, replace, p)` as NumPy's; an mjnp array `a` is indexed on the device
        (so `a` may be traced), with the indices NumPy would draw."""
        _check_not_staged("choice")
        if not isinstance(a, Array | Tracer):
            return _host_call("choice", self._numpy.choice)(a, size, replace, p, **kw)
        if a.ndim == 0:
            raise ValueError("mjnp.random.choice: a must be a sequence or an integer, not 0-d")
        axis = kw.get("axis", 0)
        idx = self._numpy.choice(a.shape[axis], size, replace, _to_host("choice", p), **kw)
        return take(a, asarray(np.asarray(idx)), axis=axis)


class Generator(Sampler):
    """`numpy.random.Generator` for mjnp: `Generator(bit_generator)`, or `default_rng(seed)`."""

    def __init__(self, bit_generator: Any):
        super().__init__(np.random.Generator(bit_generator))


class RandomState(Sampler):
    """`numpy.random.RandomState` for mjnp (the legacy seeded generator)."""

    def __init__(self, seed: Any = None):
        super().__init__(np.random.RandomState(seed))


def default_rng(seed: Any = None) -> Generator:
    """A `Generator` seeded as `numpy.random.default_rng(seed)` is: same seed, same draws."""
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, np.random.Generator):
        seed = seed.bit_generator
    rng = np.random.default_rng(seed)
    return Generator(rng.bit_generator)


class _GlobalState(Sampler):
    """NumPy's global `RandomState`, looked up on every call: `numpy.random.seed` acts on it."""

    def __init__(self) -> None:  # NB: no fixed sampler; `_numpy` is a property
        pass

    @property  # type: ignore[override]
    def _numpy(self) -> Any:
        return np.random.mtrand._rand


_global = _GlobalState()
