"""The layers stay layers (issue 19): the import graph of mjcore and mjnp, read from the sources
by `tests/import_graph.py`, has no large circle, no function-local import that breaks no cycle,
and no module that nothing imports."""

from __future__ import annotations

import re

import pytest

from tests import import_graph

# The largest strongly connected component allowed, in files (function-local imports count as
# edges). Issue 19 measured a 21-file circle in mjcore; this reader first measured 48 (it also
# counts the `__init__` of `mjcore.lax` and `mjcore.control_flow`); the target 3 is met in
# mjcore. mjnp's was 22 files, its modules importing `mjnp` itself; it is 5 since einsum takes
# `diagonal` from `_indexing_functions` rather than from `mjnp` ({mjnp, _ufunc, linalg,
# linalg._linalg, _polynomials}: the ufunc objects and `linalg`'s function-local imports of
# `mjnp`). Lower these as circles are cut.
MAX_CYCLE = {"mjcore": 3, "mjnp": 5}

# Every function-local import in mjcore, (module, imported module) -> the circle it breaks.
# Each must still break one (else it belongs at module level); a new one must be added here.
MJCORE_LOCAL_IMPORTS: dict[tuple[str, str], str] = {
    ("mjcore.config", "mjcore.backend.client"): "backend.client reads flags at import",
    ("mjcore.core", "mjcore.jaxpr"): "jaxpr builds on core's Primitive and avals",
    ("mjcore.lax.arithmetic", "mjcore.lax.complex"): "complex's rules use arithmetic (abs jvp)",
    ("mjcore.lax.arithmetic", "mjcore.lax.complex_special"): "sign's lowering fixes up complex",
    ("mjcore.lax.families", "mjcore.lax.base"): "lax.base's primitives use these helpers",
    ("mjcore.lax.linalg", "mjcore.control_flow.fori_loop"): "control_flow runs mjcore.lax",
    ("mjcore.lax.special", "mjcore.control_flow.while_loop"): "control_flow runs mjcore.lax",
    ("mjcore.lax.structural", "mjcore.lax.slicing"): "slicing builds on structural",
    ("mjcore.lax.structural", "mjcore.lax.reductions"): "reductions build on structural",
}

# Modules nothing in the library imports: the packages' entry points and the public submodules
# users import by name (each imported by a test, checked below).
ENTRY_POINTS = {
    "mjcore",
    "mjnp",
    "mjcore.debug",
    "mjcore.distributed",
    "mjcore.experimental",
    "mjcore.experimental.shard_map",
    "mjcore.multihost_utils",
    "mjcore.example_libraries",
    "mjcore.flatten_util",
    "mjcore.scipy",
    "mjcore.scipy.linalg",
    "mjcore.test_util",
}


@pytest.fixture(scope="module")
def graph() -> import_graph.ImportGraph:
    return import_graph.build()


@pytest.mark.parametrize("package", sorted(MAX_CYCLE))
def test_no_large_import_cycle(graph, package):
    comps = [c for c in graph.sccs() if c[0].split(".")[0] == package]
    largest = comps[0]
    assert len(largest) <= MAX_CYCLE[package], (
        f"{package}: an import circle of {len(largest)} files (allowed {MAX_CYCLE[package]}): "
        f"{largest}. Move the shared piece below both sides instead of importing upward."
    )


def test_function_local_imports_break_a_cycle(graph):
    needless = [li for li in graph.needless_local_imports()]
    assert not needless, (
        "function-local imports that break no import cycle; import at module level instead:\n"
        + "\n".join(f"  {li.module}:{li.line} imports {li.target}" for li in needless)
    )


def test_mjcore_local_imports_are_listed(graph):
    found = {(li.module, li.target): li for li in graph.local_imports}
    unlisted = [
        li
        for key, li in found.items()
        if key[0].startswith("mjcore") and key not in MJCORE_LOCAL_IMPORTS
    ]
    assert not unlisted, (
        "new function-local imports in mjcore: move the shared piece below both modules, or "
        "list the import in MJCORE_LOCAL_IMPORTS with the circle it breaks:\n"
        + "\n".join(f"  {li.module}:{li.line} imports {li.target}" for li in unlisted)
    )
    stale = sorted(set(MJCORE_LOCAL_IMPORTS) - set(found))
    assert not stale, f"MJCORE_LOCAL_IMPORTS names imports that no longer exist: {stale}"


def _imported_modules(graph: import_graph.ImportGraph) -> set[str]:
    out = set()
    for targets in graph.edges.values():
        for t in targets:
            # importing `a.b.c` also imports the packages `a.b` and `a`
            parts = t.split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return out


def test_every_module_is_imported(graph):
    unused = sorted(
        m
        for m in graph.files
        if m not in _imported_modules(graph)
        and m not in ENTRY_POINTS
        and not m.endswith(".__main__")
    )
    assert not unused, f"modules imported by nothing (dead code?): {unused}"


@pytest.mark.parametrize("module", sorted(ENTRY_POINTS - {"mjcore", "mjnp"}))
def test_entry_points_are_used(module):
    pattern = re.compile(
        rf"(import {re.escape(module)}\b|from {re.escape(module)} import|"
        rf"from {re.escape(module.rpartition('.')[0])} import .*\b{module.rpartition('.')[2]}\b)"
    )
    tests = import_graph.ROOT / "tests"
    assert any(pattern.search(p.read_text()) for p in tests.glob("*.py")), (
        f"{module} is imported neither by the library nor by any test"
    )


def test_graph_reader_sees_both_kinds_of_import(graph):
    # The reader itself: a known module-level edge and a known function-local one.
    assert "mjcore.core" in graph.top_edges["mjcore.batching"]
    assert graph.local_imports and all(
        li.target in graph.files and li.module in graph.files for li in graph.local_imports
    )
