"""Which platforms (CPU, CUDA) mjcore runs on, chosen as JAX chooses them, and one `Backend`
(a PJRT client and its devices) per platform.

Without a request, the default is the GPU when a CUDA plugin of the installed jaxlib's version
is installed, else the CPU. `MJCORE_PLATFORMS=cuda,cpu` (or `JAX_PLATFORMS`, or
`mjcore.config.update("jax_platforms", ...)` before the first operation) names the platforms to
start, in order of preference; the first is the default. A platform that was asked for and
cannot start is an error, as in JAX; one that was only discovered is skipped with a warning.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from mjcore.backend import compat
from mjcore.config import config

# JAX's platform aliases: 'gpu' means CUDA here (no ROCm plugin support yet).
ALIASES = {"cpu": "cpu", "cuda": "cuda", "gpu": "cuda"}
# `Device.platform` of each platform's devices ('gpu' for CUDA devices, as in jaxlib).
DEVICE_PLATFORM = {"cpu": "cpu", "cuda": "gpu"}


class Plugin(NamedTuple):
    """An installed PJRT plugin of the installed jaxlib's version."""

    platform: str  # 'cuda'
    library: str  # the PJRT plugin's shared library
    kernels_package: str  # jax_cuda13_plugin: solver kernels and the plugin extension
    version: str


def discover_plugins() -> list[Plugin]:
    """The CUDA plugins installed for this jaxlib, best first. A plugin of another jaxlib
    version is skipped with a warning: its C API may not match (JAX does the same)."""
    found = []
    for plugin_package, kernels_package in compat.CUDA_PLUGINS:
        version = compat.plugin_version(kernels_package)
        library = compat.plugin_library(plugin_package)
        if version is None or library is None:
            continue
        if compat.parse_version(version) != compat.JAXLIB:
            warnings.warn(
                f"mjcore: {kernels_package} {version} is installed, but jaxlib is "
                f"{compat.JAXLIB_VERSION}; the CUDA plugin must match jaxlib's version, so "
                f"it is not used (pip install '{kernels_package}=={compat.JAXLIB_VERSION}')",
                RuntimeWarning,
                stacklevel=3,
            )
            continue
        found.append(Plugin("cuda", library, kernels_package, version))
    return found


def parse_platforms(text: str | None) -> list[str] | None:
    """['cuda', 'cpu'] for 'gpu,cpu'; None for no request.

    Raises:
      RuntimeError: for a platform name mjcore does not know (as JAX raises).
    """
    if text is None or not text.strip():
        return None
    out: list[str] = []
    for raw in text.split(","):
        name = raw.strip().lower()
        if name not in ALIASES:
            raise RuntimeError(
                f"mjcore: unknown platform {raw.strip()!r} in jax_platforms={text!r}; "
                f"known platforms: {', '.join(sorted(ALIASES))}"
            )
        if ALIASES[name] not in out:
            out.append(ALIASES[name])
    return out


def select_platforms(requested: list[str] | None, plugins: Sequence[Plugin]) -> list[str]:
    """The platforms to start, default first.

    Raises:
      RuntimeError: when a requested platform has no plugin (naming what to install).
    """
    available = {p.platform for p in plugins}
    if requested is None:
        return ["cuda", "cpu"] if "cuda" in available else ["cpu"]
    for name in requested:
        if name != "cpu" and name not in available:
            raise RuntimeError(
                f"mjcore: platform {name!r} was requested (jax_platforms / MJCORE_PLATFORMS) "
                f"but no {name.upper()} plugin for jaxlib {compat.JAXLIB_VERSION} is installed; "
                f"install it with `pip install 'jax-cuda13-plugin=={compat.JAXLIB_VERSION}'` "
                "(or jax-cuda12-plugin), or ask for 'cpu'"
            )
    return list(requested)


class Backend:
    """One platform's PJRT client and its devices."""

    def __init__(self, platform: str, client: Any):
        self.platform = platform
        self.client = client
        self.devices: list[Any] = list(client.local_devices())
        # Every process's devices (the same as `devices` unless `mjcore.distributed` joined
        # this process to others), and this process's index among them.
        self.global_devices: list[Any] = list(client.devices())
        self.process_index: int = int(client.process_index())
        # Per device: the DeviceList executables are compiled for, and the sharding that
        # result handlers and transfers use; made once (the dispatch paths reuse them).
        self.device_lists = {d: compat.DeviceList((d,)) for d in self.devices}
        # Whether one-device programs run on the client's worker threads (the CPU client
        # as `jax_cpu_enable_async_dispatch` says when it starts; other platforms always).
        self.asynchronous = True

    def __repr__(self) -> str:
        return f"Backend({self.platform!r}, devices={self.devices})"


def make_backend(
    platform: str, plugins: Sequence[Plugin], cpu_devices: int | None, distributed: Any = None
) -> Backend:
    """Start `platform`'s client (the CPU one with `cpu_devices` devices; `distributed`: the
    (runtime client, process id, process count) of `mjcore.distributed.initialize`)."""
    if platform == "cpu":
        asynchronous = bool(config.read("jax_cpu_enable_async_dispatch"))
        backend = Backend("cpu", compat.make_cpu_client(cpu_devices, distributed, asynchronous))
        backend.asynchronous = asynchronous
        return backend
    if distributed is not None:
        raise NotImplementedError(
            f"mjcore.distributed: several processes run on the CPU platform only so far, not "
            f"on {platform!r}; set MJCORE_PLATFORMS=cpu"
        )
    (plugin,) = [p for p in plugins if p.platform == platform][:1]
    client = compat.make_plugin_client(platform, plugin.library)
    compat.register_cuda_kernels(platform, plugin.kernels_package)
    return Backend(platform, client)


class Registry:
    """The started backends, keyed by platform, default first; started on first use.

    `discover` and `start` are parameters so the selection logic can be tested with fake
    plugins on a machine without a GPU.
    """

    def __init__(
        self,
        read_request: Callable[[], str | None],
        discover: Callable[[], list[Plugin]] = discover_plugins,
        start: Callable[..., Backend] = make_backend,
        read_cpu_devices: Callable[[], int | None] = lambda: None,
    ):
        self._read_request = read_request
        self._discover = discover
        self._start = start
        self._read_cpu_devices = read_cpu_devices  # (the environment's count, read at start)
        self._lock = threading.Lock()
        self._backends: dict[str, Backend] | None = None
        self.cpu_devices: int | None = None
        # (runtime client, process id, process count) once `mjcore.distributed.initialize`
        # ran: the CPU client is then made to join the other processes.
        self.distributed: tuple[Any, int, int] | None = None

    def backends(self) -> dict[str, Backend]:
        """Every started backend by platform, the default one first."""
        backends = self._backends
        if backends is None:
            with self._lock:
                if self._backends is None:
                    self._backends = self._start_all()
                backends = self._backends
        return backends

    def _start_all(self) -> dict[str, Backend]:
        requested = parse_platforms(self._read_request())
        plugins = self._discover()
        if self.cpu_devices is None:  # (set_cpu_device_count's count comes first)
            self.cpu_devices = self._read_cpu_devices()
        out: dict[str, Backend] = {}
        for platform in select_platforms(requested, plugins):
            try:
                if self.distributed is None:
                    out[platform] = self._start(platform, plugins, self.cpu_devices)
                else:
                    out[platform] = self._start(
                        platform, plugins, self.cpu_devices, self.distributed
                    )
            except Exception as err:  # noqa: BLE001  (a plugin's failure is any exception)
                if requested is not None:
                    raise RuntimeError(
                        f"mjcore: unable to initialize the {platform!r} platform that "
                        f"jax_platforms={','.join(requested)!r} asks for: {err}"
                    ) from err
                warnings.warn(
                    f"mjcore: the {platform!r} platform failed to start ({err}); falling back "
                    "to the next platform. Set MJCORE_PLATFORMS=cpu to silence this.",
                    RuntimeWarning,
                    stacklevel=4,
                )
        if not out:
            raise RuntimeError("mjcore: no platform could be started")
        return out

    def started(self) -> bool:
        return self._backends is not None

    def reset(self) -> None:
        """Forget the started backends (the next use starts them again); for tests and
        `clear_backends`."""
        with self._lock:
            self._backends = None
