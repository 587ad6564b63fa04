"""Autodidax Part 2's `flatten_fun`: the one place a user function over pytrees becomes a flat
function over leaves (for tracing), keeping the output tree it produced."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mjcore import core
from mjcore.tree_util import PyTreeDef, tree_flatten, tree_unflatten


def flatten_fun(
    fun: Callable[..., Any], in_tree: PyTreeDef, what: str
) -> tuple[Callable[..., list[Any]], list[PyTreeDef]]:
    """A flat version of `fun` and a cell that receives its output tree once it has run.

    `fun` takes the children of `in_tree` as positional arguments; `what` names it in the
    `TypeError` raised when it returns something that is not an array or a Python scalar.
    """
    out_tree_cell: list[PyTreeDef] = []

    def flat_fun(*flat_args: Any) -> list[Any]:
        out = fun(*tree_unflatten(in_tree, flat_args))
        flat_out, out_tree = tree_flatten(out)
        check_outputs(what, flat_out)
        out_tree_cell.append(out_tree)
        return flat_out

    return flat_fun, out_tree_cell


def check_outputs(what: str, flat_out: Sequence[Any]) -> None:
    """TypeError unless every output leaf of the function `what` is an array or a scalar."""
    for x in flat_out:
        if not core.is_array_like(x):
            raise TypeError(
                f"{what} must return arrays or Python scalars (or pytrees of them), but it "
                f"returned a {type(x).__name__}: {x!r:.80}"
            )
