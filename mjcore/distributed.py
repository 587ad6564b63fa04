"""Many processes as one program, as `jax.distributed`: jaxlib's distributed runtime (a
coordination service in process 0, a client in every process) joins the processes, and the CPU
client made afterwards sees every process's devices and runs collectives over gloo (TCP).

Each process calls `initialize` before its first operation; from then on `mjcore.devices()`
lists every process's devices, `mjcore.local_devices()` this process's, and a program compiled
for the global devices runs in every process on its own shards, XLA's collectives (gloo)
carrying data between them. Nothing of ours is on the wire.
"""

from __future__ import annotations

import atexit
import errno
import socket
import threading
import time
from collections.abc import Sequence
from typing import Any

from mjcore.backend import client as backend
from mjcore.backend import compat

__all__ = ["initialize", "is_initialized", "shutdown"]


class _State:
    """What `initialize` started in this process."""

    def __init__(self) -> None:
        self.service: Any = None  # the coordination service (process 0 only)
        self.client: Any = None  # this process's runtime client
        self.process_id = 0
        self.num_processes = 1
        self.coordinator_address: str | None = None
        self.local_device_ids: list[int] | None = None


_state = _State()
_lock = threading.Lock()


def is_initialized() -> bool:
    """Whether `initialize` has joined this process to others (and `shutdown` has not yet
    left)."""
    return _state.client is not None


def _check_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"mjcore.distributed.initialize: {name} must be an int, got {value!r} of type "
            f"{type(value).__name__}"
        )
    return value


def _split_address(address: str) -> tuple[str, int]:
    """('localhost', 1234) for 'localhost:1234' ('[::1]:1234' too)."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(
            "mjcore.distributed.initialize: coordinator_address must be 'host:port' (e.g. "
            f"'10.0.0.1:1234' or 'localhost:1234'), got {address!r}"
        )
    return host.strip("[]"), int(port)


def _check_port_free(bind_address: str) -> None:
    """Raise when the coordinator's port is taken (jaxlib's service, failing to bind,
    crashes the process instead of raising)."""
    host, port = _split_address(bind_address)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC binds
            s.bind((host, port))
    except OSError as err:
        if err.errno not in (errno.EADDRINUSE, errno.EACCES):
            return  # (no IPv6 here, an unknown host, ...: gRPC may still manage; let it try)
        raise RuntimeError(
            f"mjcore.distributed.initialize: process 0 cannot start the coordinator on "
            f"{bind_address}: {err.strerror or err}. Choose a free port for "
            "coordinator_address (the same in every process)."
        ) from err


def _wait_for_coordinator(address: str, timeout: float) -> None:
    """Return once the coordinator at `address` accepts TCP connections.

    jaxlib's client, left to find a dead coordinator itself, ends the whole process when its
    own deadline passes; probing first turns that into an exception here.

    Raises:
      TimeoutError: when nothing accepts connections there within `timeout` seconds.
    """
    host, port = _split_address(address)
    deadline = time.monotonic() + timeout
    last: OSError | None = None
    while True:
        try:
            with socket.create_connection((host, port), timeout=max(0.1, min(1.0, timeout))):
                return
        except OSError as err:  # refused (not listening yet), unreachable, unknown host
            last = err
        if time.monotonic() >= deadline:
            raise TimeoutError(
                f"mjcore.distributed.initialize: no coordinator answered at {address} within "
                f"initialization_timeout={timeout:g} s ({last}). Start process 0 (which runs "
                "the coordinator) with the same coordinator_address, check the host and port, "
                "or raise initialization_timeout."
            ) from last
        time.sleep(0.05)


def initialize(
    coordinator_address: str,
    num_processes: int,
    process_id: int,
    local_device_ids: int | Sequence[int] | None = None,
    initialization_timeout: int = 300,
    heartbeat_timeout_seconds: int = 100,
    shutdown_timeout_seconds: int = 300,
    coordinator_bind_address: str | None = None,
) -> None:
    """Join this process to `num_processes` processes that run one program, as
    `jax.distributed.initialize`. Call it in every process before any other mjcore operation.

    Process 0 runs the coordination service at `coordinator_address` (bound on every interface
    at that port unless `coordinator_bind_address` says otherwise); every process connects to
    it, and waits until all have. The CPU client then sees every process's devices
    (`mjcore.devices()`; this process's are `mjcore.local_devices()`) and runs XLA's
    collectives between processes over gloo (TCP). Each process has `set_cpu_device_count`'s
    number of CPU devices (default 1).

    Args:
      coordinator_address: 'host:port' of process 0, the same in every process.
      num_processes: how many processes take part.
      process_id: this process's index, 0 to num_processes - 1 (dense).
      local_device_ids: accepted as in JAX, where it restricts a process's visible GPUs; the
        CPU platform has no such restriction, so here it is only recorded.
      initialization_timeout: seconds to wait for the coordinator and the other processes.
      heartbeat_timeout_seconds: a process not heard from for this long counts as dead (and
        ends the others, as in JAX).
      shutdown_timeout_seconds: how long `shutdown` waits for the other processes.
      coordinator_bind_address: where process 0's service listens (default '[::]:port').

    Raises:
      RuntimeError: when called twice, or after the first operation started the backends, or
        (process 0) when the coordinator's port is taken.
      TypeError: for a non-int process count or id.
      ValueError: for an id outside 0..num_processes-1 or a malformed address.
      TimeoutError: when no coordinator answers within `initialization_timeout` seconds.
    """
    for name, value in (
        ("initialization_timeout", initialization_timeout),
        ("heartbeat_timeout_seconds", heartbeat_timeout_seconds),
        ("shutdown_timeout_seconds", shutdown_timeout_seconds),
    ):
        if _check_int(name, value) < 1:
            raise ValueError(
                f"mjcore.distributed.initialize: {name} must be at least 1 (seconds), got {value}"
            )
    num_processes = _check_int("num_processes", num_processes)
    process_id = _check_int("process_id", process_id)
    if num_processes < 1:
        raise ValueError(
            f"mjcore.distributed.initialize: num_processes must be positive, got {num_processes}"
        )
    if not 0 <= process_id < num_processes:
        raise ValueError(
            f"mjcore.distributed.initialize: process_id must be in 0..{num_processes - 1} "
            f"(num_processes={num_processes}), got {process_id}"
        )
    if not isinstance(coordinator_address, str):
        raise TypeError(
            "mjcore.distributed.initialize: coordinator_address must be a 'host:port' string, "
            f"got {coordinator_address!r}"
        )
    _, port = _split_address(coordinator_address)
    if isinstance(local_device_ids, int):
        local_device_ids = [local_device_ids]
    with _lock:
        if _state.client is not None:
            raise RuntimeError(
                "mjcore.distributed.initialize should only be called once (this process is "
                f"already process {_state.process_id} of {_state.num_processes}); call "
                "mjcore.distributed.shutdown() first to start again"
            )
        if backend.started():
            raise RuntimeError(
                "mjcore.distributed.initialize must be called before any mjcore operation: "
                "the backends have already started (here with one process). Call it first "
                "thing in the program, before creating arrays or asking for devices."
            )
        service = None
        if process_id == 0:
            bind = coordinator_bind_address or f"[::]:{port}"
            _check_port_free(bind)
            service = compat.distributed_service(
                bind, num_processes, heartbeat_timeout_seconds, shutdown_timeout_seconds
            )
        try:
            _wait_for_coordinator(coordinator_address, float(initialization_timeout))
            runtime_client = compat.distributed_client(
                coordinator_address,
                process_id,
                initialization_timeout,
                heartbeat_timeout_seconds,
                shutdown_timeout_seconds,
            )
            # Blocks until every process has connected (or jaxlib's deadline ends the process,
            # with XLA's message naming the processes that never came).
            runtime_client.connect()
        except BaseException:
            if service is not None:
                service.shutdown()
            raise
        _state.service, _state.client = service, runtime_client
        _state.process_id, _state.num_processes = process_id, num_processes
        _state.coordinator_address = coordinator_address
        _state.local_device_ids = None if local_device_ids is None else list(local_device_ids)
        backend.set_distributed((runtime_client, process_id, num_processes))


def shutdown() -> None:
    """Leave the distributed runtime, as `jax.distributed.shutdown`: drop this process's
    backends (and with them every array and compiled program), then disconnect, waiting for
    the other processes to do the same. A no-op when `initialize` was not called. Later
    operations start a one-process backend, or `initialize` may be called again."""
    with _lock:
        if _state.client is None:
            return
        # The CPU client's gloo collectives use the runtime client: release them first.
        backend.release_backends()
        backend.set_distributed(None)
        runtime_client, service = _state.client, _state.service
        _state.client = _state.service = None
        _state.process_id, _state.num_processes = 0, 1
        _state.coordinator_address = _state.local_device_ids = None
        try:
            runtime_client.shutdown()  # a barrier: every process leaves together
        finally:
            if service is not None:
                service.shutdown()


# Registered after `client`'s own exit hook, so it runs before it (atexit is last in, first
# out), as JAX's exit handler leaves the runtime after clearing its backends.
atexit.register(shutdown)
