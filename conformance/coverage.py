"""How much of NumPy's public API mjnp implements: `python -m conformance.coverage`.

For each namespace (main, linalg, fft, random, emath), NumPy's public callables are the names
in `dir()` without a leading underscore that are callable and not classes (so dtypes,
exceptions and submodules are left out). A name counts as implemented when mjnp's namespace
has a callable of that name. Prints a count per namespace and the missing names.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType
from typing import NamedTuple

import numpy as np

NAMESPACES = ("main", "linalg", "fft", "random", "emath")


class Coverage(NamedTuple):
    namespace: str
    public: tuple[str, ...]
    implemented: tuple[str, ...]
    missing: tuple[str, ...]


def public_callables(module: ModuleType) -> list[str]:
    """The public, callable, non-class names of a NumPy namespace."""
    names = []
    for name in dir(module):
        if name.startswith("_"):
            continue
        value = getattr(module, name, None)
        if callable(value) and not isinstance(value, type):
            names.append(name)
    return sorted(names)


def _module(package: str, namespace: str) -> ModuleType | None:
    if namespace == "main":
        return importlib.import_module(package)
    try:
        return importlib.import_module(f"{package}.{namespace}")
    except ImportError:  # numpy.emath is an attribute (numpy.lib.scimath), not a module path
        value = getattr(importlib.import_module(package), namespace, None)
        return value if isinstance(value, ModuleType) else None


def coverage(namespace: str) -> Coverage:
    public = public_callables(_module("numpy", namespace))
    ours = _module("mjnp", namespace)
    implemented = [n for n in public if ours is not None and callable(getattr(ours, n, None))]
    missing = [n for n in public if n not in set(implemented)]
    return Coverage(namespace, tuple(public), tuple(implemented), tuple(missing))


def report(results: list[Coverage], show_missing: bool = True) -> str:
    lines = [f"NumPy {np.__version__} public callables implemented by mjnp", ""]
    total_public = total_done = 0
    for r in results:
        n, done = len(r.public), len(r.implemented)
        total_public += n
        total_done += done
        label = "numpy" if r.namespace == "main" else f"numpy.{r.namespace}"
        lines.append(f"{label:14s} {done:4d} / {n:4d}  ({100 * done / max(n, 1):5.1f}%)")
    lines.append(f"{'total':14s} {total_done:4d} / {total_public:4d}")
    if show_missing:
        for r in results:
            if r.missing:
                label = "numpy" if r.namespace == "main" else f"numpy.{r.namespace}"
                lines += ["", f"missing from {label} ({len(r.missing)}):"]
                lines += _columns(r.missing)
    return "\n".join(lines)


def _columns(names: tuple[str, ...], width: int = 100) -> list[str]:
    out, line = [], "  "
    for name in names:
        if len(line) + len(name) + 1 > width:
            out.append(line.rstrip())
            line = "  "
        line += name + " "
    if line.strip():
        out.append(line.rstrip())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", action="store_true", help="counts only, no missing names")
    args = parser.parse_args(argv)
    print(report([coverage(ns) for ns in NAMESPACES], show_missing=not args.summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
