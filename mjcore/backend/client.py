"""The PJRT CPU client from jaxlib: device buffers, host transfer, compile and execute."""

from __future__ import annotations

import atexit
import gc
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

# Keep XLA's C++ start-up logging off the user's terminal unless they asked for it.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from jaxlib import _jax as _xla  # noqa: E402  (must follow the logging setting above)
from jaxlib import xla_client as _xc  # noqa: E402

Buffer = Any  # jaxlib's single-device array type
Executable = Any

_lock = threading.Lock()
_client: Any = None
_device: Any = None
_device_list: Any = None


def client() -> Any:
    """The process-wide PJRT CPU client, created on first use."""
    global _client, _device, _device_list
    if _client is None:
        with _lock:
            if _client is None:
                c = _xc.make_cpu_client()
                _device = c.local_devices()[0]
                _device_list = _xc.DeviceList((_device,))
                _client = c
    return _client


# Caches of executables, jaxprs and buffers elsewhere in mjcore, emptied at interpreter exit
# and by `mjcore.clear_caches()`.
_exit_hooks: list[Callable[[], None]] = []


def clear_at_exit(hook: Callable[[], None]) -> Callable[[], None]:
    """Register `hook` (which drops cached executables, jaxprs or buffers) to run at exit and
    on `clear_caches()`."""
    _exit_hooks.append(hook)
    return hook


def clear_caches() -> None:
    """Run every hook registered with `clear_at_exit`."""
    global _compiles_since_clear
    _compiles_since_clear = 0
    for hook in _exit_hooks:
        hook()


@atexit.register
def _release_client() -> None:
    # As JAX does at exit: drop the executables, buffers and client while the interpreter is
    # whole, so the client's destructor joins XLA's thread pools. Left to process exit, they
    # can be torn down by static destructors with a thread still running, which aborts
    # ("terminate called without an active exception"), seen at about 1 exit in 25.
    global _client, _device, _device_list, _put_target
    clear_caches()
    gc.collect()
    _client = _device = _device_list = _put_target = None
    gc.collect()


def device() -> Any:
    """The CPU device all buffers live on."""
    if _device is None:
        client()
    return _device


def devices() -> list[Any]:
    return list(client().local_devices())


class _Sharding(_xla.SingleDeviceSharding):
    """The one-device sharding, with the methods jaxlib's `batched_device_put` calls on it
    (JAX adds them to this class in Python when `jax` is imported; we never import it)."""

    __slots__ = ()

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind  # type: ignore[no-any-return]

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> Any:
        return _xc.HloSharding.replicate()


# (sharding, [device]) for `batched_device_put`, made on first use; one tuple, so threads
# racing to make it never see half of it.
_put_target: tuple[_Sharding, list[Any]] | None = None
# The runtime copies the host data before `batched_device_put` returns, so later mutation of
# the NumPy array cannot reach the buffer.
_COPY_DURING_CALL = _xla.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL


def device_put(x: np.ndarray) -> Buffer:
    """Copy a NumPy array to a new device buffer.

    jaxlib's `batched_device_put`, not its DLPack import: that one builds the buffer's aval
    from JAX's Python core, so the first transfer imported the whole JAX package (~0.3 s and
    ~36 MiB); mjcore never imports it.
    """
    global _put_target
    target = _put_target
    if target is None:
        target = _put_target = (_Sharding(device()), [device()])
    sharding, devices_ = target
    return _xla.batched_device_put(
        _HostAval(x.shape, x.dtype), sharding, [x], devices_, True, False, _COPY_DURING_CALL, True
    )


class _HostAval(NamedTuple):
    """What a buffer made by `device_put` reports as its `aval`: mjcore's avals come from the
    callers (a weak type is not the buffer's business)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False


class _DLPackExport:
    """A DLPack capsule dressed as the producer `numpy.from_dlpack` asks for."""

    __slots__ = ("capsule",)

    def __init__(self, capsule: Any):
        self.capsule = capsule

    def __dlpack__(self, stream: Any = None, **_: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU


def to_numpy(buf: Buffer) -> np.ndarray:
    """A read-only NumPy view of a device buffer's contents (CPU memory: no copy).

    Through DLPack: jaxlib's own host conversion imports `jax` (see `device_put`). The view
    holds a reference on the buffer, which outlives any Array that had it.
    """
    out = np.from_dlpack(_DLPackExport(_xla.buffer_to_dlpack_managed_tensor(buf)))
    out.flags.writeable = False
    return out


def _max_map_count() -> int:
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            return int(f.read())
    except (OSError, ValueError):  # not Linux: no such per-process limit to stay under
        return 1 << 30


# Each loaded executable holds ~3 memory mappings of JIT-compiled code. A process that compiles
# tens of thousands of signatures (a long session, a test suite) would reach Linux's
# vm.max_map_count (65530 by default), after which XLA fails to link new code ("Failed to
# materialize symbols"). So after this many compiles every cache of executables is emptied
# (`clear_caches`): later calls recompile what they still need. A fifth of the limit leaves
# room for the process's other mappings (large buffers are mappings too).
_COMPILES_BEFORE_CLEAR = max(1000, _max_map_count() // 5)
# Other code in the process maps code too (another JAX-based library's executables, shared
# libraries), so every `_MAP_CHECK_EVERY` compiles the actual count is read as well, and the
# caches are emptied when it passes half the limit.
_MAP_CHECK_EVERY = 256
_MAPS_BEFORE_CLEAR = _max_map_count() // 2
_compiles_since_clear = 0
_clearing = threading.Lock()


def _map_count() -> int:
    """The process's memory mappings now (0 where /proc/self/maps does not exist)."""
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def _over_budget() -> bool:
    n = _compiles_since_clear
    if n > _COMPILES_BEFORE_CLEAR:
        return True
    return n % _MAP_CHECK_EVERY == 0 and _map_count() > _MAPS_BEFORE_CLEAR


def compile_text(module_text: str, host_callbacks: Sequence[Callable[..., Any]] = ()) -> Executable:
    """Compile a StableHLO module (text form) for the CPU device.

    `host_callbacks` are the Python functions the module's `xla_ffi_python_cpu_callback`
    custom calls name by index (see `mjcore.backend.custom_call.python_callback`).
    """
    global _compiles_since_clear
    c = client()
    _compiles_since_clear += 1
    # Non-blocking: of threads reaching the limit together one clears, the others go on (the
    # clearer waits for per-function locks that a compiling thread only holds until it ends).
    if _over_budget() and _clearing.acquire(blocking=False):
        try:
            clear_caches()
            gc.collect()  # executables held in reference cycles (traced jaxprs) go now too
        finally:
            _clearing.release()
    try:
        if host_callbacks:
            # jaxlib takes host callbacks only with a parsed MLIR module, not with text.
            return c.compile_and_load(
                _parse_module(module_text),
                _device_list,
                _xc.CompileOptions(),
                host_callbacks=list(host_callbacks),
            )
        return c.compile_and_load(module_text, _device_list, _xc.CompileOptions())
    except _xla.JaxRuntimeError as err:
        raise RuntimeError(
            "mjcore internal error: XLA rejected a lowered module. Please report it with this "
            f"module:\n{module_text}"
        ) from err


_mlir_context: Any = None


def _parse_module(module_text: str) -> Any:
    """The MLIR module object of a StableHLO text, in a context with the dialects registered
    (made on first use: only modules with host callbacks need the MLIR bindings)."""
    global _mlir_context
    from jaxlib.mlir import ir

    with _lock:
        if _mlir_context is None:
            from jaxlib.mlir._mlir_libs import _jax_mlir_ext
            from jaxlib.mlir.dialects import stablehlo

            registry = ir.DialectRegistry()
            _jax_mlir_ext.register_dialects(registry)
            ctx = ir.Context()
            ctx.append_dialect_registry(registry)
            ctx.load_all_available_dialects()
            stablehlo.register_dialect(ctx)
            _mlir_context = ctx
        with _mlir_context:
            return ir.Module.parse(module_text)


# An exception raised by a host callback while XLA ran it, kept per thread so that `Program.run`
# raises it (rather than XLA's wrapper of its traceback text) when the execution fails.
_callback_errors = threading.local()


def record_callback_error(err: BaseException) -> None:
    """Remember the exception a host callback is about to raise into XLA."""
    _callback_errors.err = err


def _take_callback_error() -> BaseException | None:
    err = getattr(_callback_errors, "err", None)
    _callback_errors.err = None
    return err


# Called with each module text `Program` compiles (tests count and inspect the compiles).
compile_hooks: list[Callable[[str], None]] = []


class Program:
    """A compiled module plus the result handlers that wrap its outputs as device buffers.

    `execute_sharded(...).consume_with_handlers(...)` skips jaxlib's Python `execute` wrapper,
    which costs more than the execution itself for small ops.
    """

    __slots__ = ("executable", "handlers", "text", "host_callbacks")

    def __init__(
        self,
        module_text: str,
        out_avals: list[Any],
        host_callbacks: Sequence[Callable[..., Any]] = (),
    ):
        self.text = module_text
        self.host_callbacks = tuple(host_callbacks)
        self.executable = compile_text(module_text, self.host_callbacks)
        for hook in compile_hooks:
            hook(module_text)
        sharding = _xla.SingleDeviceSharding(device())
        self.handlers = [
            _xla.array_result_handler(a, sharding, True, _skip_checks=True) for a in out_avals
        ]

    def run(self, buffers: list[Buffer]) -> list[Buffer]:
        """Execute on device buffers; outputs stay on the device.

        Raises:
          RuntimeError: if a buffer was deleted by donation to an earlier call.
        """
        try:
            if self.host_callbacks:
                return self._run_with_callbacks(buffers)
            return self.executable.execute_sharded(buffers).consume_with_handlers(self.handlers)
        except _xla.JaxRuntimeError as err:
            # Checked only on failure, so that the successful path pays nothing.
            for buf in buffers:
                if buf.is_deleted():
                    raise deleted_error(buf) from err
            callback_err = _take_callback_error() if self.host_callbacks else None
            if callback_err is not None:
                raise callback_err from err
            if "RESOURCE_EXHAUSTED" in str(err):  # NumPy's error when an allocation fails
                raise MemoryError(f"Unable to allocate the arrays of this program: {err}") from err
            raise

    def _run_with_callbacks(self, buffers: list[Buffer]) -> list[Buffer]:
        # Wait until the program is done, so that its callbacks have run (a debug print is
        # on the terminal, an exception is raised here) when the call returns, as eagerly.
        _callback_errors.err = None
        results = self.executable.execute_sharded(buffers, with_tokens=True)
        token = results.consume_token()
        outs = results.consume_with_handlers(self.handlers)
        token.block_until_ready()
        return outs  # type: ignore[no-any-return]


def deleted_error(buf: Buffer) -> RuntimeError:
    """The error for using a buffer that donation (`jit(..., donate_argnums=...)`) consumed."""
    aval = buf.aval  # jaxlib's C++ array type has no `shape`/`dtype` unless `jax` is imported
    shape = ",".join(str(d) for d in aval.shape)
    return RuntimeError(
        f"Array has been deleted with shape={aval.dtype}[{shape}]: it was donated to a "
        "jit-compiled function (donate_argnums), which reused its buffer for an output. Use "
        "that function's result instead, or do not donate the argument."
    )


RuntimeError_ = _xla.JaxRuntimeError
