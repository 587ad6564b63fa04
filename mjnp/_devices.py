"""Devices in the Array API's sense: the `device=` argument, `Array.device` and
`Array.to_device`.

mjnp arrays live on mjcore's single CPU device (`mjcore.devices()`); the device objects are
those same objects. A `device=` argument accepts one of them, `None` (the default device) or
NumPy's spelling `"cpu"`, so code written for NumPy 2 keeps working.
"""

from __future__ import annotations

from typing import Any

from mjcore.dispatch import devices

Array = Any
Device = Any


def default_device() -> Device:
    """The device arrays are created on (mjcore's CPU device)."""
    return devices()[0]


def check_device(fname: str, device: Device) -> Device:
    """The device a `device=` argument names, after checking that it is one of ours.

    Raises:
        ValueError: for anything but None, "cpu" or a device from `mjcore.devices()`, as
            NumPy raises for a device it does not know.
    """
    if device is None or (isinstance(device, str) and device == "cpu"):
        return default_device()
    available = devices()
    try:
        known = device in available
    except TypeError:  # an object that cannot be compared with jaxlib's devices
        known = False
    if not known:
        raise ValueError(
            f"mjnp.{fname}: unknown device {device!r}; use None, 'cpu' or one of "
            f"mjnp.__array_namespace_info__().devices() = {tuple(available)}"
        )
    return device


def device(x: Array) -> Device:
    """`x.device`: the device holding `x`.

    NB: traced values report the default device too (JAX's tracers raise AttributeError).
    With one device that is where every traced value will live, and it lets Array API code
    such as `xp.zeros(n, device=x.device)` run under `jit`, `grad` and `vmap`.
    """
    return default_device()


def to_device(x: Array, device: Device, /, *, stream: int | Any | None = None) -> Array:
    """`x.to_device(device)`: `x` on `device`, per the Array API (`x` itself: one device).

    Raises:
        ValueError: for an unknown device or a `stream` (the CPU device has none).
    """
    check_device("Array.to_device", device)
    if stream is not None:
        raise ValueError(f"mjnp Array.to_device: the CPU device has no streams, got {stream!r}")
    return x
