"""The Array API inspection namespace, `mjnp.__array_namespace_info__()`: capabilities,
devices and data types, as the standard's 2025.12 version defines them."""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore.dispatch import all_devices as _all_devices
from mjnp._devices import Device, check_device, default_device

__array_api_version__ = "2025.12"

# The standard's data types, in its order (no float16: the standard has none).
_DTYPE_NAMES = (
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64 complex128"
).split()
_KINDS = frozenset(
    {
        "bool",
        "signed integer",
        "unsigned integer",
        "integral",
        "real floating",
        "complex floating",
        "numeric",
    }
)


class ArrayNamespaceInfo:
    """What `mjnp.__array_namespace_info__()` returns: the standard's inspection functions."""

    def capabilities(self) -> dict[str, Any]:
        """Boolean-mask indexing and data-dependent shapes work (eagerly; under `jit` they
        raise, naming the alternative), and arrays have at most NumPy's 64 dimensions, since
        values pass through NumPy on their way to and from the device."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> Device:
        """The device arrays are created on."""
        return default_device()

    def devices(self) -> tuple[Device, ...]:
        """The devices arrays can live on: those of every started platform, the default one's
        first (the same objects as `mjcore.devices(platform)`)."""
        return tuple(_all_devices())

    def default_dtypes(self, *, device: Device = None) -> dict[str, np.dtype]:
        """NumPy 2's defaults: float64, complex128, and int64 for integers and indices."""
        check_device("__array_namespace_info__().default_dtypes", device)
        return {
            "real floating": np.dtype(np.float64),
            "complex floating": np.dtype(np.complex128),
            "integral": np.dtype(np.int64),
            "indexing": np.dtype(np.int64),
        }

    def dtypes(
        self, *, device: Device = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, np.dtype]:
        """The standard's data types mjnp supports (all of them), by canonical name, optionally
        only those of `kind` (a kind string of `isdtype`, or a tuple of them).

        Raises:
            ValueError: for an unknown kind or device.
        """
        fname = "__array_namespace_info__().dtypes"
        check_device(fname, device)
        if kind is None:
            return {name: np.dtype(name) for name in _DTYPE_NAMES}
        kinds = kind if isinstance(kind, tuple) else (kind,)
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(
                    f"mjnp.{fname}: unknown kind {k!r}; expected None, one of {sorted(_KINDS)} "
                    "or a tuple of them"
                )
        return {name: np.dtype(name) for name in _DTYPE_NAMES if np.isdtype(np.dtype(name), kinds)}


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The Array API inspection namespace (capabilities, devices, data types)."""
    return ArrayNamespaceInfo()
