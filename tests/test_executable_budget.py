"""The process-wide budget of compiled executables (mjcore/backend/client.py).

Each loaded executable maps JIT-compiled code; past Linux's vm.max_map_count XLA cannot link
new code. After `_COMPILES_BEFORE_CLEAR` compiles every executable cache is emptied.
"""

from __future__ import annotations

import sys

import numpy as onp
import pytest

import mjcore
import mjnp
from mjcore.backend import client


def _mappings() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/maps is Linux's")
def test_compiles_past_the_budget_empty_the_caches_and_free_their_code(monkeypatch):
    mjcore.clear_caches()
    monkeypatch.setattr(client, "_COMPILES_BEFORE_CLEAR", 40)
    f = mjcore.jit(lambda v: v * 3.0 + 1.0)
    peak = 0
    for n in range(1, 301):  # each size compiles an eager add and a jitted function
        x = mjnp.arange(n, dtype="float64")
        onp.testing.assert_array_equal(onp.asarray(x + 1.0), onp.arange(n) + 1.0)
        onp.testing.assert_array_equal(onp.asarray(f(x)), onp.arange(n) * 3.0 + 1.0)
        assert client._compiles_since_clear <= 41
        peak = max(peak, _mappings())
    # The first size again: its executables were dropped, so it compiles anew.
    before = f.compile_count
    onp.testing.assert_array_equal(onp.asarray(f(mjnp.arange(1.0))), [1.0])
    assert f.compile_count == before + 1
    # ~3 mappings per executable: 600 compiles kept alive would add ~1800.
    mjcore.clear_caches()
    base = _mappings()
    assert peak < base + 900


def test_the_budget_leaves_room_under_the_system_limit():
    assert 1000 <= client._COMPILES_BEFORE_CLEAR
    if sys.platform.startswith("linux"):
        assert client._COMPILES_BEFORE_CLEAR * 3 < client._max_map_count()


def test_a_high_mapping_count_empties_the_caches_at_the_next_check(monkeypatch):
    # Mappings made by other code (JAX's executables in the same process) count too: at every
    # `_MAP_CHECK_EVERY`-th compile the real count is read.
    monkeypatch.setattr(client, "_map_count", lambda: client._MAPS_BEFORE_CLEAR + 1)
    f = mjcore.jit(lambda v: v * 5.0)
    f(mjnp.arange(3.0))
    monkeypatch.setattr(client, "_compiles_since_clear", client._MAP_CHECK_EVERY - 1)
    f(mjnp.arange(4.0))  # the check's compile: over the mapping budget, so everything goes
    assert client._compiles_since_clear < client._MAP_CHECK_EVERY - 1  # counting anew
    before = f.compile_count
    f(mjnp.arange(3.0))
    assert f.compile_count == before + 1  # dropped, compiled again


def test_a_low_mapping_count_keeps_the_caches(monkeypatch):
    monkeypatch.setattr(client, "_map_count", lambda: client._MAPS_BEFORE_CLEAR - 1)
    f = mjcore.jit(lambda v: v * 7.0)
    f(mjnp.arange(3.0))
    monkeypatch.setattr(client, "_compiles_since_clear", client._MAP_CHECK_EVERY - 1)
    f(mjnp.arange(4.0))
    assert client._compiles_since_clear >= client._MAP_CHECK_EVERY  # not reset
    before = f.compile_count
    f(mjnp.arange(3.0))
    assert f.compile_count == before  # still cached
