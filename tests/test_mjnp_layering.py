"""mjnp only decorates (issue 18, "one eager dispatch path"): it calls documented mjcore
functions and never imports mjcore's private names, reads the trace state or touches an
Array's buffers and slots. Checked on the sources' syntax trees."""

from __future__ import annotations

import ast
import pathlib

import pytest

MJNP = pathlib.Path(__file__).resolve().parent.parent / "mjnp"

# An Array's slots and accessors, the trace state, and dispatch's caches: mjcore's alone.
INTERNALS = frozenset(
    {
        "_buf",
        "_dbuf",
        "_npy",
        "_value",
        "_link",
        "_children",
        "_rebind",
        "_state",
        "_trace_state",
        "_host_platform",
        "_view_avals",
    }
)


def _violations(path: pathlib.Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    from_mjcore: set[str] = set()  # names bound to mjcore modules and objects
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mjcore":
            for alias in node.names:
                if alias.name.startswith("_"):
                    found.append(f"{node.lineno}: imports {node.module}.{alias.name}")
                from_mjcore.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "mjcore":
                    if any(part.startswith("_") for part in alias.name.split(".")):
                        found.append(f"{node.lineno}: imports {alias.name}")
                    from_mjcore.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if name in INTERNALS:
            found.append(f"{node.lineno}: touches .{name}")
        elif (
            name.startswith("_")
            and not name.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in from_mjcore
        ):
            found.append(f"{node.lineno}: reads {node.value.id}.{name}")
    return found


SOURCES = sorted(MJNP.rglob("*.py"))


def test_the_check_sees_mjnp() -> None:
    assert len(SOURCES) > 30
    assert {"_views.py", "_joining.py", "_array_surface.py", "_out.py"} <= {p.name for p in SOURCES}


def test_the_check_finds_what_it_forbids(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from mjcore import core as c\n"
        "from mjcore.dispatch import _host_platform\n"
        "import mjcore._private\n"
        "def f(x):\n"
        "    x._npy = None\n"
        "    return c._state.eager, x._buf, c._anything\n"
    )
    assert sorted(v.split(": ", 1)[1] for v in _violations(bad)) == [
        "imports mjcore._private",
        "imports mjcore.dispatch._host_platform",
        "reads c._anything",
        "touches ._buf",
        "touches ._npy",
        "touches ._state",
    ]


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(MJNP)) for p in SOURCES])
def test_mjnp_uses_only_public_mjcore(path: pathlib.Path) -> None:
    found = _violations(path)
    assert not found, (
        f"mjnp/{path.relative_to(MJNP)} reaches into mjcore (call a documented mjcore "
        "function instead, e.g. mjcore.dispatch.is_eager_host, array_value, mjcore.views):\n"
        + "\n".join(found)
    )
