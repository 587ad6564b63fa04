"""pytest plugin for `conformance.numpy_suite`: a per-test time limit and a streamed record.

Loaded with ``-p conformance._numpy_suite_plugin`` into both runs (mjnp's rewritten copy and
NumPy's own copy), so both are measured the same way. Options:

- ``--npsuite-record PATH``: append one JSON line per test phase report (and per failed
  collector) and flush it at once, so a run killed by the file time limit still says which
  tests finished.
- ``--npsuite-test-timeout SECONDS``: a test (setup, call and teardown together) that runs
  longer fails with `TestTimeout`. It is a SIGALRM, so a test stuck in compiled code fails
  when control returns to Python; the runner's per-file limit covers the rest.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Iterator
from typing import Any

import pytest


class TestTimeout(BaseException):  # noqa: N818 - named as pytest-timeout reports it
    """A test ran past ``--npsuite-test-timeout``.

    A BaseException, so a test's ``except Exception`` (or ``pytest.raises(Exception)``)
    cannot swallow it.
    """

    __test__ = False  # not a test class, despite the name


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("npsuite")
    group.addoption("--npsuite-record", default=None, help="JSON-lines file of test reports")
    group.addoption(
        "--npsuite-test-timeout", type=float, default=0.0, help="seconds per test (0: none)"
    )


_record_file: Any = None


def pytest_configure(config: pytest.Config) -> None:
    global _record_file
    path = config.getoption("npsuite_record")
    if path:
        _record_file = open(path, "a", buffering=1)  # noqa: SIM115 - open for the session
    for marker in ("slow", "slow_pypy", "valgrind_error", "leaks_references", "thread_unsafe"):
        config.addinivalue_line("markers", f"{marker}: NumPy's own marker")
    config.addinivalue_line("markers", "parallel_threads(n): NumPy's own marker")
    config.addinivalue_line("markers", "iterations(n): NumPy's own marker")


def pytest_unconfigure(config: pytest.Config) -> None:
    global _record_file
    if _record_file is not None:
        _record_file.close()
        _record_file = None


def _write(entry: dict[str, Any]) -> None:
    if _record_file is not None:
        _record_file.write(json.dumps(entry) + "\n")
        _record_file.flush()


def _first_line(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The exception lines of a failure (``ValueError: ...``, up to three: a regex mismatch
    names its pattern and input on the next two), else the last line."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None and crash.message.strip():
        lines = [ln.strip() for ln in crash.message.splitlines() if ln.strip()]
        return " | ".join(lines[:3])[:400]
    text = str(report.longrepr or "")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    error_lines = [ln[1:].strip() for ln in lines if ln.startswith("E ")]
    if error_lines:
        return " | ".join(error_lines[:3])[:400]
    return (lines[-1] if lines else "")[:400]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    entry = {
        "nodeid": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "duration": report.duration,
        "xfail": bool(getattr(report, "wasxfail", None) is not None),
    }
    if report.outcome != "passed":
        entry["message"] = _first_line(report)
    _write(entry)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.outcome == "failed":
        _write(
            {
                "nodeid": report.nodeid,
                "when": "collect",
                "outcome": "failed",
                "message": _first_line(report),
            }
        )


def pytest_collection_finish(session: pytest.Session) -> None:
    # mjnp's rewritten copy: names resolve to mjnp's objects from here on.
    under_test = sys.modules.get("conformance._numpy_under_test")
    if under_test is not None:
        under_test.end_collection()


def _on_alarm(signum: int, frame: Any) -> None:
    raise TestTimeout("test ran past the --npsuite-test-timeout limit")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    seconds = item.config.getoption("npsuite_test_timeout")
    if seconds > 0:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        if seconds > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
