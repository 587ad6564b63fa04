"""Pytest plugin the runner loads into each suite process: `-p conformance.hypothesis_profile`.

The suite's conftest registers and loads the Hypothesis profile ``array-api-tests`` from its
command-line options. This plugin runs after it and adds one setting: the ``too_slow`` health
check is suppressed, for the same reason the deadline is disabled. Drawing an example builds
mjnp arrays, and the first array of each shape and dtype compiles an XLA executable, so input
generation is slow in a way that says nothing about conformance. Slow generation is still a
performance problem worth fixing in mjnp; the run's per-file seconds show it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

PROFILE = "array-api-tests"


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    base = settings.get_profile(PROFILE)
    suppressed = (*base.suppress_health_check, HealthCheck.too_slow)
    settings.register_profile(PROFILE, base, suppress_health_check=suppressed)
    settings.load_profile(PROFILE)
