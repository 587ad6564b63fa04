"""Meshes, shardings, Arrays of shards and sharded jit on 8 CPU devices, against JAX (x64).

The test process has one CPU device, so every check runs in one subprocess that starts
mjcore (and JAX) with 8 (`tests/sharding_checks.py`); each check is reported as its own test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKS = Path(__file__).resolve().parent / "sharding_checks.py"


def _check_names() -> list[str]:
    names = []
    for line in CHECKS.read_text().splitlines():
        if line.startswith("def check_"):
            names.append(line[4:].split("(")[0])
    return names


@pytest.fixture(scope="module")
def results() -> dict[str, str | None]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(CHECKS)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULTS "):
            return json.loads(line[len("RESULTS ") :])  # type: ignore[no-any-return]
    tail = proc.stderr[-4000:]
    raise AssertionError(f"the checks did not finish (rc {proc.returncode}):\n{tail}")


@pytest.mark.parametrize("name", _check_names())
def test_sharding(results: dict[str, str | None], name: str) -> None:
    assert name in results, f"{name} did not run"
    failure = results[name]
    assert failure is None, failure
