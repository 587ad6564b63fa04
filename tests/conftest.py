"""Suite-wide hooks.

JAX, the oracle of many tests, keeps every executable it compiles (~3 memory mappings each).
Over the whole suite its code and mjcore's together came near Linux's vm.max_map_count, past
which code can no longer be linked in (the process crashed in XLA's compiler at 96%). mjcore
bounds its own executables (`mjcore/backend/client.py`); JAX's are dropped after each module.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from hypothesis import settings

# CI (`CI=true`) draws the same Hypothesis examples on every run, so that a red run names a
# change, not a lucky draw; locally each run explores new examples (`make fuzz` goes further).
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True, scope="module")
def _drop_jax_executables_after_each_module() -> Iterator[None]:
    yield
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.clear_caches()
