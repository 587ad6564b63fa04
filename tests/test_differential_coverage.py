"""Every NumPy function mjnp implements has a Hypothesis differential test against NumPy.

Tests declare what they cover with `tests.differential_registry.differential`. The functions
counted are `conformance.coverage`'s: NumPy's public callables in the main namespace, `linalg`
and `fft` that mjnp also has. An alias (the same mjnp object under another name, such as
`acos` for `arccos`) is covered by its twin. The exemptions below are functions for which a
random-input comparison says nothing; each has fixed-example tests where the reason says.
"""

from __future__ import annotations

import importlib
import pathlib
from typing import Any

import mjnp
from conformance.coverage import NAMESPACES, coverage
from tests.differential_registry import COVERED

# name -> why a random-input differential test is meaningless for it
EXEMPT: dict[str, str] = {
    "show_config": "prints the build configuration; nothing to draw",
    "show_runtime": "prints the runtime environment; nothing to draw",
    "info": "prints help text",
    "get_printoptions": "reads print configuration; no array input",
    "set_printoptions": "sets print configuration; checked through printing",
    "printoptions": "context manager for print configuration",
    "geterr": "reads floating-point error configuration",
    "seterr": "sets floating-point error configuration",
    "geterrcall": "reads the error callback",
    "seterrcall": "sets the error callback",
    "getbufsize": "reads the ufunc buffer size setting",
    "setbufsize": "sets the ufunc buffer size setting",
    "isnat": "datetime64/timedelta64 only, dtypes mjnp has no arrays of",
    "save": "file I/O: round trip in test_mjnp_utilities.py",
    "load": "file I/O: round trip in test_mjnp_utilities.py",
    "savez": "file I/O: fixed examples in test_mjnp_utilities.py",
    "savez_compressed": "file I/O: fixed examples in test_mjnp_utilities.py",
    "savetxt": "file I/O: fixed examples in test_mjnp_utilities.py",
    "loadtxt": "file I/O: fixed examples in test_mjnp_utilities.py",
    "genfromtxt": "file I/O: fixed examples in test_mjnp_utilities.py",
    "fromfile": "file I/O: fixed examples in test_mjnp_utilities.py",
    "fromregex": "file I/O: fixed examples in test_mjnp_utilities_extra.py",
}

_TESTS = pathlib.Path(__file__).parent


def _qualified(namespace: str, name: str) -> str:
    return name if namespace == "main" else f"{namespace}.{name}"


def _object(qualified: str) -> Any:
    """The function a public name runs (a ufunc object's wrapped function, so that an alias
    such as `degrees`, `rad2deg`'s function, counts as covered with it)."""
    namespace, _, name = qualified.rpartition(".")
    obj = getattr(getattr(mjnp, namespace) if namespace else mjnp, name)
    return getattr(obj, "__wrapped__", obj) if isinstance(obj, mjnp._ufunc.ufunc) else obj


def _implemented() -> list[str]:
    return [_qualified(ns, n) for ns in NAMESPACES for n in coverage(ns).implemented]


def _load_declaring_tests() -> None:
    """Import every test module that declares coverage, so its decorators have run (pytest
    imports them under their file name, with this directory on sys.path)."""
    for path in sorted(_TESTS.glob("test_*.py")):
        if path.stem != __name__ and "@differential(" in path.read_text():
            importlib.import_module(path.stem)


def test_every_implemented_function_has_a_differential_test():
    _load_declaring_tests()
    covered_objects = {id(_object(name)) for name in COVERED}
    missing = [
        name
        for name in _implemented()
        if name not in COVERED and name not in EXEMPT and id(_object(name)) not in covered_objects
    ]
    assert not missing, (
        f"{len(missing)} functions without a Hypothesis differential test: {missing}"
    )


def test_declared_and_exempt_names_are_implemented_functions():
    _load_declaring_tests()
    implemented = set(_implemented())
    unknown = sorted((set(COVERED) | set(EXEMPT)) - implemented)
    assert not unknown, f"not an implemented NumPy function (typo?): {unknown}"
    both = sorted(set(COVERED) & set(EXEMPT))
    assert not both, f"exempt but also covered; drop the exemption: {both}"
