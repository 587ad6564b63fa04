"""Comparison primitives: eq, ne, lt, le, gt, ge (elementwise, boolean results)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mjcore import dtypes
from mjcore.backend.lowering import LoweringContext
from mjcore.core import Primitive
from mjcore.lax import host
from mjcore.lax.families import elementwise, promote_python_scalars

ArrayLike = Any


def _compare_type(dtype: np.dtype) -> str:
    return {"b": "UNSIGNED", "u": "UNSIGNED", "i": "SIGNED", "f": "FLOAT", "c": "FLOAT"}[
        dtypes.kind(dtype)
    ]


def _comparison(name: str, direction: str, kinds: str, numpy_fun: np.ufunc) -> Primitive:
    prim = Primitive(name)

    def lowering(ctx: LoweringContext, x, y):
        return ctx.builder.op(
            "stablehlo.compare",
            [x, y],
            ctx.aval_out,
            f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
            f"compare_type = #stablehlo<comparison_type {_compare_type(x.aval.dtype)}>",
        )

    elementwise(prim, lowering, kinds, out_dtype=lambda _: np.dtype(bool))
    prim.def_host(host.ufunc(numpy_fun))

    @prim.def_jvp
    def _jvp(primals, tangents):
        return prim.bind1(*primals), None

    # Eager grad evaluates a comparison of a differentiated value without its jvp rule (no
    # tangent interpreter pushed): the boolean result carries no tangent, so this rule is
    # never called (`eager_vjp.VJPTrace._record`).
    prim.def_eager_vjp(_no_cotangent)
    return prim


def _no_cotangent(ct: Any, out: Any, primals: Any, linear: Any) -> list[Any]:
    raise AssertionError("a comparison's boolean result has no cotangent")


eq_p = _comparison("eq", "EQ", "biufc", np.equal)
ne_p = _comparison("ne", "NE", "biufc", np.not_equal)
lt_p = _comparison("lt", "LT", "biuf", np.less)
le_p = _comparison("le", "LE", "biuf", np.less_equal)
gt_p = _comparison("gt", "GT", "biuf", np.greater)
ge_p = _comparison("ge", "GE", "biuf", np.greater_equal)


def eq(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x == y`."""
    return eq_p.bind1(*promote_python_scalars(x, y))


def ne(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x != y`."""
    return ne_p.bind1(*promote_python_scalars(x, y))


def lt(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x < y`."""
    return lt_p.bind1(*promote_python_scalars(x, y))


def le(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x <= y`."""
    return le_p.bind1(*promote_python_scalars(x, y))


def gt(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x > y`."""
    return gt_p.bind1(*promote_python_scalars(x, y))


def ge(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x >= y`."""
    return ge_p.bind1(*promote_python_scalars(x, y))


__all__ = ["eq", "ge", "gt", "le", "lt", "ne"]
