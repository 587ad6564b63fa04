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

Key paths (``tree_flatten_with_path``, ``keystr``) name each leaf by the keys leading to it, as
in JAX. They come from a second walk, ``_flatten_with_path``, that gives the same leaves and
structure; keeping keys out of ``_flatten`` keeps the hot path as it was.
"""

from __future__ import annotations

import collections
import functools
from itertools import islice
from operator import attrgetter, index

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
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "broadcast_prefix",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]

_LEAF = None


# ---------------------------------------------------------------------------------------------
# Key paths: how each child is reached from its parent.


class _Key:
    """The shared body of the key classes: a frozen record of one field, ``__match_args__[0]``.

    Written out rather than made with ``dataclasses``, which would cost import time and needs
    the module in ``sys.modules`` to resolve string annotations.
    """

    __slots__ = ()
    __match_args__: tuple[str, ...]

    def _value(self) -> Any:
        return getattr(self, self.__match_args__[0])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot assign to {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        equal: bool = self._value() == other._value()  # type: ignore[attr-defined]
        return equal

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._value()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__match_args__[0]}={self._value()!r})"

    def __reduce__(self) -> tuple[type, tuple[Any]]:
        return type(self), (self._value(),)


def _as_int(cls_name: str, field: str, value: Any) -> int:
    """``value`` as a Python int (so ``numpy.int64(3)`` and ``True`` are accepted, as in JAX)."""
    try:
        return index(value)
    except TypeError as err:
        raise TypeError(
            f"{cls_name}: {field} must be an int, got {type(value).__name__} {value!r}"
        ) from err


class SequenceKey(_Key):
    """The key of a tuple or list element: ``str`` is ``[idx]``, as in ``x[0]``."""

    __slots__ = ("idx",)
    __match_args__ = ("idx",)
    idx: int

    def __init__(self, idx: int) -> None:
        object.__setattr__(self, "idx", _as_int("SequenceKey", "idx", idx))

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


class DictKey(_Key):
    """The key of a dict entry: ``str`` is ``[key]`` with the key's repr, as in ``x['a']``."""

    __slots__ = ("key",)
    __match_args__ = ("key",)
    key: Hashable

    def __init__(self, key: Hashable) -> None:
        object.__setattr__(self, "key", key)

    def __str__(self) -> str:
        return f"[{self.key!r}]"


class GetAttrKey(_Key):
    """The key of an attribute (namedtuple and dataclass fields): ``str`` is ``.name``."""

    __slots__ = ("name",)
    __match_args__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"GetAttrKey: name must be a str, got {type(name).__name__} {name!r}")
        object.__setattr__(self, "name", name)

    def __str__(self) -> str:
        return f".{self.name}"


class FlattenedIndexKey(_Key):
    """The key of the ``key``-th child of a node registered without keys.

    ``str`` is ``[<flat index 3>]``, since the child has no name beyond its position in what
    the node's flatten function returns.
    """

    __slots__ = ("key",)
    __match_args__ = ("key",)
    key: int

    def __init__(self, key: int) -> None:
        object.__setattr__(self, "key", _as_int("FlattenedIndexKey", "key", key))

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


# A key is any object: the four classes above are the built-in ones, and nodes registered with
# ``register_pytree_with_keys`` may use their own. ``keystr`` prints a key with ``str``.
KeyEntry = object
KeyPath = tuple[KeyEntry, ...]


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Print a key path, as JAX's ``tree_util.keystr``.

    ``keystr((DictKey('a'), SequenceKey(0), GetAttrKey('x')))`` is ``"['a'][0].x"``, and with
    ``simple=True, separator='/'`` it is ``"a/0/x"``.

    Args:
      keys: a key path, such as the paths ``tree_flatten_with_path`` returns.
      simple: print each built-in key as its bare index, key or name. Shorter, but ambiguous
        (``0`` may be a list index, the dict key ``0`` or the dict key ``'0'``).
      separator: the string put between keys.
    """
    if simple:
        return separator.join([_simple_key_str(key) for key in keys])
    return separator.join([str(key) for key in keys])


def _simple_key_str(key: KeyEntry) -> str:
    if isinstance(key, SequenceKey):
        return str(key.idx)
    if isinstance(key, DictKey):
        return str(key.key)
    if isinstance(key, GetAttrKey):
        return key.name
    if isinstance(key, FlattenedIndexKey):
        return str(key.key)
    return str(key)


# ---------------------------------------------------------------------------------------------
# The registry of node types.


class _NodeType:
    """How to take one registered node type apart and put it back together.

    ``flatten_with_keys`` is ``flatten`` with a key beside each child; it is used only for key
    paths, so ``flatten`` stays the one function on the hot path.
    """

    __slots__ = ("flatten", "unflatten", "flatten_with_keys")

    def __init__(
        self,
        flatten: Callable[[Any], tuple[Iterable[Any], Hashable]],
        unflatten: Callable[[Any, tuple[Any, ...]], Any],
        flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[KeyEntry, Any]], Hashable]],
    ) -> None:
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys


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


def _sequence_flatten_with_keys(
    x: tuple[Any, ...] | list[Any],
) -> tuple[list[tuple[SequenceKey, Any]], None]:
    return [(SequenceKey(i), child) for i, child in enumerate(x)], None


def _dict_flatten(x: dict[Any, Any]) -> tuple[list[Any], tuple[Any, ...]]:
    keys = _sorted_keys(x)
    return list(map(x.__getitem__, keys)), keys


def _dict_flatten_with_keys(x: dict[Any, Any]) -> tuple[list[tuple[DictKey, Any]], tuple[Any, ...]]:
    keys = _sorted_keys(x)
    return [(DictKey(key), x[key]) for key in keys], keys


def _ordered_dict_flatten(
    x: collections.OrderedDict[Any, Any],
) -> tuple[list[Any], tuple[Any, ...]]:
    return list(x.values()), tuple(x)


def _ordered_dict_flatten_with_keys(
    x: collections.OrderedDict[Any, Any],
) -> tuple[list[tuple[DictKey, Any]], tuple[Any, ...]]:
    return [(DictKey(key), child) for key, child in x.items()], tuple(x)


def _defaultdict_flatten(
    x: collections.defaultdict[Any, Any],
) -> tuple[list[Any], tuple[Any, tuple[Any, ...]]]:
    keys = _sorted_keys(x)
    return list(map(x.__getitem__, keys)), (x.default_factory, keys)


def _defaultdict_flatten_with_keys(
    x: collections.defaultdict[Any, Any],
) -> tuple[list[tuple[DictKey, Any]], tuple[Any, tuple[Any, ...]]]:
    keys = _sorted_keys(x)
    return [(DictKey(key), x[key]) for key in keys], (x.default_factory, keys)


def _none_flatten(x: None) -> tuple[tuple[()], None]:
    return (), None


# NB: mutable global state beyond the trace stack, as in JAX: register_pytree_node adds to it.
_registry: dict[type, _NodeType] = {
    tuple: _NodeType(
        _sequence_flatten, lambda aux, children: children, _sequence_flatten_with_keys
    ),
    list: _NodeType(
        _sequence_flatten, lambda aux, children: list(children), _sequence_flatten_with_keys
    ),
    dict: _NodeType(
        _dict_flatten,
        lambda keys, children: dict(zip(keys, children, strict=True)),
        _dict_flatten_with_keys,
    ),
    type(None): _NodeType(_none_flatten, lambda aux, children: None, _none_flatten),
    collections.OrderedDict: _NodeType(
        _ordered_dict_flatten,
        lambda keys, children: collections.OrderedDict(zip(keys, children, strict=True)),
        _ordered_dict_flatten_with_keys,
    ),
    collections.defaultdict: _NodeType(
        _defaultdict_flatten,
        lambda aux, children: collections.defaultdict(aux[0], zip(aux[1], children, strict=True)),
        _defaultdict_flatten_with_keys,
    ),
}


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def register_pytree_node(
    nodetype: type[_T],
    flatten_func: Callable[[_T], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Any, tuple[Any, ...]], _T],
    flatten_with_keys_func: Callable[[_T], tuple[Iterable[tuple[KeyEntry, Any]], Hashable]]
    | None = None,
) -> None:
    """Make instances of ``nodetype`` pytree nodes instead of leaves.

    Args:
      nodetype: the class to register; subclasses are not covered and stay leaves.
      flatten_func: ``x -> (children, aux_data)``; ``aux_data`` must be hashable and comparable,
        because it is part of the ``PyTreeDef``.
      unflatten_func: ``(aux_data, children) -> x``, where ``children`` is a tuple.
      flatten_with_keys_func: optional ``x -> (((key, child), ...), aux_data)``, with the
        children and aux data of ``flatten_func``; it gives the keys of key paths. Without it
        child ``i`` has the key ``FlattenedIndexKey(i)``.

    Raises:
      TypeError: if ``nodetype`` is not a class or a function is not callable.
      ValueError: if ``nodetype`` is already registered (tuple, list, dict, None, OrderedDict,
        defaultdict and ``Partial`` are registered from the start).
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"register_pytree_node: nodetype must be a class, got {nodetype!r}")
    if not callable(flatten_func) or not callable(unflatten_func):
        raise TypeError(
            f"register_pytree_node: flatten_func and unflatten_func must be callable, got "
            f"{flatten_func!r} and {unflatten_func!r} for {nodetype.__name__}"
        )
    if flatten_with_keys_func is not None and not callable(flatten_with_keys_func):
        raise TypeError(
            f"register_pytree_node: flatten_with_keys_func must be callable or None, got "
            f"{flatten_with_keys_func!r} for {nodetype.__name__}"
        )
    if nodetype in _registry:
        raise ValueError(
            f"register_pytree_node: {nodetype!r} is already registered as a pytree node; "
            "register each type once"
        )
    if flatten_with_keys_func is None:
        flatten_with_keys_func = _with_flattened_index_keys(flatten_func)
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func, flatten_with_keys_func)


def _with_flattened_index_keys(
    flatten_func: Callable[[Any], tuple[Iterable[Any], Hashable]],
) -> Callable[[Any], tuple[list[tuple[FlattenedIndexKey, Any]], Hashable]]:
    def flatten_with_keys(x: Any) -> tuple[list[tuple[FlattenedIndexKey, Any]], Hashable]:
        children, aux = flatten_func(x)
        return [(FlattenedIndexKey(i), child) for i, child in enumerate(children)], aux

    return flatten_with_keys


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


def register_pytree_with_keys(
    nodetype: type[_T],
    flatten_with_keys: Callable[[_T], tuple[Iterable[tuple[KeyEntry, Any]], Hashable]],
    unflatten_func: Callable[[Any, tuple[Any, ...]], _T],
    flatten_func: Callable[[_T], tuple[Iterable[Any], Hashable]] | None = None,
) -> None:
    """Register ``nodetype`` as a pytree node whose children have keys, as JAX's function.

    Args:
      nodetype: the class to register.
      flatten_with_keys: ``x -> (((key, child), ...), aux_data)``. The keys appear in the paths
        of ``tree_flatten_with_path``; any object with a readable ``str`` will do, the built-in
        ones being ``SequenceKey``, ``DictKey``, ``GetAttrKey`` and ``FlattenedIndexKey``.
      unflatten_func: ``(aux_data, children) -> x``, where ``children`` is a tuple.
      flatten_func: optional ``x -> (children, aux_data)`` giving the same children and aux data
        without keys, for speed; derived from ``flatten_with_keys`` when omitted.

    Raises:
      TypeError, ValueError: as ``register_pytree_node``.
    """
    if flatten_func is None:
        if not callable(flatten_with_keys):
            raise TypeError(
                f"register_pytree_with_keys: flatten_with_keys must be callable, got "
                f"{flatten_with_keys!r}"
            )

        def flatten_func(x: Any) -> tuple[list[Any], Hashable]:
            pairs, aux = flatten_with_keys(x)
            return [child for _, child in pairs], aux

    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls: type[_T]) -> type[_T]:
    """Class decorator: ``register_pytree_with_keys`` through the class's own methods.

    ``cls`` must define ``tree_flatten_with_keys(self) -> (((key, child), ...), aux_data)`` and
    a classmethod ``tree_unflatten(cls, aux_data, children)``; a ``tree_flatten`` method, if
    present, is used where keys are not needed.

    Raises:
      TypeError: if a required method is missing.
      ValueError: if ``cls`` is already registered.
    """
    if not callable(getattr(cls, "tree_flatten_with_keys", None)) or not callable(
        getattr(cls, "tree_unflatten", None)
    ):
        raise TypeError(
            f"register_pytree_with_keys_class: {cls!r} needs a tree_flatten_with_keys method "
            "and a tree_unflatten classmethod"
        )
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(
        cls,
        cls.tree_flatten_with_keys,  # type: ignore[attr-defined]
        cls.tree_unflatten,  # type: ignore[attr-defined]
        flatten if callable(flatten) else None,
    )
    return cls


def register_dataclass(
    nodetype: type[_T],
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> type[_T]:
    """Register a dataclass-like class as a pytree node, as JAX's ``register_dataclass``.

    Data fields are the children (keys ``GetAttrKey(name)``); meta fields are static: their
    values, as a tuple, are the node's aux data, so they must be hashable, and under ``jit``
    a change of value recompiles. The node is rebuilt with ``nodetype(**fields)``. Returns
    ``nodetype``, so it works as a class decorator::

        @register_dataclass
        @dataclasses.dataclass
        class Layer:
            w: Array
            b: Array
            activation: str = dataclasses.field(default="relu", metadata=dict(static=True))

    Args:
      nodetype: the class; must be a dataclass unless both field lists are given.
      data_fields: names of the child fields. With ``meta_fields`` omitted too, they are taken
        from ``dataclasses.fields``: every field is data unless its metadata has
        ``static=True`` (``mjcore.tree.static`` makes such a field).
      meta_fields: names of the static fields.
      drop_fields: dataclass fields to leave out of both (they must have defaults).

    Raises:
      TypeError: if only one of ``data_fields`` and ``meta_fields`` is given, or neither for a
        class that is not a dataclass.
      ValueError: if the fields of a dataclass are not exactly its ``init=True`` fields less
        ``drop_fields``, or a field is both data and meta.
    """
    import dataclasses  # here, not at the top: only this function needs it (import time)

    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields must both be given or both be "
                f"omitted, got data_fields={data_fields!r} and meta_fields={meta_fields!r}"
            )
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                f"register_dataclass: {nodetype!r} is not a dataclass, so data_fields and "
                "meta_fields are required"
            )
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    # Tuples, so that a caller mutating its lists later cannot change the registration.
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        given = {*data_fields, *meta_fields}
        if given != init_fields:
            msg = (
                f"register_dataclass: data_fields and meta_fields of {nodetype.__name__} must "
                "be exactly its dataclass fields with init=True, less drop_fields."
            )
            if missing := init_fields - given:
                msg += f" Missing: {sorted(missing)}; add them to drop_fields to leave them out."
            if unexpected := given - init_fields:
                msg += f" Unexpected fields: {sorted(unexpected)}."
            raise ValueError(msg)
    if overlap := set(data_fields) & set(meta_fields):
        raise ValueError(
            f"register_dataclass: data_fields and meta_fields of {nodetype.__name__} must not "
            f"overlap, but both hold {sorted(overlap)}"
        )
    get_data, get_meta = _attr_tuple(data_fields), _attr_tuple(meta_fields)
    data_keys = tuple(GetAttrKey(name) for name in data_fields)

    def flatten(x: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        return get_data(x), get_meta(x)

    def flatten_with_keys(x: Any) -> tuple[list[tuple[GetAttrKey, Any]], tuple[Any, ...]]:
        return list(zip(data_keys, get_data(x), strict=True)), get_meta(x)

    def unflatten(meta: tuple[Any, ...], data: tuple[Any, ...]) -> Any:
        return nodetype(
            **dict(zip(meta_fields, meta, strict=True)), **dict(zip(data_fields, data, strict=True))
        )

    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def _attr_tuple(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """``x -> tuple(getattr(x, name) for name in names)``, without a generator per call."""
    if not names:
        return lambda x: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda x: (get(x),)
    getter: Callable[[Any], tuple[Any, ...]] = attrgetter(*names)
    return getter


def _static_flatten(x: Any) -> tuple[tuple[()], Any]:
    return (), x


def register_static(cls: type[_T]) -> type[_T]:
    """Register ``cls`` as a pytree node with no children, its instances being the aux data.

    Instances are then static under ``jit`` without ``static_argnums``: they are hashed and
    compared for the compilation cache, so ``cls`` must be hashable. Returns ``cls``, so it
    works as a class decorator.

    Raises:
      ValueError: if ``cls`` is already registered.
    """
    register_pytree_with_keys(cls, _static_flatten, lambda x, children: x, _static_flatten)
    return cls


class _HashableCallableShim:
    """Holds a ``functools.partial`` given to ``Partial`` as its function.

    Without it ``functools.partial`` would merge the inner partial's arguments into the new
    one, turning them into pytree children; JAX keeps them in the (static) function instead.
    Calls, hashing and equality go to the wrapped callable.
    """

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def __hash__(self) -> int:
        return hash(self.fun)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _HashableCallableShim):
            return bool(self.fun == other.fun)
        return bool(self.fun == other)

    def __repr__(self) -> str:
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):  # type: ignore[type-arg]
    """``functools.partial`` as a pytree, as JAX's ``tree_util.Partial``.

    ``Partial(func, *args, **keywords)`` calls like ``functools.partial``; ``args`` and
    ``keywords`` are its children and ``func`` is its static aux data. So a ``Partial`` can be
    passed to (and returned from) ``jit``, ``grad`` and ``vmap``, which transform its bound
    arguments; ``Partial(f)`` with no arguments wraps a plain function so it can be passed.

    Equal structures need the same ``func`` (functions compare by identity), so build a
    ``Partial`` from a function defined once rather than a fresh lambda per call, or ``jit``
    recompiles. If ``func`` is itself a ``functools.partial``, its arguments stay part of the
    static ``func``, as in JAX.
    """

    def __new__(cls, func: Callable[..., Any], *args: Any, **keywords: Any) -> Partial:
        if isinstance(func, functools.partial):
            shim = _HashableCallableShim(func)
            out = super().__new__(cls, shim, *args, **keywords)
            # So that ``p.func.func``, ``.args`` and ``.keywords`` read as for the original.
            shim.func = func.func  # type: ignore[attr-defined]
            shim.args = func.args  # type: ignore[attr-defined]
            shim.keywords = func.keywords  # type: ignore[attr-defined]
            return out
        return super().__new__(cls, func, *args, **keywords)


def _partial_flatten(p: Partial) -> tuple[tuple[tuple[Any, ...], dict[str, Any]], Any]:
    return (p.args, p.keywords), p.func


def _partial_unflatten(func: Callable[..., Any], children: tuple[Any, ...]) -> Partial:
    return Partial(func, *children[0], **children[1])


register_pytree_node(Partial, _partial_flatten, _partial_unflatten)


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
# Key paths. Not on the hot path, so written for clarity: one walk beside _flatten that gives
# the same leaves and the same structure.

if TYPE_CHECKING:
    _IsLeafWithPath: TypeAlias = "Callable[[KeyPath, Any], bool] | None"


def _make_node(nodetype: type, aux: Any, nodes: list[_Node]) -> _Node:
    """A node in the canonical form (a count when every child is a leaf)."""
    if nodes.count(_LEAF) == len(nodes):
        return (nodetype, aux, len(nodes))
    return (nodetype, aux, tuple(nodes))


def _flatten_with_path(
    x: Any, path: KeyPath, leaves: list[tuple[KeyPath, Any]], is_leaf: _IsLeafWithPath
) -> _Node:
    """``_flatten`` with a key path beside each leaf; ``is_leaf(path, x)`` is already false."""
    nodetype = type(x)
    entry = _registry.get(nodetype)
    if entry is not None:
        pairs, aux = entry.flatten_with_keys(x)
    elif _is_namedtuple(x):
        pairs, aux = zip(map(GetAttrKey, nodetype._fields), x, strict=True), None  # type: ignore[attr-defined]
    else:
        leaves.append((path, x))
        return _LEAF
    nodes: list[_Node] = []
    for key, child in pairs:
        child_path = (*path, key)
        if is_leaf is not None and is_leaf(child_path, child):
            leaves.append((child_path, child))
            nodes.append(_LEAF)
        else:
            nodes.append(_flatten_with_path(child, child_path, leaves, is_leaf))
    return _make_node(nodetype, aux, nodes)


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """``tree_flatten`` with the key path of each leaf, as JAX's function.

    A key path is a tuple of keys, one per node from the root down: ``SequenceKey(i)`` for
    tuples and lists, ``DictKey(k)`` for dicts (in sorted key order, as the leaves),
    ``GetAttrKey(name)`` for namedtuples and registered dataclasses, ``FlattenedIndexKey(i)``
    for nodes registered without keys, and a registered node's own keys otherwise. ``keystr``
    prints a path, e.g. ``"['a'][0]"``.

    Args:
      tree: the pytree.
      is_leaf: optional predicate as in ``tree_flatten``, called with the value, or with
        ``(path, value)`` when ``is_leaf_takes_path`` is true.
      is_leaf_takes_path: whether ``is_leaf`` takes the path too.

    Returns:
      ``([(path, leaf), ...], treedef)``, the leaves and treedef being those of ``tree_flatten``.
    """
    is_leaf_with_path: _IsLeafWithPath = is_leaf
    if is_leaf is not None and not is_leaf_takes_path:
        is_leaf_with_path = _ignoring_path(is_leaf)
    leaves: list[tuple[KeyPath, Any]] = []
    if is_leaf_with_path is not None and is_leaf_with_path((), tree):
        leaves.append(((), tree))
        return leaves, PyTreeDef(_LEAF, 1)
    node = _flatten_with_path(tree, (), leaves, is_leaf_with_path)
    return leaves, PyTreeDef(node, len(leaves))


def _ignoring_path(is_leaf: Callable[[Any], bool]) -> Callable[[KeyPath, Any], bool]:
    def is_leaf_with_path(path: KeyPath, x: Any) -> bool:
        return bool(is_leaf(x))

    return is_leaf_with_path


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """The ``(path, leaf)`` pairs of ``tree_flatten_with_path``."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """The children and aux data of a pytree node, without going deeper.

    ``flatten_one_level({'b': 1, 'a': [2]})`` is ``([[2], 1], ('a', 'b'))``. As in JAX the aux
    data of a namedtuple is its class.

    Raises:
      ValueError: if ``tree`` is a leaf.
    """
    nodetype: type = type(tree)
    entry = _registry.get(nodetype)
    if entry is not None:
        return entry.flatten(tree)
    if _is_namedtuple(tree):
        return list(tree), nodetype
    raise ValueError(
        f"flatten_one_level: can't tree-flatten type: {nodetype!r}; it is a leaf, not a pytree "
        "node (register it with register_pytree_node to make it one)"
    )


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """``flatten_one_level`` with each child's key: ``([(key, child), ...], aux_data)``.

    NB: a namedtuple's keys are ``GetAttrKey`` of each field, as in ``tree_flatten_with_path``;
    JAX 0.10.2 gives every child the first field's name here.

    Raises:
      ValueError: if ``tree`` is a leaf.
    """
    nodetype: type = type(tree)
    entry = _registry.get(nodetype)
    if entry is not None:
        return entry.flatten_with_keys(tree)
    if _is_namedtuple(tree):
        fields = nodetype._fields  # type: ignore[attr-defined]
        return list(zip(map(GetAttrKey, fields), tree, strict=True)), nodetype
    raise ValueError(
        f"flatten_one_level_with_keys: can't tree-flatten type: {nodetype!r}; it is a leaf, not "
        "a pytree node (register it with register_pytree_node to make it one)"
    )


def is_tree_node(typ: type) -> bool:
    """Whether instances of ``typ`` are pytree nodes: a registered class or a namedtuple class."""
    return typ in _registry or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


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
            err.path.append(str(_child_key(x, i)))
            raise


def _child_key(x: Any, i: int) -> KeyEntry:
    """The key of child ``i`` of node ``x``, for error messages."""
    pairs = flatten_one_level_with_keys(x)[0]
    return list(pairs)[i][0]


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

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """The structure of this tree with a tree of structure ``inner`` at each leaf."""
        if inner._node is _LEAF:
            return self
        return PyTreeDef(_compose(self._node, inner._node), self._num_leaves * inner._num_leaves)

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


def _compose(node: _Node, inner: _Node) -> _Node:
    if node is _LEAF:
        return inner
    return _make_node(node[0], node[1], [_compose(child, inner) for child in _child_nodes(node)])


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
    columns = [leaves, *_rest_columns("tree_map", treedef, rest)]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(*columns, strict=True)])


def _rest_columns(fname: str, treedef: PyTreeDef, rest: tuple[Any, ...]) -> list[list[Any]]:
    """``[treedef.flatten_up_to(r) for r in rest]``, with errors that name ``fname``."""
    columns = []
    for i, other in enumerate(rest):
        subtrees: list[Any] = []
        try:
            _flatten_up_to(treedef._node, other, subtrees)
        except _StructureMismatch as err:
            raise ValueError(
                f"{fname}: rest[{i}] must have the structure of tree down to its leaves, but "
                f"they differ {err.describe()}; tree has structure {treedef} and rest[{i}] has "
                f"{tree_structure(other)}"
            ) from None
        columns.append(subtrees)
    return columns


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """``tree_map`` with the key path of each leaf as ``f``'s first argument.

    Meaning, for ``tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path) == (pairs,
    treedef)``::

        columns = [[p for p, _ in pairs], [x for _, x in pairs]]
        columns += [treedef.flatten_up_to(r) for r in rest]
        return tree_unflatten(treedef, [f(*xs) for xs in zip(*columns)])

    Raises:
      ValueError: if a tree in ``rest`` does not match, naming both structures.
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    paths = [path for path, _ in pairs]
    leaves = [leaf for _, leaf in pairs]
    columns = [paths, leaves, *_rest_columns("tree_map_with_path", treedef, rest)]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(*columns, strict=True)])


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Turn a tree of structure outer-of-inner into one of structure inner-of-outer.

    ``tree_transpose(tree_structure([0, 0]), tree_structure((0, 0, 0)), [(1, 2, 3), (4, 5,
    6)])`` is ``([1, 4], [2, 5], [3, 6])``. Meaning, with ``n = outer_treedef.num_leaves`` and
    ``m = inner_treedef.num_leaves``::

        leaves = tree_leaves(pytree_to_transpose)
        columns = [[leaves[i * m + j] for i in range(n)] for j in range(m)]
        return inner_treedef.unflatten([outer_treedef.unflatten(c) for c in columns])

    As in JAX only the number of leaves is checked, not the whole structure.

    Args:
      outer_treedef: the outer structure.
      inner_treedef: the structure of each subtree at a leaf of ``outer_treedef``; None infers
        it from the first such subtree.
      pytree_to_transpose: the tree to transpose.

    Raises:
      TypeError: if the tree does not have ``n * m`` leaves.
      ValueError: if ``inner_treedef`` is None and ``outer_treedef`` is not a prefix of the
        tree or has no leaves.
    """
    leaves, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
        if not subtrees:
            raise ValueError(
                f"tree_transpose: cannot infer inner_treedef, since outer_treedef "
                f"{outer_treedef} has no leaves; pass inner_treedef"
            )
        inner_treedef = tree_structure(subtrees[0])
    n, m = outer_treedef.num_leaves, inner_treedef.num_leaves
    if len(leaves) != n * m:
        raise TypeError(
            f"tree_transpose: pytree_to_transpose must have outer_treedef's structure with "
            f"inner_treedef's at each leaf, {outer_treedef.compose(inner_treedef)} "
            f"({n} * {m} leaves), but it has structure {treedef} ({len(leaves)} leaves)"
        )
    # NB: with n == 0 this gives m outer trees without leaves, where JAX raises.
    return inner_treedef.unflatten([outer_treedef.unflatten(leaves[j::m]) for j in range(m)])


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
    try:
        return _broadcast_leaves(prefix_leaves, prefix_def, full_tree)
    except _StructureMismatch as err:
        raise ValueError(
            f"got prefix {prefix_tree!r} for value tree {tree_structure(full_tree)}; they differ "
            f"{err.describe()}"
        ) from None


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: _IsLeaf = None) -> Any:
    """``full_tree`` with each leaf replaced by the matching leaf of ``prefix_tree``.

    ``tree_broadcast((1, 2, 3), (0, {'a': 0, 'b': 0}, (0, 0)))`` is ``(1, {'a': 2, 'b': 2},
    (3, 3))``. As in JAX, and unlike ``broadcast_prefix``, None in ``prefix_tree`` is a node
    without children (so it matches only None) unless ``is_leaf`` says otherwise.

    Args:
      prefix_tree: a tree prefix of ``full_tree``.
      full_tree: the tree whose structure the result has.
      is_leaf: optional leaf predicate for ``prefix_tree``.

    Raises:
      ValueError: if ``prefix_tree`` is not a prefix of ``full_tree``.
    """
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    try:
        full_leaves = _broadcast_leaves(prefix_leaves, prefix_def, full_tree)
    except _StructureMismatch as err:
        raise ValueError(
            f"tree_broadcast: prefix_tree must be a tree prefix of full_tree, but they differ "
            f"{err.describe()}; prefix_tree has structure {prefix_def} and full_tree has "
            f"{tree_structure(full_tree)}"
        ) from None
    return tree_unflatten(tree_structure(full_tree), full_leaves)


def _broadcast_leaves(prefix_leaves: list[Any], prefix_def: PyTreeDef, full_tree: Any) -> list[Any]:
    """Each prefix leaf once per leaf of the matching subtree of ``full_tree``.

    Raises:
      _StructureMismatch: if ``prefix_def`` is not a prefix of ``full_tree``'s structure.
    """
    subtrees: list[Any] = []
    _flatten_up_to(prefix_def._node, full_tree, subtrees)
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


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose children have the structures ``treedefs``.

    ``treedef_tuple([tree_structure(x), tree_structure(y)]) == tree_structure((x, y))``.

    Raises:
      TypeError: if an element is not a ``PyTreeDef``.
    """
    nodes = []
    num_leaves = 0
    for treedef in treedefs:
        if not isinstance(treedef, PyTreeDef):
            raise TypeError(
                f"treedef_tuple: expected PyTreeDefs, got {type(treedef).__name__} {treedef!r}"
            )
        nodes.append(treedef._node)
        num_leaves += treedef._num_leaves
    return PyTreeDef(_make_node(tuple, None, nodes), num_leaves)


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


def tree_reduce_associative(
    operation: Callable[[Any, Any], Any],
    tree: Any,
    *,
    identity: Any = _NO_INITIALIZER,
    is_leaf: _IsLeaf = None,
) -> Any:
    """Reduce the leaves with an associative ``operation``, as a balanced binary tree.

    ``operation(operation(a, b), operation(c, d))`` rather than ``tree_reduce``'s left fold, so
    the depth is logarithmic: the halves of the leaf list are reduced recursively, the first
    half having ``len // 2`` leaves. ``identity`` is returned for a tree without leaves and is
    not used otherwise.

    Raises:
      TypeError: if the tree has no leaves and no identity is given.
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_INITIALIZER:
            raise TypeError(
                "tree_reduce_associative: the tree has no leaves and no identity was given; "
                "pass identity"
            )
        return identity
    return _balanced_reduce(operation, leaves)


def _balanced_reduce(operation: Callable[[Any, Any], Any], leaves: list[Any]) -> Any:
    if len(leaves) == 1:
        return leaves[0]
    half = len(leaves) // 2
    return operation(
        _balanced_reduce(operation, leaves[:half]), _balanced_reduce(operation, leaves[half:])
    )
