"""`mjcore.config`: JAX's configuration object, for the flags that mean something here.

JAX programs set flags with `jax.config.update("jax_enable_x64", True)`; the same line works
with `mjcore.config`. Each flag is declared once, with its default, a validator and (where
setting it must change state elsewhere) a hook. Modules that own a behaviour read their flag
with `config.read(name)` (or the attribute `config.name`), so the switch lives here and the
behaviour where it belongs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mjcore import core


@dataclass
class _Flag:
    name: str
    default: Any
    doc: str
    validate: Callable[[Any], Any]
    on_update: Callable[[Any], object] | None = None


def _as_bool(name: str) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.lower() in ("0", "1", "true", "false"):
            return value.lower() in ("1", "true")
        raise ValueError(f"mjcore.config: {name} must be a bool, got {value!r}")

    return check


def _x64(value: Any) -> bool:
    value = _as_bool("jax_enable_x64")(value)
    if not value:
        raise ValueError(
            "mjcore.config: jax_enable_x64=False is not supported: mjnp follows NumPy, whose "
            "defaults are float64/int64 (JAX with x64 enabled); cast explicitly with "
            ".astype(np.float32) for 32-bit work"
        )
    return value


def _platforms(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(
            f"mjcore.config: jax_platforms must be a comma-separated string such as "
            f"'cuda,cpu', got {value!r}"
        )
    return value


class Config:
    """The flag registry; `mjcore.config` is its only instance."""

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_values", {})

    def define(
        self,
        name: str,
        default: Any,
        doc: str,
        validate: Callable[[Any], Any] | None = None,
        on_update: Callable[[Any], object] | None = None,
    ) -> None:
        """Declare a flag (for the module that owns its behaviour)."""
        self._flags[name] = _Flag(name, default, doc, validate or (lambda v: v), on_update)
        self._values[name] = default

    def _flag(self, name: str) -> _Flag:
        try:
            return self._flags[name]  # type: ignore[no-any-return]
        except KeyError:
            known = ", ".join(sorted(self._flags))
            raise AttributeError(
                f"mjcore.config: unknown flag {name!r}; the flags here are: {known}"
            ) from None

    def update(self, name: str, value: Any) -> None:
        """Set flag `name` to `value` (JAX's `jax.config.update`)."""
        flag = self._flag(name)
        value = flag.validate(value)
        self._values[name] = value
        if flag.on_update is not None:
            flag.on_update(value)

    def read(self, name: str) -> Any:
        """The current value of flag `name`."""
        self._flag(name)
        return self._values[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"mjcore.config: set flags with config.update({name!r}, value)")

    @property
    def values(self) -> dict[str, Any]:
        """A copy of every flag's current value."""
        return dict(self._values)


config = Config()


def retrace_all() -> None:
    """Drop every traced and compiled program: a flag read while tracing changed."""
    # Function-local: breaks the cycle with backend.client, which reads flags at import.
    from mjcore.backend.client import clear_caches

    clear_caches()


config.define(
    "jax_enable_x64",
    True,
    "64-bit types are always on (NumPy's float64/int64 defaults); True is accepted.",
    _x64,
)
config.define(
    "jax_disable_jit",
    False,
    "Run jitted functions op by op (as `mjcore.disable_jit()` does, but process-wide).",
    _as_bool("jax_disable_jit"),
    lambda v: core.set_jit_disabled(v),
)
config.define(
    "jax_debug_nans",
    False,
    "Raise FloatingPointError at the first operation that produces a NaN.",
    _as_bool("jax_debug_nans"),
    lambda v: core.set_debug_nans(v),
)
config.define(
    "jax_platforms",
    os.environ.get("MJCORE_PLATFORMS") or os.environ.get("JAX_PLATFORMS") or None,
    "Comma-separated platforms to use, in order of preference ('cuda,cpu'); read when the "
    "backend starts.",
    _platforms,
)
config.define(
    "checked_indexing",
    False,
    "Out-of-bounds indices inside compiled code raise IndexError at the call.",
    _as_bool("checked_indexing"),
    lambda v: retrace_all(),
)


def _shardy_from_env() -> bool:
    """`MJCORE_USE_SHARDY_PARTITIONER` (or JAX's `JAX_USE_SHARDY_PARTITIONER`); on when
    neither is set, as in JAX."""
    for name in ("MJCORE_USE_SHARDY_PARTITIONER", "JAX_USE_SHARDY_PARTITIONER"):
        text = os.environ.get(name, "").strip()
        if text:
            return _as_bool(name)(text)
    return True


config.define(
    "jax_use_shardy_partitioner",
    _shardy_from_env(),
    "Programs over several devices carry Shardy's sharding attributes (`sdy.sharding`, "
    "`sdy.manual_computation`) and are partitioned by Shardy; False: GSPMD's "
    "`mhlo.sharding`, which XLA warns is deprecated. Drops every compiled program.",
    _as_bool("jax_use_shardy_partitioner"),
    lambda v: retrace_all(),
)


def _cpu_async_from_env() -> bool:
    """`MJCORE_CPU_ENABLE_ASYNC_DISPATCH` (or JAX's `JAX_CPU_ENABLE_ASYNC_DISPATCH`); off
    when neither is set."""
    for name in ("MJCORE_CPU_ENABLE_ASYNC_DISPATCH", "JAX_CPU_ENABLE_ASYNC_DISPATCH"):
        text = os.environ.get(name, "").strip()
        if text:
            return _as_bool(name)(text)
    return False


def _cpu_async_updated(value: bool) -> None:
    """Warn when the CPU client already runs the other way: the mode is the client's own,
    fixed when it starts."""
    # Function-local, as in `retrace_all`.
    import warnings

    from mjcore.backend import client

    if not client.started():
        return
    cpu = client.backends().get("cpu")
    if cpu is not None and cpu.asynchronous != value:
        warnings.warn(
            f"mjcore.config: jax_cpu_enable_async_dispatch={value} takes effect when the CPU "
            f"backend starts, and it has started (async dispatch "
            f"{'on' if cpu.asynchronous else 'off'}); set the flag (or "
            "MJCORE_CPU_ENABLE_ASYNC_DISPATCH) before the first operation",
            RuntimeWarning,
            stacklevel=3,
        )


config.define(
    "jax_cpu_enable_async_dispatch",
    _cpu_async_from_env(),
    "CPU programs on one device run on the client's worker threads and return at once "
    "(JAX's default) instead of in the calling thread, as NumPy does (mjcore's default: two "
    "thread hand-offs fewer per call); read when the CPU backend starts.",
    _as_bool("jax_cpu_enable_async_dispatch"),
    _cpu_async_updated,
)
