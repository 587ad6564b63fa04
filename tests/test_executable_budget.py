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
    monkeypatch.setattr(client, "_COMPILES_BEFORE_CLEAR", 20)
    f = mjcore.jit(lambda v: v * 3.0 + 1.0)
    peak = 0
    # Each size compiles the jitted function (the eager add of sizes this small runs on the
    # host): 100 compiles, past the budget of 20 five times.
    for n in range(1, 101):
        x = mjnp.arange(n, dtype="float64")
        onp.testing.assert_array_equal(onp.asarray(x + 1.0), onp.arange(n) + 1.0)
        onp.testing.assert_array_equal(onp.asarray(f(x)), onp.arange(n) * 3.0 + 1.0)
        assert client._compiles_since_clear <= 21
        peak = max(peak, _mappings())
    # The first size again: its executables were dropped, so it compiles anew.
    before = f.compile_count
    onp.testing.assert_array_equal(onp.asarray(f(mjnp.arange(1.0))), [1.0])
    assert f.compile_count == before + 1
    # ~3 mappings per executable: the 100 compiles kept alive add ~300 (measured 299), at most
    # 21 alive ~60 (measured 62).
    mjcore.clear_caches()
    base = _mappings()
    assert peak < base + 150


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


# --- the compile cache: one executable per (module text less its name, device) ----------------


def _count_compiles(monkeypatch) -> list[str]:
    compiled: list[str] = []
    real = client._compile

    def counting(text, callbacks, dev):
        compiled.append(text)
        return real(text, callbacks, dev)

    monkeypatch.setattr(client, "_compile", counting)
    return compiled


def test_eager_and_jit_of_one_primitive_compile_once(monkeypatch):
    from mjcore import lax

    mjcore.clear_caches()
    compiled = _count_compiles(monkeypatch)
    a, x = onp.array([0.5, 1.5, 2.0]), onp.array([0.3, 1.0, 4.0])
    eager = lax.igamma(a, x)  # no NumPy host rule: an eager program `module @eager_igamma`
    assert len(compiled) == 1 and compiled[0].startswith("module @eager_igamma")
    jitted = mjcore.jit(lax.igamma)(a, x)  # `module @jit_igamma`, otherwise the same text
    again = mjcore.jit(lambda p, q: lax.igamma(p, q))(a, x)  # another jit object, same program
    assert len(compiled) == 1
    onp.testing.assert_array_equal(onp.asarray(jitted), onp.asarray(eager))
    onp.testing.assert_array_equal(onp.asarray(again), onp.asarray(eager))
    mjcore.clear_caches()  # empties the compile cache too
    mjcore.jit(lax.igamma)(a, x)
    assert len(compiled) == 2


def test_the_compile_cache_is_bounded_and_keeps_the_recently_used(monkeypatch):
    mjcore.clear_caches()
    monkeypatch.setattr(client, "_EXECUTABLE_CACHE_SIZE", 3)
    compiled = _count_compiles(monkeypatch)
    fs = [mjcore.jit(lambda v, k=k: v * float(k + 2)) for k in range(4)]
    x = mjnp.arange(3.0)
    for f in fs[:3]:
        f(x)
    mjcore.jit(lambda v: v * 2.0)(x)  # the first program again: a hit, now the most recent
    assert len(compiled) == 3
    fs[3](x)  # a fourth program evicts the least recently used (v * 3.0)
    assert len(compiled) == 4 and len(client._executables) == 3
    mjcore.jit(lambda v: v * 2.0)(x)
    assert len(compiled) == 4
    out = mjcore.jit(lambda v: v * 3.0)(x)
    assert len(compiled) == 5
    onp.testing.assert_array_equal(onp.asarray(out), onp.arange(3.0) * 3.0)


def test_programs_with_host_callbacks_are_not_shared(monkeypatch):
    # Their executable is bound to the Python callables, not only to the module text.
    mjcore.clear_caches()
    compiled = _count_compiles(monkeypatch)
    seen: list[str] = []

    def f(tag):
        def g(v):
            mjcore.debug.callback(lambda y: seen.append(tag), v)
            return v + 1.0

        return mjcore.jit(g)

    x = mjnp.arange(2.0)
    f("a")(x)
    f("b")(x)
    assert seen == ["a", "b"]
    assert len(compiled) == 2
