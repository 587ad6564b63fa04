"""Loops compile to the same XLA loop as JAX's: after XLA's optimisations, every while loop has
the same loop-carried types, the same known trip count and the same ops per iteration. (This is
what loop performance under jit rests on; the timings themselves live in benchmarks/.)"""

from __future__ import annotations

import collections
import functools
import re
import types

import jax
import numpy as onp
import pytest

import mjcore
from mjcore import lax
from mjcore.backend import client as backend
from mjcore.lax.transcendental import tanh

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)  # mjcore's Python ints are int64, as in NumPy

F32 = onp.float32


def _dot(a, b):
    return lax.dot_general(a, b, (((1,), (0,)), ((), ())))


MJ = types.SimpleNamespace(
    fori_loop=mjcore.fori_loop,
    scan=mjcore.scan,
    while_loop=mjcore.while_loop,
    add=lax.add,
    mul=lax.mul,
    lt=lax.lt,
    to_f32=lambda x: lax.convert_element_type(x, F32),
    tanh=tanh,
    dot=_dot,
)
JX = types.SimpleNamespace(
    fori_loop=jax.lax.fori_loop,
    scan=jax.lax.scan,
    while_loop=jax.lax.while_loop,
    add=jax.lax.add,
    mul=jax.lax.mul,
    lt=jax.lax.lt,
    to_f32=lambda x: jax.lax.convert_element_type(x, F32),
    tanh=jax.lax.tanh,
    dot=jax.lax.dot,
)


def fori_unused_index(L, x):
    return L.fori_loop(0, 1000, lambda i, x: L.add(L.mul(x, F32(0.999)), F32(0.001)), x)


def fori_used_index(L, x):
    # The body reads the index: XLA must merge it with the loop's own counter.
    return L.fori_loop(0, 10, lambda i, x: L.add(x, L.to_f32(i)), x)


def scan_rnn(L, w, h, xs):
    def cell(h, x_t):
        h = L.tanh(L.add(L.dot(h, w), x_t))
        return h, h

    return L.scan(cell, h, xs)


def scan_reverse(L, xs):
    return L.scan(
        lambda c, x_t: (L.add(c, x_t), L.mul(c, x_t)), onp.zeros(3, F32), xs, reverse=True
    )


def while_counted(L, x):
    return L.while_loop(
        lambda c: L.lt(c[0], 10), lambda c: (L.add(c[0], 1), L.mul(c[1], F32(2))), (0, x)
    )[1]


CASES = [
    (fori_unused_index, (onp.linspace(0, 1, 100, dtype=F32),)),
    (fori_used_index, (onp.linspace(0, 1, 100, dtype=F32),)),
    (
        scan_rnn,
        (onp.ones((64, 64), F32), onp.zeros((8, 64), F32), onp.ones((100, 8, 64), F32)),
    ),
    (scan_reverse, (onp.ones((5, 3), F32),)),
    (while_counted, (onp.linspace(0, 1, 100, dtype=F32),)),
]


def _computations(hlo: str) -> dict[str, str]:
    return {
        m.group(1): m.group(2)
        for m in re.finditer(r"^(?:ENTRY )?%(\S+) \(.*?\{\n(.*?)\n\}", hlo, re.S | re.M)
    }


def loop_summary(hlo: str) -> list[tuple[list[str], int | None, dict[str, int]]]:
    """For each `while` of an optimised HLO module: its carried types (sorted), its known trip
    count, and how many ops of each kind its body runs per iteration."""
    comps = _computations(hlo)
    loops = []
    for text in comps.values():
        for line in text.splitlines():
            m = re.search(r"= (\(.*?\)) while\(.*body=%([\w.\-]+)", line)
            if m is None:
                continue
            trip = re.search(r'"known_trip_count":\{"n":"(\d+)"\}', line)
            ops = collections.Counter(
                re.search(r" ([\w\-]+)\(", op.split(" = ", 1)[1]).group(1)
                for op in comps[m.group(2)].splitlines()
                if " = " in op
            )
            carried = sorted(re.findall(r"[a-z]+\d*\[[\d,]*\]", m.group(1)))
            loops.append((carried, int(trip.group(1)) if trip else None, dict(ops)))
    return loops


@pytest.mark.parametrize("fun,args", CASES, ids=[c[0].__name__ for c in CASES])
def test_loops_compile_like_jax(fun, args):
    text = mjcore.jit(functools.partial(fun, MJ)).lower(*map(mjcore.device_put, args)).as_text()
    ours = loop_summary(backend.compile_text(text).hlo_modules()[0].to_string())
    theirs = loop_summary(jax.jit(functools.partial(fun, JX)).lower(*args).compile().as_text())
    assert ours, "no while loop found in the optimised module"
    assert ours == theirs
