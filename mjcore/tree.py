"""JAX's ``jax.tree`` namespace: the ``tree_util`` functions under short names.

Autodidax Part 1's pytrees, as ``mjcore.tree.map(f, tree)`` rather than
``mjcore.tree_util.tree_map(f, tree)``. Each name is the ``tree_util`` function itself, so the
two spellings cannot drift apart. NB: ``map`` and ``all`` shadow the builtins inside this
module, because they are the public names JAX chose; nothing here calls the builtins.
"""

from __future__ import annotations

from mjcore.tree_util import tree_all as all
from mjcore.tree_util import tree_broadcast as broadcast
from mjcore.tree_util import tree_flatten as flatten
from mjcore.tree_util import tree_flatten_with_path as flatten_with_path
from mjcore.tree_util import tree_leaves as leaves
from mjcore.tree_util import tree_leaves_with_path as leaves_with_path
from mjcore.tree_util import tree_map as map
from mjcore.tree_util import tree_map_with_path as map_with_path
from mjcore.tree_util import tree_reduce as reduce
from mjcore.tree_util import tree_reduce_associative as reduce_associative
from mjcore.tree_util import tree_structure as structure
from mjcore.tree_util import tree_transpose as transpose
from mjcore.tree_util import tree_unflatten as unflatten

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]


def static(**kwargs: Any) -> Any:
    """``dataclasses.field(**kwargs)`` marked static for ``tree_util.register_dataclass``.

    The field's metadata gets ``static=True`` (beside any ``metadata`` given), so the field is
    aux data rather than a child::

        @mjcore.tree_util.register_dataclass
        @dataclasses.dataclass
        class Layer:
            w: Array
            activation: str = mjcore.tree.static(default="relu")
    """
    import dataclasses  # here, not at the top: only this function needs it (import time)

    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
