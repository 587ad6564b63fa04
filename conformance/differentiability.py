"""Which mjnp functions are differentiable: `python -m conformance.differentiability` probes every
public mjnp function and writes `docs/differentiability.md`.

Each function is called on the first argument pattern it accepts with finite outputs (one to
three float vectors, one or two matrices, a list of vectors, a vector and an integer; values in
(0.2, 0.8), then in (1.2, 1.8); integer vectors last); the first floating output is then
checked with `mjcore.test_util.check_grads(order=1, modes=("fwd", "rev"))`. Classes:

- differentiable: check_grads passed (forward mode against finite differences, reverse mode
  against forward mode) at the probe point;
- not differentiable: the outputs are integers or booleans (indices, counts, predicates), so
  there is no tangent space;
- raises: the function computes, but differentiating it raises (the error is shown);
- mismatch: differentiating works but disagrees with finite differences at the probe point
  (a kink, or a bug: look at it);
- not probed: no probe pattern fits (functions of shapes, dtypes, files, strings, callables).

The probe is honest but shallow: one point, default arguments, float64. Piecewise functions can
pass at the probe point and still have kinks elsewhere. The last column says which functions
tests/test_mjnp_grads.py checks more deeply (its table, tests/grad_cases.py): check_grads in
forward and reverse mode at chosen points (of the given order), and the gradient of a scalar
loss against JAX's (x64) where JAX has the function.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

import mjcore
import mjnp
from mjcore.test_util import check_grads

DOC = Path(__file__).resolve().parent.parent / "docs" / "differentiability.md"

# Host utilities with side effects (files, printing, global state): never called by the probe.
_SKIP = frozenset(
    {
        "save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt",
        "fromfile", "show_config", "info", "seterr", "seterrcall", "set_printoptions",
        "printoptions", "errstate", "copyto", "from_dlpack", "vectorize", "apply_along_axis",
        "apply_over_axes",
    }
)  # fmt: skip


class Result(NamedTuple):
    name: str
    category: str
    detail: str


def _probe_patterns() -> list[tuple[str, tuple[Any, ...]]]:
    """Argument patterns, each with values in (0.2, 0.8) and then in (1.2, 1.8) (for functions
    such as arccosh whose domain starts at 1); integer patterns last."""
    rng = np.random.default_rng(0)
    patterns = []
    for low in (0.2, 1.2):
        vec, vec2, vec3 = (rng.uniform(low, low + 0.6, 4) for _ in range(3))
        mat = rng.uniform(-0.5, 0.5, (3, 3)) + 2 * np.eye(3)
        mat = mat @ mat.T
        mat2 = rng.uniform(-0.5, 0.5, (3, 3)) + np.eye(3)
        patterns += [
            ("x", (vec,)),
            ("x, y", (vec, vec2)),
            ("x, y, z", (vec, vec2, vec3)),
            ("matrix", (mat,)),
            ("matrix, matrix", (mat, mat2)),
            ("[x, y]", ([vec, vec2],)),
            ("x, 0", (vec, 0)),
            ("x, 2", (vec, 2)),
            ("x, y, 2", (vec, vec2, 2)),
        ]
    ints, ints2 = np.array([3, 5, 12, 7]), np.array([6, 2, 9, 1])
    patterns += [("int x", (ints,)), ("int x, y", (ints, ints2))]
    return patterns


# Functions of a symmetric (Hermitian) matrix read one triangle only; probe them along
# symmetric directions, as their derivative is defined.
_SYMMETRIC = frozenset({"linalg.eigh", "linalg.eigvalsh"})


def _symmetrized(fun: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(a: Any, *rest: Any) -> Any:
        return fun((a + mjnp.swapaxes(a, -1, -2)) / 2, *rest)

    return wrapped


def _array_leaves(out: Any) -> list[Any]:
    """The array outputs (mjnp arrays, tracers, NumPy arrays), not dtypes or scalar types."""
    return [
        x
        for x in mjcore.tree_util.tree_leaves(out)
        if not isinstance(x, type) and isinstance(getattr(x, "dtype", None), np.dtype)
    ]


def _first_inexact_leaf(out: Any) -> Any:
    for leaf in _array_leaves(out):
        if leaf.dtype.kind in "fc":
            return leaf
    return None


def classify(name: str, fun: Callable[..., Any]) -> Result:
    if name in _SKIP:
        return Result(name, "not probed", "host utility with side effects")
    if name in _SYMMETRIC:
        fun = _symmetrized(fun)
    for label, args in _probe_patterns():
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                out = fun(*args)
        except Exception:  # try the next argument pattern
            continue
        leaves = _array_leaves(out)
        if not leaves:
            continue
        first = _first_inexact_leaf(out)
        if first is not None and not np.all(np.isfinite(np.asarray(first))):
            continue  # outside the function's domain: try the next pattern
        if first is None:
            kinds = sorted({np.dtype(x.dtype).name for x in leaves})
            return Result(name, "not differentiable", f"({label}) -> {', '.join(kinds)}")
        float_positions = [i for i, a in enumerate(args) if not isinstance(a, int)]

        def first_float(
            *xs: Any, _args: tuple[Any, ...] = args, _positions: list[int] = float_positions
        ) -> Any:
            full = list(_args)
            for i, x in zip(_positions, xs, strict=True):
                full[i] = x
            return _first_inexact_leaf(fun(*full))

        primals = tuple(args[i] for i in float_positions)
        try:
            check_grads(first_float, primals, order=1, modes=("fwd", "rev"))
        except AssertionError as err:
            return Result(name, "mismatch", f"({label}) {_short(err)}")
        except Exception as err:
            return Result(name, "raises", f"({label}) {type(err).__name__}: {_short(err)}")
        return Result(name, "differentiable", f"({label})")
    return Result(name, "not probed", "no probe pattern fits its arguments")


def _short(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return (text[:90] + "...") if len(text) > 93 else text


def public_functions(module: Any, prefix: str = "") -> list[tuple[str, Callable[..., Any]]]:
    out = []
    for name in sorted(getattr(module, "__all__", [])):
        value = getattr(module, name)
        if callable(value) and not isinstance(value, type):
            out.append((prefix + name, value))
    return out


def tested() -> dict[str, str]:
    """How tests/test_mjnp_grads.py checks each function in its table."""
    from tests.grad_cases import GRAD_CASES

    return {c.name: f"check_grads order {c.order}" + (", JAX" if c.jax else "") for c in GRAD_CASES}


def run() -> list[Result]:
    functions = public_functions(mjnp)
    for sub in ("linalg", "fft"):
        if hasattr(mjnp, sub):
            functions += public_functions(getattr(mjnp, sub), f"{sub}.")
    results = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for name, fun in functions:
            results.append(classify(name, fun))
    return results


_ORDER = ("differentiable", "not differentiable", "raises", "mismatch", "not probed")


def markdown(results: list[Result]) -> str:
    counts = {c: sum(r.category == c for r in results) for c in _ORDER}
    doc = (sys.modules[__name__].__doc__ or "").split("\n\n", 1)[1]
    lines = [
        "# Differentiability of mjnp functions",
        "",
        "Generated by `python -m conformance.differentiability`; do not edit by hand.",
        "",
        doc.strip(),
        "",
        "| category | functions |",
        "| --- | --- |",
    ]
    lines += [f"| {c} | {counts[c]} |" for c in _ORDER]
    checks = tested()
    lines += [
        "",
        "| function | category | probe (arguments) and detail | tests/test_mjnp_grads.py |",
        "| --- | --- | --- | --- |",
    ]
    for r in sorted(results, key=lambda r: (_ORDER.index(r.category), r.name)):
        detail = r.detail.replace("|", "\\|")
        lines.append(f"| `{r.name}` | {r.category} | {detail} | {checks.get(r.name, '')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Probe mjnp functions for differentiability.")
    parser.add_argument("--output", type=Path, default=DOC, help=f"default: {DOC}")
    args = parser.parse_args(argv)
    text = markdown(run())
    args.output.write_text(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
