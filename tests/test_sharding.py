"""Meshes, shardings, Arrays of shards and sharded jit on 8 CPU devices, against JAX (x64).

The test process has one CPU device, so every check runs in one subprocess that starts
mjcore (and JAX) with 8 (`tests/sharding_checks.py`), once with Shardy's attributes and once
with GSPMD's (`jax_use_shardy_partitioner` on, off); each check is reported as its own test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import mjcore

ROOT = Path(__file__).resolve().parent.parent
CHECKS = Path(__file__).resolve().parent / "sharding_checks.py"


def _check_names() -> list[str]:
    names = []
    for line in CHECKS.read_text().splitlines():
        if line.startswith("def check_"):
            names.append(line[4:].split("(")[0])
    return names


@pytest.fixture(scope="module")
def results(check_script_results: Callable[[Path], dict[str, str | None]]) -> dict[str, str | None]:
    return check_script_results(CHECKS)


@pytest.mark.parametrize("mode", ["shardy", "gspmd"])  # jax_use_shardy_partitioner on, off
@pytest.mark.parametrize("name", _check_names())
def test_sharding(results: dict[str, str | None], name: str, mode: str) -> None:
    key = f"{name}[{mode}]"
    assert key in results, f"{key} did not run"
    failure = results[key]
    assert failure is None, failure


def _device_count_with(**env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES")}
    base.pop("MJCORE_NUM_CPU_DEVICES", None)
    return subprocess.run(
        [sys.executable, "-c", "import mjcore; print('COUNT', mjcore.device_count())"],
        cwd=ROOT,
        env={**base, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "env, count",
    [
        ({"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}, 4),
        ({"MJCORE_NUM_CPU_DEVICES": "3"}, 3),
        # mjcore's own setting wins over XLA's flag, as JAX's jax_num_cpu_devices does
        (
            {
                "MJCORE_NUM_CPU_DEVICES": "2",
                "XLA_FLAGS": "--xla_force_host_platform_device_count=5",
            },
            2,
        ),
        ({"JAX_NUM_CPU_DEVICES": "6"}, 6),
    ],
    ids=["xla-flags", "mjcore", "mjcore-wins", "jax-name"],
)
def test_cpu_device_count_from_the_environment(env: dict[str, str], count: int) -> None:
    proc = _device_count_with(**env)
    assert f"COUNT {count}" in proc.stdout, proc.stderr[-2000:]


def test_a_bad_device_count_is_a_clear_error() -> None:
    proc = _device_count_with(MJCORE_NUM_CPU_DEVICES="eight")
    assert proc.returncode != 0
    assert "ValueError: mjcore: MJCORE_NUM_CPU_DEVICES='eight' must be a positive integer" in (
        proc.stderr
    )


def test_the_shardy_flag_and_its_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    from mjcore.backend import compat

    config_mod = sys.modules["mjcore.config"]  # (the module; `mjcore.config` is its object)

    for name in ("MJCORE_USE_SHARDY_PARTITIONER", "JAX_USE_SHARDY_PARTITIONER"):
        monkeypatch.delenv(name, raising=False)
    assert config_mod._shardy_from_env() is True  # JAX's default: Shardy
    monkeypatch.setenv("JAX_USE_SHARDY_PARTITIONER", "0")
    assert config_mod._shardy_from_env() is False
    monkeypatch.setenv("MJCORE_USE_SHARDY_PARTITIONER", "true")  # mjcore's name wins
    assert config_mod._shardy_from_env() is True
    monkeypatch.setenv("MJCORE_USE_SHARDY_PARTITIONER", "maybe")
    with pytest.raises(ValueError, match="MJCORE_USE_SHARDY_PARTITIONER must be a bool"):
        config_mod._shardy_from_env()
    with pytest.raises(ValueError, match="jax_use_shardy_partitioner must be a bool"):
        mjcore.config.update("jax_use_shardy_partitioner", "sometimes")
    before = mjcore.config.jax_use_shardy_partitioner
    try:
        for on in (False, True):
            mjcore.config.update("jax_use_shardy_partitioner", on)
            assert mjcore.config.jax_use_shardy_partitioner is on
    finally:
        mjcore.config.update("jax_use_shardy_partitioner", before)
    for on in (False, True):
        build = compat.spmd_compile_options((0,), [True], shardy=on).executable_build_options
        assert build.use_shardy_partitioner is on and build.use_spmd_partitioning
