"""Platform selection (`mjcore/backend/platforms.py`) with fake plugin discovery, and the
device API with two CPU devices (in a fresh interpreter: the test process's backends have
started with one)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import mjcore
from mjcore.backend import compat, platforms
from mjcore.backend.platforms import Plugin, Registry, parse_platforms, select_platforms

ROOT = Path(__file__).resolve().parent.parent
CUDA = Plugin("cuda", "/fake/xla_cuda_plugin.so", "jax_cuda13_plugin", compat.JAXLIB_VERSION)


@pytest.mark.parametrize(
    "text, want",
    [
        (None, None),
        ("", None),
        ("cpu", ["cpu"]),
        ("cuda,cpu", ["cuda", "cpu"]),
        ("GPU, cpu", ["cuda", "cpu"]),
        ("gpu,cuda", ["cuda"]),
    ],
)
def test_parse_platforms(text, want):
    assert parse_platforms(text) == want


def test_parse_platforms_rejects_unknown_names():
    with pytest.raises(RuntimeError, match="unknown platform 'tpu' in jax_platforms='tpu,cpu'"):
        parse_platforms("tpu,cpu")


@pytest.mark.parametrize(
    "requested, plugins, want",
    [
        (None, [], ["cpu"]),
        (None, [CUDA], ["cuda", "cpu"]),  # default: the GPU when its plugin is there
        (["cpu"], [CUDA], ["cpu"]),
        (["cpu", "cuda"], [CUDA], ["cpu", "cuda"]),
    ],
)
def test_select_platforms(requested, plugins, want):
    assert select_platforms(requested, plugins) == want


def test_requesting_cuda_without_its_plugin_names_what_to_install():
    with pytest.raises(RuntimeError, match="no CUDA plugin .*jax-cuda13-plugin=="):
        select_platforms(["cuda", "cpu"], [])


def test_discovery_keeps_only_plugins_of_jaxlib_s_version(monkeypatch):
    versions = {"good_kernels": compat.JAXLIB_VERSION, "old_kernels": "0.9.0"}
    monkeypatch.setattr(
        compat, "CUDA_PLUGINS", (("p.old", "old_kernels"), ("p.good", "good_kernels"), ("p.x", "x"))
    )
    monkeypatch.setattr(compat, "plugin_version", versions.get)
    monkeypatch.setattr(compat, "plugin_library", lambda pkg: f"/{pkg}/xla_cuda_plugin.so")
    with pytest.warns(RuntimeWarning, match="old_kernels 0.9.0 is installed, but jaxlib is"):
        found = platforms.discover_plugins()
    assert found == [
        Plugin("cuda", "/p.good/xla_cuda_plugin.so", "good_kernels", compat.JAXLIB_VERSION)
    ]


def test_no_plugin_is_found_on_this_machine_without_cuda_packages():
    if any(compat.plugin_version(k) for _, k in compat.CUDA_PLUGINS):
        pytest.skip("a CUDA plugin is installed here")
    assert platforms.discover_plugins() == []


class _FakeClient:
    def __init__(self, platform: str):
        self.platform = platform

    def local_devices(self):
        return [f"{self.platform}:0"]


def _fake_start(failing=()):
    started = []

    def start(platform, plugins, cpu_devices):
        started.append(platform)
        if platform in failing:
            raise OSError(f"cannot load {platform}")
        b = platforms.Backend.__new__(platforms.Backend)
        b.platform, b.client, b.devices, b.device_lists = platform, None, [f"{platform}:0"], {}
        return b

    return start, started


def test_registry_starts_the_selected_platforms_default_first():
    start, started = _fake_start()
    reg = Registry(lambda: None, discover=lambda: [CUDA], start=start)
    assert not reg.started()
    assert list(reg.backends()) == ["cuda", "cpu"]
    assert reg.backends() is reg.backends()  # started once
    assert started == ["cuda", "cpu"]
    reg.reset()
    assert not reg.started()


def test_registry_falls_back_to_the_cpu_when_a_discovered_gpu_fails():
    start, _ = _fake_start(failing=("cuda",))
    reg = Registry(lambda: None, discover=lambda: [CUDA], start=start)
    with pytest.warns(RuntimeWarning, match="'cuda' platform failed to start .*cannot load"):
        assert list(reg.backends()) == ["cpu"]


def test_registry_raises_when_a_requested_platform_fails():
    start, _ = _fake_start(failing=("cuda",))
    reg = Registry(lambda: "cuda,cpu", discover=lambda: [CUDA], start=start)
    with pytest.raises(RuntimeError, match="unable to initialize the 'cuda' platform"):
        reg.backends()


def test_this_process_runs_on_the_cpu_backend():
    assert mjcore.default_backend() == "cpu"
    assert mjcore.devices("cpu") == mjcore.devices()
    with pytest.raises(RuntimeError, match="device_count: unknown backend 'tpu'; the started"):
        mjcore.device_count("tpu")


def _run(script: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


_TWO_DEVICES = """
    import numpy as onp
    import pytest
    from mjcore.backend import client
    client.set_cpu_device_count(2)
    import mjcore
    import mjnp as np

    d0, d1 = mjcore.devices()
    assert mjcore.devices("cpu") == [d0, d1] and mjcore.device_count() == 2
    assert str(d1) == "cpu:1" or "1" in repr(d1)

    # creation functions' device= places the result; to_device/device_put copy
    y = np.ones(3, device=d1)
    assert y.device == d1 and np.arange(3, device=d1).device == d1
    assert np.zeros((2, 2), device=d1).device == d1 and np.eye(2, device=d1).device == d1
    assert np.asarray([1.0], device=d1).device == d1
    assert np.astype(np.ones(2), np.int8, device=d1).device == d1
    assert np.from_dlpack(onp.ones(2), device=d1).device == d1
    assert np.fft.fftfreq(4, 1.0, d1).device == d1 and np.fft.rfftfreq(4, device=d1).device == d1
    assert np.__array_namespace_info__().devices() == (d0, d1)
    assert y.to_device(d0).device == d0 and y.to_device(d1) is y
    assert mjcore.device_put(onp.ones(2), d1).device == d1
    assert mjcore.device_put(y, d0).device == d0

    # operations run where their committed arguments are; uncommitted ones follow
    x = np.arange(3.0)
    assert x.device == d0
    assert (y * 2).device == d1 and (x + y).device == d1 and np.sin(y).device == d1
    assert onp.asarray(x + y).tolist() == [1.0, 2.0, 3.0]
    f = mjcore.jit(lambda a, b: a @ b)
    assert f(y, x).device == d1 and float(f(y, x)) == 3.0
    g = mjcore.jit(mjcore.grad(lambda a: (a * a).sum()))
    assert g(y).device == d1 and g(y).tolist() == [2.0, 2.0, 2.0]
    solved = np.linalg.solve(np.eye(2, device=d1) * 2.0, np.ones(2, device=d1))
    assert solved.device == d1 and solved.tolist() == [0.5, 0.5]

    # committed arguments on two devices: an error naming both, as JAX
    a = mjcore.device_put(onp.ones(3), d0)
    for op in (lambda: a + y, lambda: mjcore.jit(lambda p, q: p * q)(a, y)):
        with pytest.raises(ValueError, match="committed to different devices.*cpu:0.*cpu:1"):
            op()

    # default_device: new arrays go there
    with mjcore.default_device(d1):
        assert np.zeros(2).device == d1 and (np.ones(2) + 1).device == d1
    assert np.zeros(2).device == d0
    with pytest.raises(RuntimeError, match="already started"):
        client.set_cpu_device_count(4)
    print("OK")
"""


def test_two_cpu_devices_place_ops_and_reject_mixed_committed_devices():
    out = _run(_TWO_DEVICES)
    assert out.returncode == 0 and out.stdout.strip().endswith("OK"), out.stderr[-3000:]


def test_mjcore_platforms_environment_variable():
    script = "import mjcore; print(mjcore.default_backend(), mjcore.devices())"
    out = _run(script, MJCORE_PLATFORMS="cpu")
    assert out.returncode == 0 and out.stdout.split()[0] == "cpu", out.stderr[-2000:]
    if any(compat.plugin_version(k) for _, k in compat.CUDA_PLUGINS):
        return  # the rest needs a machine without the CUDA plugin
    out = _run(script, MJCORE_PLATFORMS="cuda,cpu")
    assert out.returncode != 0 and "no CUDA plugin" in out.stderr, out.stderr[-2000:]
    out = _run(script, MJCORE_PLATFORMS="metal")
    assert out.returncode != 0 and "unknown platform 'metal'" in out.stderr


def test_a_program_with_platform_kernels_does_not_move_across_platforms(monkeypatch):
    from types import SimpleNamespace

    from mjcore.backend import client

    platform_of = {"cpu:0": "cpu", "gpu:0": "cuda"}
    monkeypatch.setattr(client, "backend_of", lambda d: SimpleNamespace(platform=platform_of[d]))
    with_lapack = SimpleNamespace(device="cpu:0", text='call_target_name = "lapack_dgetrf_ffi"')
    plain = SimpleNamespace(device="cpu:0", text="stablehlo.add")
    client._check_portable(plain, "gpu:0")  # pure StableHLO runs anywhere
    client._check_portable(with_lapack, "cpu:0")
    with pytest.raises(NotImplementedError, match="lowered for the 'cpu' platform .*'cuda'"):
        client._check_portable(with_lapack, "gpu:0")


# A program of ~20-100 ms on the CPU: long enough that an asynchronous client's `execute`
# returns well before its result is ready.
_LONG_PROGRAM = textwrap.dedent("""
    import numpy as onp
    import mjcore
    import mjnp as np
    from mjcore.backend import client

    def chain(m):
        return mjcore.lax.fori_loop(0, 40, lambda i, a: np.tanh(a @ m), m)

    f = mjcore.jit(chain)
    m = np.asarray(onp.random.default_rng(0).standard_normal((300, 300)) / 30)
    f(m).block_until_ready()  # compiled
    readiness = [f(m)._dbuf.is_ready() for _ in range(3)]
    want = onp.asarray(f(m))
""")


def test_cpu_programs_run_in_the_calling_thread_unless_async_dispatch_is_asked_for():
    # Default: a one-device CPU program has finished when the call returns (no hand-off to
    # the client's worker threads and back).
    sync = _run(_LONG_PROGRAM + "\nprint(client.get_backend('cpu').asynchronous, readiness)")
    assert sync.returncode == 0, sync.stderr[-3000:]
    assert sync.stdout.split("\n")[-2] == "False [True, True, True]", sync.stdout
    # JAX's flag (or its environment variable) gives JAX's asynchronous dispatch: the call
    # returns before the result is ready, and the values are the same.
    script = _LONG_PROGRAM + textwrap.dedent("""
        values = [onp.asarray(f(m)) for _ in range(2)]
        assert all(onp.array_equal(v, want) for v in values)
        print(client.get_backend('cpu').asynchronous, readiness)
    """)
    for env in ("JAX_CPU_ENABLE_ASYNC_DISPATCH", "MJCORE_CPU_ENABLE_ASYNC_DISPATCH"):
        out = _run(script, **{env: "1"})
        assert out.returncode == 0, out.stderr[-3000:]
        flag, ready = out.stdout.split("\n")[-2].split(" ", 1)
        assert flag == "True" and ready.count("False") >= 2, out.stdout
    out = _run("import mjnp", JAX_CPU_ENABLE_ASYNC_DISPATCH="maybe")
    assert out.returncode != 0
    assert "JAX_CPU_ENABLE_ASYNC_DISPATCH must be a bool, got 'maybe'" in out.stderr


def test_async_dispatch_flag_set_after_the_cpu_backend_started_warns():
    import warnings

    import mjnp as np
    from mjcore.backend import client

    np.ones(2) + 1  # the backends have started
    running = client.get_backend("cpu").asynchronous
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mjcore.config.update("jax_cpu_enable_async_dispatch", running)  # no change: silent
    try:
        with pytest.warns(RuntimeWarning, match="takes effect when the CPU backend starts"):
            mjcore.config.update("jax_cpu_enable_async_dispatch", not running)
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mjcore.config.update("jax_cpu_enable_async_dispatch", running)
    assert client.get_backend("cpu").asynchronous is running


def test_other_python_threads_run_while_a_program_runs_in_the_calling_thread():
    # The calling thread runs the program with the GIL released (as NumPy's large ufunc
    # loops do), so a data-loading thread keeps going meanwhile: it records times inside the
    # program's run, away from its start and end (where a held GIL would still let it run).
    import threading
    import time

    import numpy as onp

    import mjnp as np

    m = np.asarray(onp.random.default_rng(0).standard_normal((300, 300)) / 30)
    seen: list[float] = []
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            seen.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        while not seen:  # the thread is running
            time.sleep(0.001)
        steps = 60
        for _ in range(6):  # a program long enough to see inside, on a fast or a busy machine
            f = mjcore.jit(
                lambda m, n=steps: mjcore.lax.fori_loop(0, n, lambda i, a: np.tanh(a @ m), m)
            )
            f(m).block_until_ready()
            start = time.perf_counter()
            out = f(m)
            end = time.perf_counter()
            if end - start > 0.1:
                break
            steps *= 2
    finally:
        stop.set()
        thread.join()
    assert out._dbuf.is_ready() or mjcore.default_backend() != "cpu"
    inside = [t for t in seen if start + 0.01 < t < end - 0.01]
    assert end - start > 0.04 and len(inside) >= 3, (end - start, len(inside))
