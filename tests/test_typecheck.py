"""mypy over mjcore and mjnp reports no errors (STYLE: "mypy runs in CI"; `make lint` runs it too).

The configuration is pyproject.toml's `[tool.mypy]`. One subprocess, ~20-30 s on one worker.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_mypy_reports_no_errors(tmp_path: pathlib.Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "mjcore", "mjnp"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
