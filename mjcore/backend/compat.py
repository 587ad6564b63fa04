"""The one place that calls jaxlib's private API, so a jaxlib release that changes it touches
this file only.

mjnp supports `jaxlib>=0.10.2,<0.13`. Every name below exists in that whole range unless a
function here says otherwise and absorbs the difference; `tests/test_compat.py` checks each
against the installed jaxlib.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
from typing import Any

# Keep XLA's C++ start-up logging off the user's terminal unless they asked for it.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

import jaxlib._jax as xla  # noqa: E402  (must follow the logging setting above)
from jaxlib import version as _jaxlib_version  # noqa: E402
from jaxlib import xla_client as xc  # noqa: E402

SUPPORTED = ">=0.10.2,<0.13"


def parse_version(text: str) -> tuple[int, ...]:
    """(0, 12, 0, 1) for '0.12.0.1' (the dotted numeric prefix of a PEP 440 version)."""
    m = re.match(r"[0-9]+(?:\.[0-9]+)*", text)
    if m is None:
        raise ValueError(f"mjcore: cannot parse the version string {text!r}")
    return tuple(int(p) for p in m.group(0).split("."))


JAXLIB_VERSION: str = _jaxlib_version.__version__
JAXLIB: tuple[int, ...] = parse_version(JAXLIB_VERSION)

if not (0, 10, 2) <= JAXLIB < (0, 13):
    raise ImportError(
        f"mjcore needs jaxlib{SUPPORTED}, but jaxlib {JAXLIB_VERSION} is installed; "
        f"install a supported one with `pip install 'jaxlib{SUPPORTED}'`"
    )

JaxRuntimeError = xla.JaxRuntimeError
SingleDeviceSharding = xla.SingleDeviceSharding
DeviceList = xc.DeviceList
CompileOptions = xc.CompileOptions
HloSharding = xc.HloSharding
# The runtime copies the host data before `batched_device_put` returns, so later mutation of
# the NumPy array cannot reach the buffer.
COPY_DURING_CALL = xla.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL

# jaxlib 0.10 has `_skip_checks` (which spares a Python-level check per output); 0.11 dropped
# the keyword along with the check.
_RESULT_HANDLER_SKIPS_CHECKS = "_skip_checks" in (xla.array_result_handler.__doc__ or "")


def result_handler(aval: Any, sharding: Any, committed: bool) -> Any:
    """jaxlib's handler that wraps an executable's output as a device array."""
    if _RESULT_HANDLER_SKIPS_CHECKS:
        return xla.array_result_handler(aval, sharding, committed, _skip_checks=True)
    return xla.array_result_handler(aval, sharding, committed)


def batched_device_put(aval: Any, sharding: Any, x: Any, device: Any, committed: bool) -> Any:
    """A new single-device buffer holding a copy of the host array `x`; `committed`: placed
    on `device` by an explicit request (JAX's notion; `buf._committed` reads it back)."""
    return xla.batched_device_put(
        aval, sharding, [x], [device], committed, False, COPY_DURING_CALL, True
    )


def buffer_to_dlpack(buf: Any, stream: int | None = None) -> Any:
    """A DLPack capsule sharing the buffer's memory (a legacy, unversioned one)."""
    return xla.buffer_to_dlpack_managed_tensor(buf, stream)


def make_cpu_client(
    num_devices: int | None = None, distributed: Any = None, asynchronous: bool = False
) -> Any:
    """The PJRT CPU client, with `num_devices` CPU devices (default 1).

    `distributed`: (runtime client, process id, process count) when this process is one of
    several (`mjcore.distributed.initialize`): the client then sees every process's devices
    and runs collectives over gloo (TCP), as JAX's `make_cpu_client` sets it up.

    `asynchronous`: a one-device program runs on the client's worker threads and `execute`
    returns at once (JAX's default); otherwise it runs in the calling thread, as NumPy does,
    which spares two thread hand-offs per call (a program over several devices runs its
    parts on the worker threads either way).
    """
    kwargs: dict[str, Any] = {"asynchronous": asynchronous}
    if num_devices is not None:
        kwargs["num_devices"] = num_devices
    if distributed is not None:
        runtime_client, process_id, num_processes = distributed
        kwargs["distributed_client"] = runtime_client
        kwargs["node_id"] = process_id
        kwargs["num_nodes"] = num_processes
        kwargs["collectives"] = xla.make_gloo_tcp_collectives(distributed_client=runtime_client)
    return xc.make_cpu_client(**kwargs)


# --- many processes: jaxlib's distributed runtime (coordination service and client) ---------


def distributed_service(
    bind_address: str, num_processes: int, heartbeat_timeout: int, shutdown_timeout: int
) -> Any:
    """Start the coordination service (in process 0) that every process's client joins."""
    return xla.get_distributed_runtime_service(
        bind_address,
        num_processes,
        heartbeat_timeout=heartbeat_timeout,
        shutdown_timeout=shutdown_timeout,
    )


def distributed_client(
    address: str, process_id: int, init_timeout: int, heartbeat_timeout: int, shutdown_timeout: int
) -> Any:
    """A (not yet connected) client of the coordination service at `address`.

    No `missed_heartbeat_callback`: with one, jaxlib fails to hand the status to Python and
    aborts with a bare `std::bad_cast`; without, a lost peer ends the process with XLA's own
    message, as in JAX.
    """
    return xla.get_distributed_runtime_client(
        address,
        process_id,
        init_timeout=init_timeout,
        heartbeat_timeout=heartbeat_timeout,
        shutdown_timeout=shutdown_timeout,
        use_compression=True,
    )


_options: dict[int, Any] = {}


def compile_options(device_id: int) -> Any:
    """Options for a one-device program on the device with id `device_id` (XLA assigns
    device 0 unless told otherwise)."""
    opts = _options.get(device_id)
    if opts is None:
        import numpy as np

        opts = CompileOptions()
        assignment = xc.DeviceAssignment.create(np.array([[device_id]], dtype=np.int64))
        opts.executable_build_options.device_assignment = assignment
        _options[device_id] = opts
    return opts


def compile_and_load(
    client: Any, module: Any, devices: Any, host_callbacks: list[Any] | None = None
) -> Any:
    """Compile a StableHLO module (text, or a parsed MLIR module when there are host
    callbacks) for `devices` (a one-device `DeviceList`)."""
    (device,) = devices
    opts = compile_options(device.id)
    if host_callbacks:
        return client.compile_and_load(module, devices, opts, host_callbacks=host_callbacks)
    return client.compile_and_load(module, devices, opts)


def mlir_context() -> Any:
    """A new MLIR context with jaxlib's dialects (StableHLO, CHLO, ...) registered."""
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    from jaxlib.mlir.dialects import stablehlo

    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    return ctx


def parse_mlir(ctx: Any, text: str) -> Any:
    """The MLIR module object of `text`, in `ctx`."""
    from jaxlib.mlir import ir

    with ctx:
        return ir.Module.parse(text)


def lapack_registrations() -> dict[str, Any]:
    """The LAPACK typed-FFI handlers jaxlib's CPU kernels provide, by target name."""
    import jaxlib.cpu._lapack as _lapack

    _lapack.initialize()
    return {n: c for n, c in _lapack.registrations().items() if n.endswith("_ffi")}


def register_custom_call_target(name: str, capsule: Any, platform: str) -> None:
    """Register a typed-FFI handler with XLA for `platform` ('cpu', 'CUDA')."""
    xc.register_custom_call_target(name, capsule, platform=platform, api_version=1)


# --- PJRT plugins (GPU) ---------------------------------------------------------------------

# The PJRT C API capsule of each plugin this module loaded (the plugin extension's
# registration functions take it).
_c_apis: dict[str, Any] = {}

# The CUDA plugin packages of jaxlib's own release line, newest CUDA first (as jaxlib's
# `plugin_support` lists them). Each ships `jax_plugins.xla_cudaNN` (the PJRT plugin library)
# and `jax_cudaNN_plugin` (the solver kernels and the plugin's Python extension).
CUDA_PLUGINS: tuple[tuple[str, str], ...] = (("jax_plugins.xla_cuda13", "jax_cuda13_plugin"),)
CUDA_PLUGINS += (("jax_plugins.xla_cuda12", "jax_cuda12_plugin"),)


def plugin_version(kernels_package: str) -> str | None:
    """The version of an installed plugin's kernel package, or None when it is not installed
    (read from its `version` module: no import of the package itself)."""
    try:
        mod = importlib.import_module(f"{kernels_package}.version")
    except ImportError:
        return None
    return str(getattr(mod, "__version__", "")) or None


def plugin_library(plugin_package: str) -> str | None:
    """The path of the PJRT plugin library (`xla_cuda_plugin.so`) of an installed plugin
    package, found without importing it (its `__init__` imports `jax`)."""
    try:
        spec = importlib.util.find_spec(plugin_package)
    except ImportError:  # no `jax_plugins` namespace package at all
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, "xla_cuda_plugin.so")
        if os.path.exists(path):
            return path
    return None


# NVIDIA's libraries as the CUDA wheels ship them (nvidia.<module>/lib/<library>): loaded
# before the plugin, as JAX does, so that the plugin finds these copies.
_NVIDIA_LIBRARIES = (
    ("cu13", ("libcudart.so.13", "libnvrtc.so.13", "libcublas.so.13", "libcublasLt.so.13")),
    ("cu13", ("libcusolver.so.12", "libcufft.so.12", "libcusparse.so.12", "libcupti.so.13")),
    ("cuda_runtime", ("libcudart.so.12",)),
    ("cuda_nvrtc", ("libnvrtc.so.12",)),
    ("cublas", ("libcublas.so.12", "libcublasLt.so.12")),
    ("cusolver", ("libcusolver.so.11",)),
    ("cufft", ("libcufft.so.11",)),
    ("cusparse", ("libcusparse.so.12",)),
    ("cuda_cupti", ("libcupti.so.12",)),
    ("nccl", ("libnccl.so.2",)),
    ("cudnn", ("libcudnn.so.9",)),
)


def preload_nvidia_libraries() -> None:
    """Load the NVIDIA libraries of installed `nvidia-*` wheels (those absent are skipped:
    the system's, on the library path, serve instead)."""
    import ctypes

    for module, libraries in _NVIDIA_LIBRARIES:
        try:
            mod = importlib.import_module(f"nvidia.{module}")
        except ImportError:
            continue
        for folder in getattr(mod, "__path__", []):
            for lib in libraries:
                path = os.path.join(folder, "lib", lib)
                if os.path.exists(path):
                    try:
                        ctypes.CDLL(path)
                    except OSError:
                        pass  # the plugin reports what it then lacks


def make_plugin_client(platform: str, library: str) -> Any:
    """Load a PJRT plugin library and make its client (as JAX's `xla_bridge` does)."""
    if not xc.pjrt_plugin_loaded(platform):
        preload_nvidia_libraries()
        _c_apis[platform] = xc.load_pjrt_plugin_dynamically(platform, library)
    if not xc.pjrt_plugin_initialized(platform):
        xc.initialize_pjrt_plugin(platform)
    options = xc.generate_pjrt_gpu_plugin_options()
    return xc.make_c_api_client(platform, options, None)


def register_cuda_kernels(platform: str, kernels_package: str) -> None:
    """Make the CUDA plugin's FFI handlers (the Python GPU callback, ...) and the cuSOLVER /
    cuBLAS kernels of its `_solver` module known to XLA's CUDA registry, as JAX's
    `jax_plugins.cuda.initialize` and `jax._src.lib` do (without importing `jax`)."""
    import functools

    c_api = _c_apis.get(platform)
    if c_api is None:  # loaded by someone else (`jax`), who registered the kernels too
        return
    ext = importlib.import_module(f"{kernels_package}.cuda_plugin_extension")
    xc.register_custom_type_handler("CUDA", functools.partial(ext.register_custom_type, c_api))
    xc.register_custom_call_handler(
        "CUDA", functools.partial(ext.register_custom_call_target, c_api)
    )
    # (older plugin extensions lack these two tables)
    for name, value in getattr(ext, "ffi_types", dict)().items():
        xc.register_custom_type(name, value, platform="CUDA")
    for name, value in getattr(ext, "ffi_handlers", dict)().items():
        register_custom_call_target(name, value, "CUDA")
    for submodule in ("_solver", "_linalg"):
        try:
            mod = importlib.import_module(f"{kernels_package}.{submodule}")
        except ImportError:
            continue
        for name, value in mod.registrations().items():
            if name.endswith("_ffi"):
                register_custom_call_target(name, value, "CUDA")


# --- several devices (SPMD programs, arrays made of shards) ---------------------------------

GSPMDSharding = xla.GSPMDSharding


def spmd_compile_options(
    device_ids: tuple[int, ...], propagate_outputs: list[bool], shardy: bool = True
) -> Any:
    """Options for one program partitioned over the devices `device_ids` (logical device i
    is `device_ids[i]`) by XLA's SPMD partitioner: Shardy, reading `sdy.*` attributes and
    ops, when `shardy`; else GSPMD, reading `mhlo.sharding` attributes (XLA then warns that
    GSPMD propagation is deprecated). `propagate_outputs[i]`: XLA chooses output i's
    sharding."""
    import numpy as np

    opts = CompileOptions()
    build = opts.executable_build_options
    build.num_replicas = 1
    build.num_partitions = len(device_ids)
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = shardy
    build.allow_spmd_sharding_propagation_to_output = list(propagate_outputs)
    assignment = np.array([list(device_ids)], dtype=np.int64)  # (replicas, partitions)
    build.device_assignment = xc.DeviceAssignment.create(assignment)
    opts.num_replicas = 1
    opts.num_partitions = len(device_ids)
    return opts


def compile_spmd(client: Any, module_text: str, devices: tuple[Any, ...], opts: Any) -> Any:
    """Compile a StableHLO module for several devices (one partition each)."""
    return client.compile_and_load(module_text, DeviceList(tuple(devices)), opts)


def output_hlo_shardings(executable: Any) -> list[Any]:
    """The HLO sharding XLA chose for each output of a compiled SPMD program."""
    out = []
    for s in executable.get_output_shardings() or []:
        out.append(s if isinstance(s, HloSharding) else HloSharding.from_proto(s))
    return out


def assemble_array(aval: Any, sharding: Any, shards: list[Any]) -> Any:
    """jaxlib's multi-device array over single-device `shards` (committed), which must be in
    the order of `sharding`'s devices; jaxlib's Python-level checks (JAX's) are skipped."""
    return xla.ArrayImpl(aval, sharding, shards, True, True)


# --- programs over several devices (and processes) ------------------------------------------


def compile_for_devices(client: Any, module: Any, assignment: Any, spmd: bool) -> Any:
    """Compile a StableHLO module for the devices of `assignment` (an array of devices, shape
    (replicas, partitions), as XLA's device assignment), partitioned by XLA's SPMD partitioner
    when `spmd`. The devices may belong to other processes (`mjcore.distributed`); the
    executable then runs this process's part, and XLA's collectives connect the parts."""
    import numpy as np

    replicas, partitions = assignment.shape
    opts = CompileOptions()
    build = opts.executable_build_options
    build.num_replicas = replicas
    build.num_partitions = partitions
    build.use_spmd_partitioning = spmd
    build.device_assignment = xc.DeviceAssignment.create(
        np.array([[d.id for d in row] for row in assignment], dtype=np.int64)
    )
    return client.compile_and_load(module, DeviceList(tuple(assignment.flat)), opts)


def multi_device_array(aval: Any, devices: Any, hlo_sharding: str, buffers: list[Any]) -> Any:
    """jaxlib's array over `devices` (every process's), sharded as the HLO sharding text says
    (e.g. '{devices=[4]0,1,2,3}'), of this process's single-device `buffers` (in the order of
    its devices among `devices`): the argument form a many-device executable takes."""
    sharding = xla.GSPMDSharding(DeviceList(tuple(devices)), HloSharding.from_string(hlo_sharding))
    # `_skip_checks`: the unchecked constructor; the checked one calls `jax`'s Python code.
    return xla.ArrayImpl(aval, sharding, buffers, True, _skip_checks=True)


def execute_for_devices(executable: Any, arguments: list[Any]) -> list[list[Any]]:
    """Run a many-device executable; per output, its single-device buffers on this process's
    devices (in the executable's `local_devices()` order)."""
    return executable.execute_sharded(arguments).disassemble_into_single_device_arrays()  # type: ignore[no-any-return]


def signature_text(fn: Any) -> str:
    """A jaxlib function's signature, for the compat checks in the tests."""
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return (fn.__doc__ or "").split("\n")[0]
