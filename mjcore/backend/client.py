"""PJRT clients from jaxlib: device buffers, host transfer, compile and execute.

Platforms and their clients are chosen in `platforms`; every private jaxlib call goes through
`compat`. One default device (the default platform's first, or `mjcore.default_device`'s)
receives new buffers and runs programs unless a caller names another.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import gc
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from mjcore import dtypes
from mjcore.backend import compat
from mjcore.backend.hlo import tensor_type
from mjcore.backend.platforms import ALIASES, Backend, Registry
from mjcore.config import config

Buffer = Any  # jaxlib's single-device array type
Executable = Any
Device = Any

_lock = threading.Lock()


def _cpu_device_count_from_env() -> int | None:
    """`MJCORE_NUM_CPU_DEVICES` (or JAX's `JAX_NUM_CPU_DEVICES`): the CPU client's device
    count; None leaves it to XLA, which reads `--xla_force_host_platform_device_count` from
    `XLA_FLAGS` itself.

    Raises:
      ValueError: for a value that is not a positive integer.
    """
    for name in ("MJCORE_NUM_CPU_DEVICES", "JAX_NUM_CPU_DEVICES"):
        text = os.environ.get(name, "").strip()
        if text:
            if not text.isdigit() or int(text) < 1:
                raise ValueError(f"mjcore: {name}={text!r} must be a positive integer")
            return int(text)
    return None


_registry = Registry(
    lambda: config.read("jax_platforms"), read_cpu_devices=_cpu_device_count_from_env
)
# The default device, once the backends are started (None until then).
_device: Any = None
# `mjcore.default_device(d)`: a per-thread override of the default device.
_override = threading.local()
# Set once a buffer is committed to a device while several exist: from then on programs check
# which device their arguments live on (`_PlacingExecutable`); before, every buffer is on the
# default device, and the hot paths skip the check.
several_devices_in_use = False


def _start_placing() -> None:
    """From now on programs place their inputs (`_PlacingExecutable`): empty every cache of
    programs, whose fast paths call executables directly, so that they are rebuilt."""
    global several_devices_in_use
    several_devices_in_use = True
    clear_caches()


# Whether only the CPU platform started: host copies then skip asking a buffer's platform.
_cpu_only = False
# Whether more than one device exists (over all started platforms): with one, committing an
# array changes nothing, and programs need not place their arguments.
_one_device = True
# How many `default_device` blocks are open, over all threads: while none is, the default
# device is `_device` and `device_put` skips the per-thread lookup.
_open_overrides = 0


def backends() -> dict[str, Backend]:
    """The started backends by platform, default first (started on first use)."""
    global _device, _cpu_only, _one_device
    out = _registry.backends()
    if _device is None:
        _cpu_only = list(out) == ["cpu"]
        _one_device = sum(len(b.devices) for b in out.values()) == 1
        _device = next(iter(out.values())).devices[0]
    return out


def get_backend(platform: str | None = None) -> Backend:
    """The backend of `platform` ('cpu', 'cuda' or 'gpu'; None: the default one).

    Raises:
      RuntimeError: for a platform that was not started, naming the started ones.
    """
    started = backends()
    if platform is None:
        return next(iter(started.values()))
    name = ALIASES.get(str(platform).lower(), str(platform))
    if name not in started:
        raise RuntimeError(
            f"mjcore: unknown backend {platform!r}; the started backends are "
            f"{list(started)} (choose platforms with MJCORE_PLATFORMS=cuda,cpu)"
        )
    return started[name]


def backend_of(dev: Device) -> Backend:
    """The backend that owns device `dev` (this process's, or with `mjcore.distributed`
    another process's, which programs may name but buffers cannot be put on)."""
    for b in backends().values():
        if dev in b.device_lists:
            return b
    for b in backends().values():
        if dev in b.global_devices:
            return b
    raise ValueError(f"mjcore: {dev!r} is not a device of any started backend")


def client() -> Any:
    """The default platform's PJRT client, created on first use."""
    return get_backend().client


def set_cpu_device_count(n: int) -> None:
    """Give the CPU client `n` devices (as XLA's `--xla_force_host_platform_device_count`);
    only before the first operation.

    Raises:
      RuntimeError: when the backends have already started.
    """
    if _registry.started():
        raise RuntimeError(
            "mjcore.set_cpu_device_count: the backends have already started; call it before "
            "the first operation"
        )
    _registry.cpu_devices = int(n)


def started() -> bool:
    """Whether the backends have started (the first operation starts them)."""
    return _registry.started()


def set_distributed(options: tuple[Any, int, int] | None) -> None:
    """Make the CPU client join other processes: (runtime client, process id, process count)
    from `mjcore.distributed.initialize`; None: one process again. Only before the first
    operation (`mjcore.distributed` checks)."""
    _registry.distributed = options


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
    # As JAX does at exit: drop the executables, buffers and clients while the interpreter is
    # whole, so the client's destructor joins XLA's thread pools. Left to process exit, they
    # can be torn down by static destructors with a thread still running, which aborts
    # ("terminate called without an active exception"), seen at about 1 exit in 25.
    global _device
    clear_caches()
    gc.collect()
    _device = None  # (a later use starts the backends again)
    _put_targets.clear()
    _sharding_cache.clear()
    _jaxlib_shardings.clear()
    _registry.reset()
    gc.collect()


def device() -> Device:
    """The default device: new buffers go there and programs run there."""
    dev = getattr(_override, "device", None)
    if dev is not None:
        return dev
    if _device is None:
        backends()
    return _device


def devices(platform: str | None = None) -> list[Device]:
    """The devices of `platform` (None: of the default platform) that this process addresses."""
    return list(get_backend(platform).devices)


def global_devices(platform: str | None = None) -> list[Device]:
    """The devices of `platform` over every process (`mjcore.distributed`): this process's
    and the others', which its programs can name but not hold buffers on."""
    return list(get_backend(platform).global_devices)


def release_backends() -> None:
    """Drop every cached executable and buffer and the clients (the next use starts the
    backends again); `mjcore.distributed.shutdown` does it before leaving the runtime."""
    _release_client()


@contextlib.contextmanager
def default_device(dev: Device | None) -> Iterator[None]:
    """Within the block, new arrays and programs go to `dev` (None: the usual default)."""
    if dev is not None:
        backend_of(dev)  # a device of ours, or ValueError
        if dev is not _device and not several_devices_in_use and not _one_device:
            _start_placing()
    global _open_overrides
    saved = getattr(_override, "device", None)
    _override.device = dev
    with _lock:
        _open_overrides += 1
    try:
        yield
    finally:
        _override.device = saved
        with _lock:
            _open_overrides -= 1


class _Sharding(compat.SingleDeviceSharding):
    """The one-device sharding, with the methods jaxlib's `batched_device_put` calls on it
    (JAX adds them to this class in Python when `jax` is imported; we never import it)."""

    __slots__ = ()

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind  # type: ignore[no-any-return]

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> Any:
        return compat.HloSharding.replicate()


# Per device: the (sharding, device) pair `batched_device_put` takes, and the sharding result
# handlers take; made on first use.
_put_targets: dict[Any, tuple[_Sharding, Any]] = {}
_sharding_cache: dict[Any, Any] = {}


def sharding(dev: Device) -> Any:
    """The single-device sharding of `dev` (cached)."""
    s = _sharding_cache.get(dev)
    if s is None:
        s = _sharding_cache[dev] = compat.SingleDeviceSharding(dev)
    return s


def device_put(x: np.ndarray, dev: Device | None = None) -> Buffer:
    """Copy a NumPy array to a new buffer on `dev` (None: the default device, uncommitted;
    a device named here: committed to it, so operations with it run there).

    jaxlib's `batched_device_put`, not its DLPack import: that one builds the buffer's aval
    from JAX's Python core, so the first transfer imported the whole JAX package (~0.3 s and
    ~36 MiB); mjcore never imports it.
    """
    global several_devices_in_use
    committed = dev is not None
    if dev is None:
        dev = _device if _open_overrides == 0 and _device is not None else device()
    target = _put_targets.get(dev)
    if target is None:
        if dev not in backend_of(dev).device_lists:  # (ValueError: not a device of ours)
            raise ValueError(
                f"mjcore.device_put: {dev!r} belongs to process {dev.process_index}, not to "
                f"this one ({dev.client.process_index()}); put data only on "
                "mjcore.local_devices() (or build a global array with "
                "mjcore.make_array_from_process_local_data)"
            )
        target = _put_targets[dev] = (_Sharding(dev), dev)
    if committed and not several_devices_in_use and not _one_device:
        _start_placing()
    aval = _HostAval(x.shape, x.dtype)
    try:
        return compat.batched_device_put(aval, target[0], x, target[1], committed)
    except compat.JaxRuntimeError as err:
        if "RESOURCE_EXHAUSTED" in str(err):  # a lazy host value too big to materialise
            raise MemoryError(
                f"Unable to allocate {x.nbytes} bytes for an array with shape {x.shape} and "
                f"data type {x.dtype} on {dev}"
            ) from err
        raise


def is_committed(buf: Buffer) -> bool:
    """Whether `buf` was placed on its device explicitly (and operations with it run there)."""
    return bool(buf._committed)


def buffer_device(buf: Buffer) -> Device:
    """The device holding `buf`."""
    return buf._sharding._device


def copy_to_device(buf: Buffer, aval: Any, dev: Device) -> Buffer:
    """`buf` committed to device `dev`: a copy (through the host), unless it is already
    committed there."""
    if buffer_device(buf) == dev and is_committed(buf):
        return buf
    return device_put(np.asarray(to_numpy(buf), aval.dtype), dev)


class _HostAval(NamedTuple):
    """What a buffer made by `device_put` reports as its `aval`: mjcore's avals come from the
    callers (a weak type is not the buffer's business)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False


# DLPack's device types (dlpack.h's DLDeviceType) of the platforms a buffer can be on.
DLPACK_DEVICE_TYPES = {"cpu": 1, "cuda": 2, "gpu": 2}


def dlpack_device(buf: Buffer) -> tuple[int, int]:
    """(DLPack device type, device index) of the memory holding `buf`: (1, 0) for the CPU,
    (2, the GPU's ordinal) for a CUDA device."""
    dev = buffer_device(buf)
    if dev.platform == "cpu":
        return (1, 0)
    return (DLPACK_DEVICE_TYPES[dev.platform], dev.local_hardware_id)


class _DLPackExport:
    """A DLPack capsule dressed as the producer `numpy.from_dlpack` asks for."""

    __slots__ = ("capsule",)

    def __init__(self, capsule: Any):
        self.capsule = capsule

    def __dlpack__(self, stream: Any = None, **_: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU


def to_dlpack(buf: Buffer, stream: int | None = None) -> Any:
    """A DLPack capsule of `buf`'s memory on its own device (no copy)."""
    return compat.buffer_to_dlpack(buf, stream)


def to_numpy(buf: Buffer) -> np.ndarray:
    """A read-only NumPy array of a device buffer's contents (CPU memory: a view, no copy;
    other devices: a host copy).

    Through DLPack on the CPU, and through a host callback elsewhere: jaxlib's own host
    conversion imports `jax` (see `device_put`). A view holds a reference on the buffer, which
    outlives any Array that had it.
    """
    if not _cpu_only and buf._sharding._device.platform != "cpu":
        return _copy_to_host(buf)
    try:
        out = np.from_dlpack(_DLPackExport(compat.buffer_to_dlpack(buf)))
    except (RuntimeError, BufferError):  # "Unsupported dtype in DLTensor": no DLPack bfloat16
        if buf.aval.dtype != dtypes.bfloat16:
            raise
        out = _read_cpu_memory(buf, buf.aval.dtype, tuple(buf.aval.shape))
    out.flags.writeable = False
    return out


def _read_cpu_memory(buf: Buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """A copy of a (dense, row-major) CPU buffer's memory as a NumPy array."""
    buf.block_until_ready()
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0:
        return np.empty(shape, dtype)
    memory = (ctypes.c_char * (size * dtype.itemsize)).from_address(buf.unsafe_buffer_pointer())
    return np.frombuffer(memory, dtype).reshape(shape).copy()  # type: ignore[call-overload]


def read_bool(buf: Buffer) -> bool:
    """The value of a 0-d bool buffer, waiting for it to be computed. On the CPU it is read
    from the buffer's memory: ~0.3 µs against `to_numpy`'s ~1.6 µs (a DLPack export and a
    NumPy array), on every XLA-run eager call that checks its finiteness flag."""
    if not _cpu_only and buf._sharding._device.platform != "cpu":
        return bool(_copy_to_host(buf))
    buf.block_until_ready()
    # XLA's PRED is one byte, 0 or 1; the buffer (held here) owns the memory
    return ctypes.c_bool.from_address(buf.unsafe_buffer_pointer()).value


# A float is an infinity or a NaN iff its exponent bits are all set: (the unsigned integer
# type of its bits, the exponent's mask) per IEEE float dtype.
_EXPONENT_BITS = {
    np.dtype(np.float16): (ctypes.c_uint16, 0x7C00),
    dtypes.bfloat16: (ctypes.c_uint16, 0x7F80),
    np.dtype(np.float32): (ctypes.c_uint32, 0x7F80_0000),
    np.dtype(np.float64): (ctypes.c_uint64, 0x7FF0_0000_0000_0000),
}


def all_finite(buf: Buffer, dtype: np.dtype, size: int) -> bool:
    """Whether an inexact buffer of `size` elements holds no infinity or NaN, waiting for it
    to be computed. On the CPU its memory is read in place, while `buf` (held here) owns it;
    one float element by its exponent bits, without NumPy: right after a large XLA
    computation has evicted the caches, a DLPack view costs ~20 µs and `np.isfinite` of one
    element ~15 µs (measured after a float32[1e6] sum), reading the bits ~3 µs."""
    if not _cpu_only and buf._sharding._device.platform != "cpu":
        return bool(np.isfinite(_copy_to_host(buf)).all())
    buf.block_until_ready()
    if size == 0:
        return True
    address = buf.unsafe_buffer_pointer()
    bits = _EXPONENT_BITS.get(dtype) if size == 1 else None
    if bits is not None:
        int_type, mask = bits
        return int_type.from_address(address).value & mask != mask
    memory = (ctypes.c_char * (size * dtype.itemsize)).from_address(address)
    return bool(np.isfinite(np.frombuffer(memory, dtype)).all())  # type: ignore[call-overload]


# (device, shape, dtype) -> the program that hands a buffer on that device to Python.
_host_copy_programs: dict[Any, Any] = {}
_HOST_COPY_PROGRAMS_MAX = 256


def _copy_to_host(buf: Buffer) -> np.ndarray:
    """Copy a non-CPU buffer to a new NumPy array.

    A program whose one op is a host callback receiving the buffer: the device's runtime
    copies the operand to host memory for the callback, which keeps a copy (jaxlib's direct
    device-to-host copy needs `jax`'s Python types).
    """
    aval = buf.aval
    dev = buffer_device(buf)
    key = (dev, tuple(aval.shape), np.dtype(aval.dtype))
    entry = _host_copy_programs.get(key)
    if entry is None:
        if len(_host_copy_programs) >= _HOST_COPY_PROGRAMS_MAX:
            _host_copy_programs.clear()
        box: list[np.ndarray] = []

        def receive(x: np.ndarray) -> tuple[()]:
            box.append(np.array(x, copy=True))
            return ()

        t = tensor_type(_HostAval(tuple(aval.shape), np.dtype(aval.dtype)))
        kind = "cpu" if dev.platform == "cpu" else "gpu"
        text = (
            "module @mjcore_host_copy {\n"
            f"  func.func public @main(%arg0: {t}) {{\n"
            '    "stablehlo.custom_call"(%arg0) {call_target_name = '
            f'"xla_ffi_python_{kind}_callback", api_version = 4 : i32, has_side_effect = true, '
            "backend_config = {index = 0 : ui64}} : "
            f"({t}) -> ()\n"
            "    return\n  }\n}\n"
        )
        entry = _host_copy_programs[key] = (Program(text, [], [receive], dev, False), box)
    program, box = entry
    program.run([buf])
    out = box.pop()
    box.clear()
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


# Executables by (module text without its name, device): the same program compiles once, whether
# an eager primitive runs it (`module @eager_sin`), `jit` of a one-primitive function lowers it
# (`module @jit_sin`) or two `jit` objects wrap the same function. The module's name only names
# the executable in XLA's dumps and profiles, so a hit may carry another program's name.
# LRU-bounded (a cached executable keeps its code mapped; see the budget below) and emptied by
# `clear_caches`. Modules with host callbacks are not cached: their executable is bound to
# the Python callables, not only to the text.
_EXECUTABLE_CACHE_SIZE = 2048
_executables: OrderedDict[tuple[str, Any], Executable] = OrderedDict()
_executables_lock = threading.Lock()
_MODULE_NAME = re.compile(r"module @[\w.$-]+")


def _executable_key(module_text: str, dev: Device) -> tuple[str, Any]:
    m = _MODULE_NAME.match(module_text)
    return (module_text[m.end() :] if m else module_text), dev


@clear_at_exit
def _clear_executables() -> None:
    with _executables_lock:
        _executables.clear()


def compile_text(
    module_text: str,
    host_callbacks: Sequence[Callable[..., Any]] = (),
    dev: Device | None = None,
) -> Executable:
    """Compile a StableHLO module (text form) for device `dev` (None: the default device).

    `host_callbacks` are the Python functions the module's `xla_ffi_python_*_callback`
    custom calls name by index (see `mjcore.backend.custom_call.python_callback`). Modules
    without host callbacks that differ at most in their name compile once per device (an LRU
    cache, emptied by `clear_caches`).
    """
    if dev is None:
        dev = device()
    if host_callbacks:
        return _compile(module_text, host_callbacks, dev)
    key = _executable_key(module_text, dev)
    with _executables_lock:
        executable = _executables.get(key)
        if executable is not None:
            _executables.move_to_end(key)
            return executable
    executable = _compile(module_text, (), dev)
    with _executables_lock:
        _executables[key] = executable
        if len(_executables) > _EXECUTABLE_CACHE_SIZE:
            _executables.popitem(last=False)
    return executable


def _compile(
    module_text: str, host_callbacks: Sequence[Callable[..., Any]], dev: Device
) -> Executable:
    global _compiles_since_clear
    b = backend_of(dev)
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
            return compat.compile_and_load(
                b.client, _parse_module(module_text), b.device_lists[dev], list(host_callbacks)
            )
        return compat.compile_and_load(b.client, module_text, b.device_lists[dev])
    except compat.JaxRuntimeError as err:
        raise RuntimeError(
            "mjcore internal error: XLA rejected a lowered module. Please report it with this "
            f"module:\n{module_text}"
        ) from err


_mlir_context: Any = None


def _parse_module(module_text: str) -> Any:
    """The MLIR module object of a StableHLO text, in a context with the dialects registered
    (made on first use: only modules with host callbacks need the MLIR bindings)."""
    global _mlir_context
    with _lock:
        if _mlir_context is None:
            _mlir_context = compat.mlir_context()
        return compat.parse_mlir(_mlir_context, module_text)


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


_lowering_target = threading.local()


def target_platform() -> str | None:
    """The platform `lowering_for` names in this thread ('cpu' or 'cuda'), else None (lower
    for the default device)."""
    return getattr(_lowering_target, "platform", None)


@contextlib.contextmanager
def lowering_for(platform: str) -> Iterator[None]:
    """Lower for `platform` ('cpu' or 'cuda') inside the block, whatever the default device."""
    saved = target_platform()
    _lowering_target.platform = platform
    try:
        yield
    finally:
        _lowering_target.platform = saved


def _lowering_name(dev: Device) -> str:
    return "cuda" if backend_of(dev).platform == "gpu" else "cpu"


# Called with each module text `Program` compiles (tests count and inspect the compiles).
compile_hooks: list[Callable[[str], None]] = []


class Program:
    """A compiled module plus the result handlers that wrap its outputs as device buffers.

    `execute_sharded(...).consume_with_handlers(...)` skips jaxlib's Python `execute` wrapper,
    which costs more than the execution itself for small ops.
    """

    __slots__ = ("executable", "handlers", "text", "host_callbacks", "device", "relower")

    def __init__(
        self,
        module_text: str,
        out_avals: list[Any],
        host_callbacks: Sequence[Callable[..., Any]] = (),
        dev: Device | None = None,
        committed: bool = False,
        relower: Callable[[], tuple[str, Sequence[Callable[..., Any]]]] | None = None,
    ):
        self.text = module_text
        self.host_callbacks = tuple(host_callbacks)
        # (module text, host callbacks) lowered again, for a device of another platform when
        # the text calls one platform's kernels (LAPACK/cuSOLVER, host callbacks)
        self.relower = relower
        self.device = device() if dev is None else dev
        executable = compile_text(module_text, self.host_callbacks, self.device)
        out_sharding = sharding(self.device)
        self.handlers = [compat.result_handler(a, out_sharding, committed) for a in out_avals]
        if several_devices_in_use:
            executable = _PlacingExecutable(self, executable, out_avals, committed)
        self.executable = executable
        for hook in compile_hooks:
            hook(module_text)

    def run(self, buffers: list[Buffer]) -> list[Buffer]:
        """Execute on device buffers; outputs stay on the device.

        Raises:
          RuntimeError: if a buffer was deleted by donation to an earlier call.
        """
        try:
            if self.host_callbacks:
                return self._run_with_callbacks(buffers)
            return self.executable.execute_sharded(buffers).consume_with_handlers(self.handlers)
        except compat.JaxRuntimeError as err:
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


class _PlacingExecutable:
    """A program's executable once arrays live on several devices: each call runs on the
    device its committed inputs are on (moving uncommitted ones there), compiling the
    program for that device on first use; committed inputs on two devices are an error.
    Quacks like jaxlib's executable for the callers' direct `execute_sharded` paths."""

    def __init__(self, program: Program, executable: Any, out_avals: list[Any], committed: bool):
        self.program = program
        self.out_avals = out_avals
        self.per_placement = {(program.device, committed): (executable, program.handlers)}

    def _for(self, dev: Device, committed: bool) -> tuple[Any, list[Any]]:
        entry = self.per_placement.get((dev, committed))
        if entry is None:
            p = self.program
            text: str = p.text
            callbacks: Sequence[Callable[..., Any]] = p.host_callbacks
            if not _portable(p, dev):
                if p.relower is None:
                    _check_portable(p, dev)  # raises
                else:
                    with lowering_for(_lowering_name(dev)):
                        text, callbacks = p.relower()
            exe = compile_text(text, tuple(callbacks), dev)
            out_sharding = sharding(dev)
            handlers = [compat.result_handler(a, out_sharding, committed) for a in self.out_avals]
            entry = self.per_placement[(dev, committed)] = (exe, handlers)
        return entry

    def execute_sharded(self, buffers: list[Buffer], with_tokens: bool = False) -> Any:
        dev = None
        first = 0
        for i, buf in enumerate(buffers):
            if is_committed(buf):
                d = buffer_device(buf)
                if dev is None:
                    dev, first = d, i
                elif d != dev:
                    a, b = buffers[first].aval, buf.aval
                    raise ValueError(
                        "mjcore: a computation received arrays committed to different "
                        f"devices: argument {first} ({a.dtype}{list(a.shape)}) is on {dev} and "
                        f"argument {i} ({b.dtype}{list(b.shape)}) is on {d}. Move one with "
                        "mjcore.device_put(x, device) or x.to_device(device)."
                    )
        if dev is None:  # only uncommitted inputs: the program runs on the default device
            dev = device()
            exe, handlers = self._for(dev, False)
        else:
            exe, handlers = self._for(dev, True)
        placed = [
            b if buffer_device(b) == dev else device_put(np.asarray(to_numpy(b)), dev)
            for b in buffers
        ]
        return _PlacedResults(exe.execute_sharded(placed, with_tokens=with_tokens), handlers)


# Custom-call targets that exist on one platform only (the kernels a module was lowered to).
_PLATFORM_KERNELS = ("lapack_", "cusolver_", "xla_ffi_python_")


def _portable(program: Program, dev: Device) -> bool:
    """Whether `program`, lowered for its device's platform, can run on `dev`: a module that
    calls no platform's kernels runs anywhere."""
    have = backend_of(program.device).platform
    want = backend_of(dev).platform
    return have == want or not any(k in program.text for k in _PLATFORM_KERNELS)


def _check_portable(program: Program, dev: Device) -> None:
    """Raise when `program` names kernels that `dev`'s platform lacks."""
    have = backend_of(program.device).platform
    want = backend_of(dev).platform
    if not _portable(program, dev):
        raise NotImplementedError(
            f"mjcore: this computation was lowered for the {have!r} platform and calls its "
            f"kernels (LAPACK/cuSOLVER or a host callback), so it cannot run on {dev} "
            f"({want!r}); put its arrays on one platform (x.to_device(...))"
        )


class _PlacedResults:
    """Execution results wrapped with the handlers of the device they ran on."""

    __slots__ = ("results", "handlers")

    def __init__(self, results: Any, handlers: list[Any]):
        self.results = results
        self.handlers = handlers

    def consume_with_handlers(self, _handlers: Any) -> list[Buffer]:
        return self.results.consume_with_handlers(self.handlers)  # type: ignore[no-any-return]

    def consume_token(self) -> Any:
        return self.results.consume_token()


def deleted_error(buf: Buffer) -> RuntimeError:
    """The error for using a buffer that donation (`jit(..., donate_argnums=...)`) consumed."""
    aval = buf.aval  # jaxlib's C++ array type has no `shape`/`dtype` unless `jax` is imported
    shape = ",".join(str(d) for d in aval.shape)
    return RuntimeError(
        f"Array has been deleted with shape={aval.dtype}[{shape}]: it was donated to a "
        "jit-compiled function (donate_argnums), which reused its buffer for an output. Use "
        "that function's result instead, or do not donate the argument."
    )


RuntimeError_ = compat.JaxRuntimeError


# --- several devices: SPMD programs and arrays made of shards -------------------------------


class _JaxlibSharding(compat.GSPMDSharding):
    """The jaxlib sharding a multi-device buffer carries (devices + HLO sharding, for one
    rank), with the methods jaxlib calls on it (JAX adds them in Python); `.mj` is the mjcore
    sharding (`mjcore.sharding`) it was made from."""

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind  # type: ignore[no-any-return]

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> Any:
        return self._hlo_sharding


_jaxlib_shardings: dict[tuple[Any, int], _JaxlibSharding] = {}


def jaxlib_sharding(s: Any, ndim: int) -> _JaxlibSharding:
    """The jaxlib sharding of mjcore sharding `s` for arrays of rank `ndim` (cached)."""
    key = (s, ndim)
    out = _jaxlib_shardings.get(key)
    if out is None:
        hlo = compat.HloSharding.from_string(s._hlo_sharding_text(ndim))
        out = _JaxlibSharding(tuple(s._device_assignment), hlo)
        out.mj = s
        if len(_jaxlib_shardings) >= 1024:  # bounded: shardings are few in real programs
            _jaxlib_shardings.clear()
        _jaxlib_shardings[key] = out
    return out


def put_sharded(value: np.ndarray, s: Any, aval: Any) -> Buffer:
    """A multi-device buffer holding `value` laid out as sharding `s` says: each device gets
    a copy of its slice (replicated slices are copied to each of their devices)."""
    index = s.devices_indices_map(value.shape)
    shards = [
        device_put(np.ascontiguousarray(value[index[d]]), d) for d in s._addressable_assignment
    ]
    return compat.assemble_array(aval, jaxlib_sharding(s, value.ndim), shards)


def assemble(aval: Any, s: Any, shards: list[Buffer]) -> Buffer:
    """A multi-device buffer from single-device `shards`, one per device of `s` in its device
    order (each already holding that device's slice)."""
    return compat.assemble_array(aval, jaxlib_sharding(s, len(aval.shape)), shards)


def shards_of(buf: Buffer) -> list[Buffer]:
    """The single-device buffers of a multi-device buffer, in its sharding's device order."""
    return list(buf._arrays)


def gather_to_numpy(buf: Buffer, s: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """The whole value of a multi-device buffer, assembled on the host from its shards (each
    index written once; replicas are skipped)."""
    out = np.empty(shape, dtype)
    index = s.devices_indices_map(shape)
    done: set[Any] = set()
    for dev, shard in zip(s._addressable_assignment, shards_of(buf), strict=True):
        idx = index[dev]
        key = tuple((sl.start, sl.stop) for sl in idx)
        if key not in done:
            done.add(key)
            out[idx] = to_numpy(shard)
    if len(done) < len({tuple((sl.start, sl.stop) for sl in i) for i in index.values()}):
        raise RuntimeError(
            f"Fetching the value of an Array of shape {shape} that spans devices of other "
            f"processes is not possible: this process holds only some of its shards ({s}). "
            "Read its addressable_shards, or lay it out replicated (e.g. jit with "
            "out_shardings=NamedSharding(mesh, P())) first."
        )
    out.flags.writeable = False
    return out


def compile_spmd(
    module_text: str,
    devices: tuple[Device, ...],
    propagate_outputs: Sequence[bool],
    shardy: bool = True,
) -> Executable:
    """Compile a StableHLO module whose arguments and results carry sharding attributes
    (Shardy's `sdy.sharding` when `shardy`, else GSPMD's `mhlo.sharding`) for `devices`
    (logical device i of those attributes is `devices[i]`), partitioned by XLA's SPMD
    partitioner; XLA picks output i's sharding where `propagate_outputs[i]`."""
    global _compiles_since_clear
    b = backend_of(devices[0])
    _compiles_since_clear += 1
    if _over_budget() and _clearing.acquire(blocking=False):
        try:
            clear_caches()
            gc.collect()
        finally:
            _clearing.release()
    opts = compat.spmd_compile_options(
        tuple(d.id for d in devices), list(propagate_outputs), shardy
    )
    try:
        exe = compat.compile_spmd(b.client, module_text, tuple(devices), opts)
    except compat.JaxRuntimeError as err:
        raise RuntimeError(
            "mjcore internal error: XLA rejected a lowered SPMD module. Please report it with "
            f"this module:\n{module_text}"
        ) from err
    for hook in compile_hooks:
        hook(module_text)
    return exe


class SpmdProgram:
    """A module compiled for several devices; runs on multi-device buffers (one per
    argument, each laid out as the module's argument sharding says) and returns
    multi-device buffers laid out as `out_shardings` (the mjcore shardings of the outputs,
    read back from the executable where XLA chose them)."""

    __slots__ = ("executable", "text", "devices", "out_shardings", "handlers")

    def __init__(
        self,
        module_text: str,
        devices: tuple[Device, ...],
        out_avals: Sequence[Any],
        out_shardings: Sequence[Any | None],
        to_mj_sharding: Callable[[Any, int], Any],
        shardy: bool = True,
    ):
        self.text = module_text
        self.devices = devices
        propagate = [s is None for s in out_shardings]
        self.executable = compile_spmd(module_text, devices, propagate, shardy)
        chosen = compat.output_hlo_shardings(self.executable)
        shardings = []
        for i, (s, aval) in enumerate(zip(out_shardings, out_avals, strict=True)):
            if s is None:  # (XLA reports none for a one-device program: replicated)
                s = to_mj_sharding(chosen[i] if i < len(chosen) else None, len(aval.shape))
            shardings.append(s)
        self.out_shardings = shardings
        self.handlers = [
            compat.result_handler(a, jaxlib_sharding(s, len(a.shape)), True)
            for a, s in zip(out_avals, shardings, strict=True)
        ]

    def run(self, buffers: list[Buffer]) -> list[Buffer]:
        """Execute on multi-device buffers; outputs stay on the devices."""
        try:
            return self.executable.execute_sharded(buffers).consume_with_handlers(  # type: ignore[no-any-return]
                self.handlers
            )
        except compat.JaxRuntimeError as err:
            for buf in buffers:
                if buf.is_deleted():
                    raise deleted_error(buf) from err
            raise


def hlo_sharding_equals(text: str, hlo: Any) -> bool:
    """Whether the HLO sharding text `text` is the sharding `hlo` (as XLA reports it)."""
    return bool(compat.HloSharding.from_string(text) == hlo)


def hlo_tiling(hlo: Any) -> tuple[list[int], list[int], bool] | None:
    """(tile dims, logical device ids, whether the last dim counts replicas) of a tiled HLO
    sharding; None for other kinds (maximal, manual, subgroups)."""
    if not hlo.is_tiled() or hlo.subgroup_types():
        return None
    return (
        list(hlo.tile_assignment_dimensions()),
        list(hlo.tile_assignment_devices()),
        bool(hlo.replicate_on_last_tile_dim()),
    )
