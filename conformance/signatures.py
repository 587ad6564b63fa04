"""The Array API standard's signatures, and the rule for when an mjnp signature conforms.

``SIGNATURES`` maps a qualified name to the standard's signature, as written in the spec
stubs (``data-apis/array-api``, ``src/array_api_stubs/_2025_12``). Names are ``sum``,
``linalg.svd``, ``fft.fft``, ``Array.__add__`` (with its ``self``), ``info.devices`` and
``dtype.__eq__``. Regenerate the table from a checkout of the stubs with

    python -m conformance.signatures --stubs $SUITE/array-api/src/array_api_stubs/_2025_12

which prints the dict body to paste below.

A signature conforms when every call the standard allows binds the same way: positional-only
parameters keep their positions (names are free), positional-or-keyword ones keep position and
name (or at least take that name as a keyword), keyword-only ones exist by name
(positional-or-keyword is fine too), a ``*args`` stays a ``*args``, optional stays optional,
and any extra parameter is optional. This is looser than
"identical", because mjnp follows NumPy's spelling where NumPy is a superset of the standard.
"""

from __future__ import annotations

import argparse
import ast
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

# fmt: off
SIGNATURES: dict[str, str] = {
    "__array_namespace_info__": "()",
    "abs": "(x, /)",
    "acos": "(x, /)",
    "acosh": "(x, /)",
    "add": "(x1, x2, /)",
    "all": "(x, /, *, axis=None, keepdims=False)",
    "any": "(x, /, *, axis=None, keepdims=False)",
    "arange": "(start, /, stop=None, step=1, *, dtype=None, device=None)",
    "argmax": "(x, /, *, axis=None, keepdims=False)",
    "argmin": "(x, /, *, axis=None, keepdims=False)",
    "argsort": "(x, /, *, axis=-1, descending=False, stable=True)",
    "asarray": "(obj, /, *, dtype=None, device=None, copy=None)",
    "asin": "(x, /)",
    "asinh": "(x, /)",
    "astype": "(x, dtype, /, *, copy=True, device=None)",
    "atan": "(x, /)",
    "atan2": "(x1, x2, /)",
    "atanh": "(x, /)",
    "bitwise_and": "(x1, x2, /)",
    "bitwise_invert": "(x, /)",
    "bitwise_left_shift": "(x1, x2, /)",
    "bitwise_or": "(x1, x2, /)",
    "bitwise_right_shift": "(x1, x2, /)",
    "bitwise_xor": "(x1, x2, /)",
    "broadcast_arrays": "(*arrays)",
    "broadcast_shapes": "(*shapes)",
    "broadcast_to": "(x, /, shape)",
    "can_cast": "(from_, to, /)",
    "ceil": "(x, /)",
    "clip": "(x, /, min=None, max=None)",
    "concat": "(arrays, /, *, axis=0)",
    "conj": "(x, /)",
    "copysign": "(x1, x2, /)",
    "cos": "(x, /)",
    "cosh": "(x, /)",
    "count_nonzero": "(x, /, *, axis=None, keepdims=False)",
    "cumulative_prod": "(x, /, *, axis=None, dtype=None, include_initial=False)",
    "cumulative_sum": "(x, /, *, axis=None, dtype=None, include_initial=False)",
    "diff": "(x, /, *, axis=-1, n=1, prepend=None, append=None)",
    "divide": "(x1, x2, /)",
    "empty": "(shape, *, dtype=None, device=None)",
    "empty_like": "(x, /, *, dtype=None, device=None)",
    "equal": "(x1, x2, /)",
    "exp": "(x, /)",
    "expand_dims": "(x, /, axis)",
    "expm1": "(x, /)",
    "eye": "(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None)",
    "finfo": "(type, /)",
    "flip": "(x, /, *, axis=None)",
    "floor": "(x, /)",
    "floor_divide": "(x1, x2, /)",
    "from_dlpack": "(x, /, *, device=None, copy=None)",
    "full": "(shape, fill_value, *, dtype=None, device=None)",
    "full_like": "(x, /, fill_value, *, dtype=None, device=None)",
    "greater": "(x1, x2, /)",
    "greater_equal": "(x1, x2, /)",
    "hypot": "(x1, x2, /)",
    "iinfo": "(type, /)",
    "imag": "(x, /)",
    "isdtype": "(dtype, kind)",
    "isfinite": "(x, /)",
    "isin": "(x1, x2, /, *, invert=False)",
    "isinf": "(x, /)",
    "isnan": "(x, /)",
    "less": "(x1, x2, /)",
    "less_equal": "(x1, x2, /)",
    "linspace": "(start, stop, /, num, *, dtype=None, device=None, endpoint=True)",
    "log": "(x, /)",
    "log10": "(x, /)",
    "log1p": "(x, /)",
    "log2": "(x, /)",
    "logaddexp": "(x1, x2, /)",
    "logical_and": "(x1, x2, /)",
    "logical_not": "(x, /)",
    "logical_or": "(x1, x2, /)",
    "logical_xor": "(x1, x2, /)",
    "matmul": "(x1, x2, /)",
    "matrix_transpose": "(x, /)",
    "max": "(x, /, *, axis=None, keepdims=False)",
    "maximum": "(x1, x2, /)",
    "mean": "(x, /, *, axis=None, keepdims=False)",
    "meshgrid": "(*arrays, indexing='xy')",
    "min": "(x, /, *, axis=None, keepdims=False)",
    "minimum": "(x1, x2, /)",
    "moveaxis": "(x, source, destination, /)",
    "multiply": "(x1, x2, /)",
    "negative": "(x, /)",
    "nextafter": "(x1, x2, /)",
    "nonzero": "(x, /)",
    "not_equal": "(x1, x2, /)",
    "ones": "(shape, *, dtype=None, device=None)",
    "ones_like": "(x, /, *, dtype=None, device=None)",
    "permute_dims": "(x, /, axes)",
    "positive": "(x, /)",
    "pow": "(x1, x2, /)",
    "prod": "(x, /, *, axis=None, dtype=None, keepdims=False)",
    "real": "(x, /)",
    "reciprocal": "(x, /)",
    "remainder": "(x1, x2, /)",
    "repeat": "(x, repeats, /, *, axis=None)",
    "reshape": "(x, /, shape, *, copy=None)",
    "result_type": "(*arrays_and_dtypes)",
    "roll": "(x, /, shift, *, axis=None)",
    "round": "(x, /)",
    "searchsorted": "(x1, x2, /, *, side='left', sorter=None)",
    "sign": "(x, /)",
    "signbit": "(x, /)",
    "sin": "(x, /)",
    "sinh": "(x, /)",
    "sort": "(x, /, *, axis=-1, descending=False, stable=True)",
    "sqrt": "(x, /)",
    "square": "(x, /)",
    "squeeze": "(x, /, axis)",
    "stack": "(arrays, /, *, axis=0)",
    "std": "(x, /, *, axis=None, correction=0.0, keepdims=False)",
    "subtract": "(x1, x2, /)",
    "sum": "(x, /, *, axis=None, dtype=None, keepdims=False)",
    "take": "(x, indices, /, *, axis=None)",
    "take_along_axis": "(x, indices, /, *, axis=-1)",
    "tan": "(x, /)",
    "tanh": "(x, /)",
    "tensordot": "(x1, x2, /, *, axes=2)",
    "tile": "(x, repetitions, /)",
    "tril": "(x, /, *, k=0)",
    "triu": "(x, /, *, k=0)",
    "trunc": "(x, /)",
    "unique_all": "(x, /)",
    "unique_counts": "(x, /)",
    "unique_inverse": "(x, /)",
    "unique_values": "(x, /)",
    "unstack": "(x, /, *, axis=0)",
    "var": "(x, /, *, axis=None, correction=0.0, keepdims=False)",
    "vecdot": "(x1, x2, /, *, axis=-1)",
    "where": "(condition, x1, x2, /)",
    "zeros": "(shape, *, dtype=None, device=None)",
    "zeros_like": "(x, /, *, dtype=None, device=None)",
    "Array.__abs__": "(self, /)",
    "Array.__add__": "(self, other, /)",
    "Array.__and__": "(self, other, /)",
    "Array.__array_namespace__": "(self, /, *, api_version=None)",
    "Array.__bool__": "(self, /)",
    "Array.__complex__": "(self, /)",
    "Array.__dlpack__": "(self, /, *, stream=None, max_version=None, dl_device=None, copy=None)",
    "Array.__dlpack_device__": "(self, /)",
    "Array.__eq__": "(self, other, /)",
    "Array.__float__": "(self, /)",
    "Array.__floordiv__": "(self, other, /)",
    "Array.__ge__": "(self, other, /)",
    "Array.__getitem__": "(self, key, /)",
    "Array.__gt__": "(self, other, /)",
    "Array.__index__": "(self, /)",
    "Array.__int__": "(self, /)",
    "Array.__invert__": "(self, /)",
    "Array.__le__": "(self, other, /)",
    "Array.__lshift__": "(self, other, /)",
    "Array.__lt__": "(self, other, /)",
    "Array.__matmul__": "(self, other, /)",
    "Array.__mod__": "(self, other, /)",
    "Array.__mul__": "(self, other, /)",
    "Array.__ne__": "(self, other, /)",
    "Array.__neg__": "(self, /)",
    "Array.__or__": "(self, other, /)",
    "Array.__pos__": "(self, /)",
    "Array.__pow__": "(self, other, /)",
    "Array.__rshift__": "(self, other, /)",
    "Array.__setitem__": "(self, key, value, /)",
    "Array.__sub__": "(self, other, /)",
    "Array.__truediv__": "(self, other, /)",
    "Array.__xor__": "(self, other, /)",
    "Array.to_device": "(self, device, /, *, stream=None)",
    "dtype.__eq__": "(self, other, /)",
    "fft.fft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "fft.fftfreq": "(n, /, *, d=1.0, dtype=None, device=None)",
    "fft.fftn": "(x, /, *, s=None, axes=None, norm='backward')",
    "fft.fftshift": "(x, /, *, axes=None)",
    "fft.hfft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "fft.ifft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "fft.ifftn": "(x, /, *, s=None, axes=None, norm='backward')",
    "fft.ifftshift": "(x, /, *, axes=None)",
    "fft.ihfft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "fft.irfft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "fft.irfftn": "(x, /, *, s=None, axes=None, norm='backward')",
    "fft.rfft": "(x, /, *, n=None, axis=-1, norm='backward')",
    "fft.rfftfreq": "(n, /, *, d=1.0, dtype=None, device=None)",
    "fft.rfftn": "(x, /, *, s=None, axes=None, norm='backward')",
    "info.capabilities": "()",
    "info.default_device": "()",
    "info.default_dtypes": "(*, device=None)",
    "info.devices": "()",
    "info.dtypes": "(*, device=None, kind=None)",
    "linalg.cholesky": "(x, /, *, upper=False)",
    "linalg.cross": "(x1, x2, /, *, axis=-1)",
    "linalg.det": "(x, /)",
    "linalg.diagonal": "(x, /, *, offset=0)",
    "linalg.eig": "(x, /)",
    "linalg.eigh": "(x, /)",
    "linalg.eigvals": "(x, /)",
    "linalg.eigvalsh": "(x, /)",
    "linalg.inv": "(x, /)",
    "linalg.matmul": "(x1, x2, /)",
    "linalg.matrix_norm": "(x, /, *, keepdims=False, ord='fro')",
    "linalg.matrix_power": "(x, n, /)",
    "linalg.matrix_rank": "(x, /, *, rtol=None)",
    "linalg.matrix_transpose": "(x, /)",
    "linalg.outer": "(x1, x2, /)",
    "linalg.pinv": "(x, /, *, rtol=None)",
    "linalg.qr": "(x, /, *, mode='reduced')",
    "linalg.slogdet": "(x, /)",
    "linalg.solve": "(x1, x2, /)",
    "linalg.svd": "(x, /, *, full_matrices=True)",
    "linalg.svdvals": "(x, /)",
    "linalg.tensordot": "(x1, x2, /, *, axes=2)",
    "linalg.trace": "(x, /, *, offset=0, dtype=None)",
    "linalg.vecdot": "(x1, x2, /, *, axis=-1)",
    "linalg.vector_norm": "(x, /, *, axis=None, keepdims=False, ord=2)",
}
# fmt: on


class Param(NamedTuple):
    """One parameter of a signature: its name, ``inspect.Parameter`` kind and optionality."""

    name: str
    kind: inspect._ParameterKind
    optional: bool


def parse(signature: str) -> list[Param]:
    """Parameters of a signature string such as ``"(x, /, *, axis=None)"``."""
    function = ast.parse(f"def f{signature}: pass").body[0]
    assert isinstance(function, ast.FunctionDef)
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    params = [
        Param(
            a.arg,
            inspect.Parameter.POSITIONAL_ONLY
            if i < len(args.posonlyargs)
            else inspect.Parameter.POSITIONAL_OR_KEYWORD,
            i >= first_default,
        )
        for i, a in enumerate(positional)
    ]
    if args.vararg:
        params.append(Param(args.vararg.arg, inspect.Parameter.VAR_POSITIONAL, True))
    for a, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(Param(a.arg, inspect.Parameter.KEYWORD_ONLY, default is not None))
    if args.kwarg:
        params.append(Param(args.kwarg.arg, inspect.Parameter.VAR_KEYWORD, True))
    return params


def params_of(obj: Callable, *, method: bool = False) -> list[Param]:
    """Parameters of a Python callable, dropping ``self`` when ``method``."""
    params = [
        Param(p.name, p.kind, p.default is not inspect.Parameter.empty or p.kind in _VARIADIC)
        for p in inspect.signature(obj).parameters.values()
    ]
    return params[1:] if method else params


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_BY_NAME = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def mismatches(standard: list[Param], actual: list[Param]) -> list[str]:
    """Why ``actual`` does not accept every call ``standard`` allows; empty when it does."""
    problems = []
    actual_positional = [p for p in actual if p.kind in _POSITIONAL]
    actual_varargs = next((p for p in actual if p.kind is inspect.Parameter.VAR_POSITIONAL), None)
    actual_kwargs = next((p for p in actual if p.kind is inspect.Parameter.VAR_KEYWORD), None)
    by_name = {p.name: p for p in actual if p.kind in _BY_NAME}
    used = set()
    position = 0
    for p in standard:
        if p.kind in _POSITIONAL:
            if position < len(actual_positional):
                q = actual_positional[position]
                used.add(q.name)
                # A positional-or-keyword parameter may be spelled differently at its position
                # (NumPy's clip(a, a_min, a_max, *, min, max)) if its name is also a keyword.
                keyword = q if q.name == p.name else by_name.get(p.name)
                if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
                    if keyword is None:
                        problems.append(
                            f"positional parameter {position} is {q.name!r}, not {p.name!r}"
                        )
                    elif keyword.kind not in _BY_NAME:
                        problems.append(f"{p.name!r} must be positional-or-keyword")
                if p.optional and not q.optional:
                    problems.append(f"{q.name!r} must be optional")
            elif actual_varargs is None:
                problems.append(f"takes no positional parameter {position} ({p.name!r})")
            position += 1
        elif p.kind is inspect.Parameter.VAR_POSITIONAL:
            if actual_varargs is None or len(actual_positional) > position:
                problems.append(f"must take *{p.name} after {position} positional parameter(s)")
        elif p.kind is inspect.Parameter.KEYWORD_ONLY:
            named = by_name.get(p.name)
            if named is None and actual_kwargs is None:
                problems.append(f"missing keyword {p.name!r}")
            elif named is not None:
                used.add(named.name)
                if p.optional and not named.optional:
                    problems.append(f"keyword {p.name!r} must be optional")
    for q in actual:
        if q.name not in used and not q.optional:
            problems.append(f"extra parameter {q.name!r} must be optional")
    return problems


def _stub_signatures(stubs: Path) -> dict[str, str]:
    table = {}
    for path in sorted(stubs.glob("*.py")):
        module = ast.parse(path.read_text())
        prefix = {"linalg.py": "linalg.", "fft.py": "fft.", "data_types.py": "dtype."}.get(
            path.name, ""
        )
        for node in module.body:
            if isinstance(node, ast.FunctionDef):
                name = node.name
                if path.name == "info.py" and name != "__array_namespace_info__":
                    name = f"info.{name}"
                table[prefix + name] = _format(node.args)
            elif isinstance(node, ast.ClassDef) and path.name == "array_object.py":
                for item in node.body:
                    is_property = isinstance(item, ast.FunctionDef) and any(
                        isinstance(d, ast.Name) and d.id == "property" for d in item.decorator_list
                    )
                    if isinstance(item, ast.FunctionDef) and not is_property:
                        if item.name != "__init__":
                            table[f"Array.{item.name}"] = _format(item.args)
    return table


def _format(args: ast.arguments) -> str:
    args = ast.arguments(
        posonlyargs=[ast.arg(a.arg) for a in args.posonlyargs],
        args=[ast.arg(a.arg) for a in args.args],
        vararg=args.vararg and ast.arg(args.vararg.arg),
        kwonlyargs=[ast.arg(a.arg) for a in args.kwonlyargs],
        kw_defaults=args.kw_defaults,
        kwarg=args.kwarg and ast.arg(args.kwarg.arg),
        defaults=args.defaults,
    )
    return f"({ast.unparse(args)})"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance.signatures")
    parser.add_argument("--stubs", required=True, type=Path, help="array_api_stubs/_<version>")
    table = _stub_signatures(parser.parse_args().stubs)
    for name in sorted(table, key=lambda n: (n.split(".")[0] if "." in n else "", n)):
        print(f'    "{name}": "{table[name]}",')


if __name__ == "__main__":
    main()
