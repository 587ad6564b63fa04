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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the primitive table case by case: every test of one `PrimCase` (eager, abstract,
    jit, jvp, vmap, ...) one after another, so that the programs the eager and jit checks share
    are compiled once and found in `compile_text`'s bounded cache, also when pytest-xdist hands
    contiguous runs of tests to each worker. Only the order changes, within the one module."""
    positions = [i for i, item in enumerate(items) if item.path.name == "test_primitives.py"]
    if not positions:
        return
    block = items[positions[0] : positions[-1] + 1]
    if len(block) != len(positions):  # not one contiguous run: leave the order alone
        return
    first_seen: dict[int, int] = {}

    def case_index(item: pytest.Item) -> int:
        callspec = getattr(item, "callspec", None)
        case = callspec.params.get("case") if callspec is not None else None
        if case is None:
            return len(block)  # tests over the whole table keep their place after the cases
        return first_seen.setdefault(id(case), len(first_seen))

    for item in block:
        case_index(item)
    items[positions[0] : positions[-1] + 1] = sorted(block, key=case_index)
