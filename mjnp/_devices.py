"""Devices in the Array API's sense: the `device=` argument, `Array.device` and
`Array.to_device`.

The device objects are mjcore's (`mjcore.devices()`, `mjcore.devices("cpu")`). A `device=`
argument accepts one of them, `None` (the default device) or a platform name ("cpu", NumPy's
spelling, or "gpu"/"cuda": that platform's first device), so code written for NumPy 2 keeps
working. As in JAX, it also accepts a `mjcore.sharding.Sharding`: the result is laid out as
it says (`mjcore.device_put(x, sharding)`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from mjcore import core
from mjcore.array import Array as _Array
from mjcore.dispatch import all_devices, current_device, device_of, device_put, local_devices
from mjcore.sharding import Sharding

Array = Any
Device = Any
F = TypeVar("F", bound=Callable[..., Any])


def default_device() -> Device:
    """The device arrays are created on."""
    return current_device()


def check_device(fname: str, device: Device) -> Device:
    """The device a `device=` argument names, after checking that it is one of ours.

    Raises:
        ValueError: for anything but None, a started platform's name or a device of
            `mjcore.devices(platform)`, as NumPy raises for a device it does not know.
    """
    if device is None:
        return default_device()
    if isinstance(device, Sharding):  # as JAX: the result is laid out as it says
        return device
    if isinstance(device, str):
        try:
            return local_devices(backend=device)[0]
        except RuntimeError:
            pass
    available = all_devices()
    try:
        known = device in available
    except TypeError:  # an object that cannot be compared with jaxlib's devices
        known = False
    if not known:
        raise ValueError(
            f"mjnp.{fname}: unknown device {device!r}; use None, a platform name such as "
            f"'cpu', or one of {tuple(available)}"
        )
    return device


def on_device(fn: F) -> F:
    """Make a creation function's `device=` argument place its result on that device."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        dev = kwargs.get("device")
        if dev is None or not isinstance(out, _Array):
            return out  # under a transformation, placement is the compiled program's business
        dev = check_device(fn.__name__, dev)
        if device_of(out) == dev:
            return out
        return device_put(out, dev)

    return wrapper  # type: ignore[return-value]


def device(x: Array) -> Device:
    """`x.device`: the device holding `x`.

    NB: traced values report the default device (JAX's tracers raise AttributeError). That is
    where every traced value of a default-device program lives, and it lets Array API code
    such as `xp.zeros(n, device=x.device)` run under `jit`, `grad` and `vmap`.
    """
    if isinstance(x, _Array):
        return device_of(x)
    return default_device()


def to_device(x: Array, device: Device, /, *, stream: int | Any | None = None) -> Array:
    """`x.to_device(device)`: `x` on `device`, per the Array API (`x` itself when it is
    already there; a copy otherwise).

    Raises:
        ValueError: for an unknown device or a `stream` (mjnp exposes no streams).
    """
    dev = check_device("Array.to_device", device)
    if stream is not None:
        raise ValueError(f"mjnp Array.to_device: mjnp exposes no streams, got {stream!r}")
    if isinstance(x, core.Tracer) or not isinstance(x, _Array):
        return x
    if device_of(x) == dev:
        return x
    return device_put(x, dev)
