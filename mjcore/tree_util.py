"""Autodidax Part 1 (pytrees and flattening user functions): tree_flatten, PyTreeDef, tree_map.

A pytree is a tuple, list, dict, None, namedtuple, OrderedDict, defaultdict or registered class
whose children are pytrees; anything else is a leaf. ``tree_flatten`` turns a pytree into its
leaves (in a fixed order) and a ``PyTreeDef`` describing the rest, and ``tree_unflatten`` turns
them back. Every transformed call flattens its arguments and unflattens its results, so the two
walks below are written for speed: no closures or comprehensions per call (in Python 3.11 each
comprehension allocates a function), and tuples and lists take a fast path before the registry.

The structure is a nested tuple, so equality and hashing of a ``PyTreeDef`` run in C:

* a leaf is ``_LEAF`` (``None``);
* a node is ``(nodetype, aux_data, children)`` where ``children`` is the number of children when
  all of them are leaves, and otherwise a tuple of child structures. The count form is canonical
  (used whenever it applies), so equal structures are equal tuples.
"""

from __future__ import annotations

import collections
import functools
from itertools import islice

# Spelled out rather than imported: typing costs ~5 ms to import, and only checkers need it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
    from typing import Any, TypeAlias, TypeVar

    _T = TypeVar("_T")
    # A structure: _LEAF or (nodetype, aux_data, int | tuple[_Node, ...]).
    _Node: TypeAlias = Any
    _IsLeaf: TypeAlias = "Callable[[Any], bool] | None"

__all__ = [
    "PyTreeDef",
    "all_leaves",
    "broadcast_prefix",
    "register_pytree_node",
    "register_pytree_node_class",
    "tree_all",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_reduce",
    "tree_structure",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
]

_LEAF = None


class _NodeType:
    """How to take one registered node type apart and put it back together."""

    __slots__ = ("flatten", "unflatten")

    def __init__(
        self,
        flatten: Callable[[Any], tuple[Iterable[Any], Hashable]],
        unflatten: Callable[[Any, tuple[Any, ...]], Any],
    ) -> None:
        self.flatten = flatten
        self.unflatten = unflatten


def _sorted_keys(d: dict[Any, Any]) -> tuple[Any, ...]:
    try:
        return tuple(sorted(d))
    except TypeError as err:
        # NB: ValueError, as JAX's tree_util raises, so callers catch one type for bad trees.
        raise ValueError(
            f"tree_flatten: cannot sort the dict keys {list(d)!r} ({err}); pytree dicts need "
            "mutually comparable keys, so use keys of one type or an OrderedDict"
        ) from err


def _sequence_flatten(x: tuple[Any, ...] | list[Any]) -> tuple[Iterable[Any], None]:
    return x, None


def _dict_flatten(x: dict[Any, Any]) -> tuple[list[Any], tuple[Any, ...]]:
    keys = _sorted_keys(x)
    return list(map(x.__getitem__, keys)), keys


def _ordered_dict_flatten(
    x: collections.OrderedDict[Any, Any],
) -> tuple[list[Any], tuple[Any, ...]]:
    return list(x.values()), tuple(x)


def _defaultdict_flatten(
    x: collections.defaultdict[Any, Any],
) -> tuple[list[Any], tuple[Any, tuple[Any, ...]]]:
    keys = _sorted_keys(x)
    return list(map(x.__getitem__, keys)), (x.default_factory, keys)


def _none_flatten(x: None) -> tuple[tuple[()], None]:
    return (), None


# NB: mutable global state beyond the trace stack, as in JAX: register_pytree_node adds to it.
_registry: dict[type, _NodeType] = {
    tuple: _NodeType(_sequence_flatten, lambda aux, children: children),
    list: _NodeType(_sequence_flatten, lambda aux, children: list(children)),
    dict: _NodeType(_dict_flatten, lambda keys, children: dict(zip(keys, children, strict=True))),
    type(None): _NodeType(_none_flatten, lambda aux, children: None),
    collections.OrderedDict: _NodeType(
        _ordered_dict_flatten,
        lambda keys, children: collections.OrderedDict(zip(keys, children, strict=True)),
    ),
    collections.defaultdict: _NodeType(
        _defaultdict_flatten,
        lambda aux, children: collections.defaultdict(aux[0], zip(aux[1], children, strict=True)),
    ),
}


def register_pytree_node(
    nodetype: type[_T],
    flatten_func: Callable[[_T], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Any, tuple[Any, ...]], _T],
) -> None:
    """Make instances of ``nodetype`` pytree nodes instead of leaves.

    Args:
      nodetype: the class to register; subclasses are not covered and stay leaves.
      flatten_func: ``x -> (children, aux_data)``; ``aux_data`` must be hashable and comparable,
        because it is part of the ``PyTreeDef``.
      unflatten_func: ``(aux_data, children) -> x``, where ``children`` is a tuple.

    Raises:
      TypeError: if ``nodetype`` is not a class or a function is not callable.
      ValueError: if ``nodetype`` is already registered (tuple, list, dict, None, OrderedDict
        and defaultdict are registered from the start).
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"register_pytree_node: nodetype must be a class, got {nodetype!r}")
    if not callable(flatten_func) or not callable(unflatten_func):
        raise TypeError(
            f"register_pytree_node: flatten_func and unflatten_func must be callable, got "
            f"{flatten_func!r} and {unflatten_func!r} for {nodetype.__name__}"
        )
    if nodetype in _registry:
        raise ValueError(
            f"register_pytree_node: {nodetype!r} is already registered as a pytree node; "
            "register each type once"
        )
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func)


def register_pytree_node_class(cls: type[_T]) -> type[_T]:
    """Class decorator: register ``cls`` through its own flatten and unflatten methods.

    ``cls`` must define a method ``tree_flatten(self) -> (children, aux_data)`` and a
    classmethod ``tree_unflatten(cls, aux_data, children)``; see ``register_pytree_node``.

    Raises:
      TypeError: if either method is missing.
      ValueError: if ``cls`` is already registered.
    """
    if not callable(getattr(cls, "tree_flatten", None)) or not callable(
        getattr(cls, "tree_unflatten", None)
    ):
        raise TypeError(
            f"register_pytree_node_class: {cls!r} needs a tree_flatten method and a "
            "tree_unflatten classmethod"
        )
    register_pytree_node(cls, cls.tree_flatten, cls.tree_unflatten)  # type: ignore[attr-defined]
    return cls


# ---------------------------------------------------------------------------------------------
# Flattening and unflattening: the hot path.


def _flatten(x: Any, leaves: list[Any], is_leaf: _IsLeaf) -> _Node:
    """Append the leaves of ``x`` to ``leaves`` and return its structure.

    The caller has already checked that ``is_leaf(x)`` is false, so it is called once per value.
    """
    nodetype = type(x)
    if nodetype is tuple or nodetype is list:
        children, aux = x, None
    else:
        entry = _registry.get(nodetype)
        if entry is not None:
            children, aux = entry.flatten(x)
        elif isinstance(x, tuple) and hasattr(nodetype, "_fields"):  # a namedtuple
            children, aux = x, None
        else:
            leaves.append(x)
            return _LEAF
    start = len(leaves)
    nodes = None  # child structures, built only once some child is not a leaf
    for child in children:
        # Leaves are decided here rather than by a call, since most children are leaves. A
        # tuple subclass might be a namedtuple, so it goes to _flatten to find out.
        if (is_leaf is not None and is_leaf(child)) or (
            type(child) not in _registry and not isinstance(child, tuple)
        ):
            leaves.append(child)
            if nodes is not None:
                nodes.append(_LEAF)
        elif nodes is not None:
            nodes.append(_flatten(child, leaves, is_leaf))
        else:
            num_leaf_children = len(leaves) - start
            node = _flatten(child, leaves, is_leaf)
            if node is not _LEAF:
                nodes = [_LEAF] * num_leaf_children
                nodes.append(node)
    if nodes is None:
        return (nodetype, aux, len(leaves) - start)
    return (nodetype, aux, tuple(nodes))


def _unflatten(node: _Node, leaves: Iterator[Any]) -> Any:
    """Rebuild the value with structure ``node`` (not a leaf), consuming the ``leaves`` iterator."""
    nodetype, aux, children = node
    if children.__class__ is int:
        values = tuple(islice(leaves, children))
    else:
        values_list = []
        for child in children:
            values_list.append(next(leaves) if child is _LEAF else _unflatten(child, leaves))
        values = tuple(values_list)
    if nodetype is tuple:
        return values
    if nodetype is list:
        return list(values)
    entry = _registry.get(nodetype)
    if entry is None:  # a namedtuple
        return nodetype(*values)
    return entry.unflatten(aux, values)


def tree_flatten(tree: Any, is_leaf: _IsLeaf = None) -> tuple[list[Any], PyTreeDef]:
    """Flatten a pytree into its leaves and structure, like JAX's `tree_util.tree_flatten`.

    Leaves come in depth-first order, dict children in sorted key order and OrderedDict
    children in insertion order. None is a node with no children, not a leaf.

    Args:
      tree: the pytree.
      is_leaf: optional predicate called on each value before it is taken apart; a true result
        makes the value a leaf, so for example ``lambda x: x is None`` keeps Nones as leaves.

    Returns:
      ``(leaves, treedef)`` with ``tree_unflatten(treedef, leaves)`` rebuilding ``tree``.

    Raises:
      ValueError: if a dict has keys that cannot be sorted.
    """
    leaves: list[Any] = []
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return leaves, PyTreeDef(_LEAF, 1)
    node = _flatten(tree, leaves, is_leaf)
    return leaves, PyTreeDef(node, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree from its structure and leaves; the inverse of ``tree_flatten``.

    Raises:
      ValueError: if the number of leaves differs from ``treedef.num_leaves``.
    """
    seq: Sequence[Any] = leaves if isinstance(leaves, (list, tuple)) else list(leaves)
    if len(seq) != treedef._num_leaves:
        raise ValueError(
            f"tree_unflatten: {treedef} takes {treedef._num_leaves} leaves, got {len(seq)}"
        )
    node = treedef._node
    if node is _LEAF:
        return seq[0]
    return _unflatten(node, iter(seq))


def tree_leaves(tree: Any, is_leaf: _IsLeaf = None) -> list[Any]:
    """The leaves of a pytree, in ``tree_flatten`` order."""
    if is_leaf is not None and is_leaf(tree):
        return [tree]
    leaves: list[Any] = []
    _flatten(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: _IsLeaf = None) -> PyTreeDef:
    """The ``PyTreeDef`` of a pytree; see ``tree_flatten``."""
    return tree_flatten(tree, is_leaf)[1]


# ---------------------------------------------------------------------------------------------
# Matching a structure against a tree with possibly deeper subtrees (tree_map, prefixes).


class _StructureMismatch(ValueError):
    """Internal: a tree does not match a structure. Public functions re-raise a ValueError.

    ``path`` collects key strings innermost first while the exception unwinds.
    """

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.path: list[str] = []

    def describe(self) -> str:
        where = "".join(reversed(self.path))
        return f"at key path {where}: {self.detail}" if where else f"at the root: {self.detail}"


def _type_name(nodetype: type) -> str:
    return "None" if nodetype is type(None) else nodetype.__name__


def _key_str(nodetype: type, aux: Any, i: int) -> str:
    """The key of child ``i`` as JAX's ``keystr`` would print it."""
    if nodetype is dict or nodetype is collections.OrderedDict:
        return f"[{aux[i]!r}]"
    if nodetype is collections.defaultdict:
        return f"[{aux[1][i]!r}]"
    if nodetype not in _registry:  # a namedtuple
        return f".{nodetype._fields[i]}"  # type: ignore[attr-defined]
    return f"[{i}]"


def _flatten_up_to(node: _Node, x: Any, subtrees: list[Any]) -> None:
    """Append to ``subtrees`` the subtrees of ``x`` at the leaves of structure ``node``."""
    if node is _LEAF:
        subtrees.append(x)
        return
    nodetype, aux, children = node
    if type(x) is not nodetype:
        raise _StructureMismatch(
            f"expected {_type_name(nodetype)}, got {type(x).__name__} {_short_repr(x)}"
        )
    entry = _registry.get(nodetype)
    if entry is None:  # a namedtuple
        x_children, x_aux = x, None
    else:
        x_children, x_aux = entry.flatten(x)
        if x_aux != aux:
            what = "keys" if nodetype is dict or nodetype is collections.OrderedDict else "aux data"
            raise _StructureMismatch(
                f"expected {_type_name(nodetype)} with {what} {aux!r}, got {what} {x_aux!r}"
            )
        if x_children.__class__ is not list and x_children.__class__ is not tuple:
            x_children = tuple(x_children)
    num_children = children if children.__class__ is int else len(children)
    if len(x_children) != num_children:
        if isinstance(x, tuple | list):
            what = f"of length {num_children}, got length {len(x_children)}"
        else:
            what = f"with {num_children} children, got {len(x_children)}"
        raise _StructureMismatch(f"expected {_type_name(nodetype)} {what}: {_short_repr(x)}")
    if children.__class__ is int:
        subtrees.extend(x_children)
        return
    for i, child in enumerate(children):
        try:
            _flatten_up_to(child, x_children[i], subtrees)
        except _StructureMismatch as err:
            err.path.append(_key_str(nodetype, aux, i))
            raise


def _short_repr(x: Any, limit: int = 80) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# The structure object.


class PyTreeDef:
    """The structure of a pytree: everything but its leaves.

    Two treedefs are equal (and hash equal) iff they have the same shape, node types and aux
    data, such as dict keys. Get one from ``tree_flatten`` or ``tree_structure``.
    """

    __slots__ = ("_node", "_num_leaves", "_hash")

    def __init__(self, node: _Node, num_leaves: int) -> None:
        self._node = node
        self._num_leaves = num_leaves
        self._hash: int | None = None

    @property
    def num_leaves(self) -> int:
        """The number of leaves."""
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """The number of nodes, leaves included, as in JAX: ``(1, None)`` has 3."""
        return _count_nodes(self._node)

    def children(self) -> list[PyTreeDef]:
        """The structures of the root's children (empty for a leaf)."""
        if self._node is _LEAF:
            return []
        return [PyTreeDef(child, _count_leaves(child)) for child in _child_nodes(self._node)]

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Rebuild a pytree from leaves; see ``tree_unflatten``."""
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of ``tree`` at this structure's leaves, which must be a prefix of it.

        For example ``tree_structure((1, 2)).flatten_up_to(((3, 4), {'a': 5}))`` is
        ``[(3, 4), {'a': 5}]``.

        Raises:
          ValueError: if ``tree`` does not have this structure down to this structure's leaves,
            naming the key path, what was expected and what was found.
        """
        subtrees: list[Any] = []
        try:
            _flatten_up_to(self._node, tree, subtrees)
        except _StructureMismatch as err:
            raise ValueError(
                f"PyTreeDef.flatten_up_to: tree must have the structure {self} down to its "
                f"leaves, but it does not {err.describe()}"
            ) from None
        return subtrees

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        equal: bool = self._node == other._node
        return equal

    def __hash__(self) -> int:
        # Cached because jit caches look treedefs up on every call.
        if self._hash is None:
            self._hash = hash(self._node)
        return self._hash

    def __repr__(self) -> str:
        return f"PyTreeDef({_node_repr(self._node)})"


def _child_nodes(node: _Node) -> tuple[_Node, ...]:
    children = node[2]
    return (_LEAF,) * children if children.__class__ is int else children


def _count_leaves(node: _Node) -> int:
    if node is _LEAF:
        return 1
    children = node[2]
    if children.__class__ is int:
        return children
    return sum(_count_leaves(child) for child in children)


def _count_nodes(node: _Node) -> int:
    if node is _LEAF:
        return 1
    children = node[2]
    if children.__class__ is int:
        return 1 + children
    return 1 + sum(_count_nodes(child) for child in children)


def _node_repr(node: _Node) -> str:
    """JAX's notation: ``*`` for a leaf, Python syntax for builtins, CustomNode otherwise."""
    if node is _LEAF:
        return "*"
    nodetype, aux, _ = node
    parts = [_node_repr(child) for child in _child_nodes(node)]
    if nodetype is tuple:
        return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"
    if nodetype is list:
        return f"[{', '.join(parts)}]"
    if nodetype is dict:
        items = ", ".join(f"{key!r}: {part}" for key, part in zip(aux, parts, strict=True))
        return f"{{{items}}}"
    if nodetype is type(None):
        return "None"
    if nodetype not in _registry:
        return f"CustomNode(namedtuple[{nodetype.__name__}], [{', '.join(parts)}])"
    return f"CustomNode({nodetype.__name__}[{aux}], [{', '.join(parts)}])"


# ---------------------------------------------------------------------------------------------
# Everything else is built from the functions above.


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: _IsLeaf = None) -> Any:
    """Apply ``f`` to the leaves of ``tree`` (and matching subtrees of ``rest``).

    Meaning, for ``tree_flatten(tree, is_leaf) == (leaves, treedef)``::

        columns = [leaves] + [treedef.flatten_up_to(r) for r in rest]
        return tree_unflatten(treedef, [f(*xs) for xs in zip(*columns)])

    So each tree in ``rest`` has the structure of ``tree`` down to ``tree``'s leaves, where it
    may hold whole subtrees. ``is_leaf`` applies to ``tree`` only.

    Raises:
      ValueError: if a tree in ``rest`` does not match, naming both structures.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return tree_unflatten(treedef, [f(leaf) for leaf in leaves])
    columns = [leaves]
    for i, other in enumerate(rest):
        subtrees: list[Any] = []
        try:
            _flatten_up_to(treedef._node, other, subtrees)
        except _StructureMismatch as err:
            raise ValueError(
                f"tree_map: rest[{i}] must have the structure of tree down to its leaves, but "
                f"they differ {err.describe()}; tree has structure {treedef} and rest[{i}] has "
                f"{tree_structure(other)}"
            ) from None
        columns.append(subtrees)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(*columns, strict=True)])


def _is_none(x: Any) -> bool:
    return x is None


def broadcast_prefix(prefix_tree: Any, full_tree: Any, is_leaf: _IsLeaf = None) -> list[Any]:
    """Repeat each leaf of ``prefix_tree`` once per leaf of the matching subtree of ``full_tree``.

    Used for vmap's ``in_axes``: ``broadcast_prefix((0, None), (x, {'a': y, 'b': z}))`` is
    ``[0, None, None]``, one entry per leaf of the full tree.

    NB: unlike JAX's private ``broadcast_prefix``, None in ``prefix_tree`` is always a leaf
    (so it broadcasts over a whole subtree), as every JAX caller asks for with
    ``is_leaf=lambda x: x is None``. Where both readings are valid they give the same result.

    Args:
      prefix_tree: a tree prefix of ``full_tree``.
      full_tree: the tree whose leaves the result lines up with.
      is_leaf: optional extra leaf predicate for ``prefix_tree``.

    Raises:
      ValueError: if ``prefix_tree`` is not a prefix of ``full_tree``. The message shows both
        trees and does not name a function, so that callers prepend their own, e.g.
        ``f"vmap in_axes specification must be a tree prefix of the corresponding value, {err}"``.
    """
    if is_leaf is None:
        prefix_is_leaf = _is_none
    else:

        def prefix_is_leaf(x: Any) -> bool:
            return x is None or bool(is_leaf(x))

    prefix_leaves, prefix_def = tree_flatten(prefix_tree, prefix_is_leaf)
    subtrees: list[Any] = []
    try:
        _flatten_up_to(prefix_def._node, full_tree, subtrees)
    except _StructureMismatch as err:
        raise ValueError(
            f"got prefix {prefix_tree!r} for value tree {tree_structure(full_tree)}; they differ "
            f"{err.describe()}"
        ) from None
    result: list[Any] = []
    for prefix_leaf, subtree in zip(prefix_leaves, subtrees, strict=True):
        result.extend([prefix_leaf] * len(tree_leaves(subtree)))
    return result


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the root's children; see ``PyTreeDef.children``."""
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` has a single node, as in JAX: true for a leaf and also for ``None``,
    ``()``, ``[]`` and ``{}``."""
    return treedef.num_nodes == 1


def all_leaves(iterable: Iterable[Any], is_leaf: _IsLeaf = None) -> bool:
    """Whether every element is a leaf (a value ``tree_flatten`` would not take apart)."""
    for x in iterable:
        if is_leaf is not None and is_leaf(x):
            continue
        nodetype = type(x)
        if nodetype in _registry or (isinstance(x, tuple) and hasattr(nodetype, "_fields")):
            return False
    return True


def tree_all(tree: Any, *, is_leaf: _IsLeaf = None) -> bool:
    """Whether every leaf is truthy (true for a tree without leaves)."""
    return all(tree_leaves(tree, is_leaf))


class _NoInitializer:
    """Marks that tree_reduce got no initializer (None is a valid one)."""


_NO_INITIALIZER = _NoInitializer()


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _NO_INITIALIZER,
    is_leaf: _IsLeaf = None,
) -> Any:
    """``functools.reduce(function, tree_leaves(tree, is_leaf), initializer)``.

    Raises:
      TypeError: if the tree has no leaves and no initializer is given.
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        if not leaves:
            raise TypeError(
                "tree_reduce: the tree has no leaves and no initializer was given; "
                "pass an initializer"
            )
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)
