"""Key paths, registration helpers, Partial and the rest of jax.tree_util, with JAX as the oracle.

The node types here are registered with both libraries the same way; they are distinct from
those of tests/test_tree_util.py, since each type can be registered once per session.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import functools
import itertools
import operator
import pickle
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import jax.tree_util as jtu
import numpy as onp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mjcore
import mjnp as np
from mjcore import tree_util as tu

jax.config.update("jax_enable_x64", True)


# ---------------------------------------------------------------------------------------------
# Node types, registered with both libraries.


class Vec(NamedTuple):
    x: Any
    y: Any


class Cell:
    """Registered without keys, so its children have FlattenedIndexKeys."""

    def __init__(self, a: Any, b: Any, tag: str = "t") -> None:
        self.a, self.b, self.tag = a, b, tag

    def __eq__(self, other: object) -> bool:
        return type(other) is Cell and (self.a, self.b, self.tag) == (other.a, other.b, other.tag)

    def __repr__(self) -> str:
        return f"Cell({self.a!r}, {self.b!r}, {self.tag!r})"


def _cell_flatten(c: Cell) -> tuple[tuple[Any, Any], str]:
    return (c.a, c.b), c.tag


def _cell_unflatten(tag: str, children: tuple[Any, ...]) -> Cell:
    return Cell(*children, tag=tag)


tu.register_pytree_node(Cell, _cell_flatten, _cell_unflatten)
jtu.register_pytree_node(Cell, _cell_flatten, _cell_unflatten)


class Named:
    """Registered with keys: children named by GetAttrKey and by a DictKey."""

    def __init__(self, w: Any, extras: Any) -> None:
        self.w, self.extras = w, extras

    def __eq__(self, other: object) -> bool:
        return type(other) is Named and (self.w, self.extras) == (other.w, other.extras)

    def __repr__(self) -> str:
        return f"Named({self.w!r}, {self.extras!r})"


def _named_flatten_with_keys(lib: Any) -> Any:
    def flatten_with_keys(n: Named) -> tuple[tuple[tuple[Any, Any], ...], None]:
        return ((lib.GetAttrKey("w"), n.w), (lib.DictKey("extras"), n.extras)), None

    return flatten_with_keys


def _named_unflatten(aux: None, children: tuple[Any, ...]) -> Named:
    return Named(*children)


tu.register_pytree_with_keys(Named, _named_flatten_with_keys(tu), _named_unflatten)
jtu.register_pytree_with_keys(Named, _named_flatten_with_keys(jtu), _named_unflatten)


def _make_keyed_class(lib: Any) -> type:
    """A register_pytree_with_keys_class class per library (the keys are library objects)."""

    class Keyed:
        def __init__(self, left: Any, right: Any) -> None:
            self.left, self.right = left, right

        def tree_flatten_with_keys(self) -> Any:
            return ((lib.GetAttrKey("left"), self.left), (lib.GetAttrKey("right"), self.right)), 7

        @classmethod
        def tree_unflatten(cls, aux: int, children: tuple[Any, ...]) -> Any:
            return cls(*children)

        def __eq__(self, other: object) -> bool:
            return type(other) is type(self) and (self.left, self.right) == (
                other.left,  # type: ignore[attr-defined]
                other.right,  # type: ignore[attr-defined]
            )

    return Keyed


KeyedOurs = tu.register_pytree_with_keys_class(_make_keyed_class(tu))
KeyedJax = jtu.register_pytree_with_keys_class(_make_keyed_class(jtu))


@dataclasses.dataclass
class Layer:
    w: Any
    b: Any
    activation: str = dataclasses.field(default="relu", metadata=dict(static=True))


tu.register_dataclass(Layer)
jtu.register_dataclass(Layer)


@dataclasses.dataclass(frozen=True)
class Cached:
    """A dataclass with a dropped field and a field outside __init__."""

    value: Any
    scale: float
    note: str = "n"
    derived: int = dataclasses.field(init=False, default=0)


tu.register_dataclass(Cached, data_fields=["value"], meta_fields=["scale"], drop_fields=["note"])
jtu.register_dataclass(Cached, data_fields=["value"], meta_fields=["scale"], drop_fields=["note"])


class Plain:
    """Not a dataclass: register_dataclass with explicit fields."""

    def __init__(self, p: Any, q: Any, mode: str) -> None:
        self.p, self.q, self.mode = p, q, mode

    def __eq__(self, other: object) -> bool:
        return type(other) is Plain and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"Plain({self.p!r}, {self.q!r}, {self.mode!r})"


tu.register_dataclass(Plain, data_fields=("q", "p"), meta_fields=("mode",))
jtu.register_dataclass(Plain, data_fields=("q", "p"), meta_fields=("mode",))


@dataclasses.dataclass(frozen=True)
class Mode:
    name: str


tu.register_static(Mode)
jtu.register_static(Mode)


# ---------------------------------------------------------------------------------------------
# One table of trees for key paths.

PATH_EXAMPLES = {
    "leaf": 3,
    "none": None,
    "empty-containers": ((), [], {}),
    "tuple": (1, (2, 3)),
    "list": [1, [2, [3]]],
    "dict-sorted-keys": {"b": 1, "a": [2, 3], "c": None},
    "dict-int-and-tuple-keys": {2: "x", 1: {(0, 1): "y"}},
    "nested-none": (None, [None, 4], {"k": None}),
    "namedtuple": Vec(1, Vec((2,), [3])),
    "ordered-dict": collections.OrderedDict([("z", 1), ("a", (2,))]),
    "defaultdict": collections.defaultdict(list, {"b": 1, "a": [2]}),
    "registered-no-keys": [Cell(1, (2, 3))],
    "registered-with-keys": {"n": Named(1, {"e": 2, "d": [3]})},
    "dataclass": Layer(w=[1, 2], b=3),
    "dataclass-dropped-field": (Cached(value=(1, 2), scale=2.0),),
    "dataclass-explicit-fields": Plain(p=1, q=(2, 3), mode="m"),
    "static": (Mode("a"), 1),
    "deep": {"params": [Layer(w=Vec(1, 2), b=None)], "cells": (Cell({"u": 4}, 5),)},
}
PATH_IDS = list(PATH_EXAMPLES)


def _path_strs(pairs: list[tuple[Any, Any]]) -> list[tuple[str, str, str]]:
    """Each path as repr, keystr and simple keystr, for comparing the two libraries."""
    return [
        (repr(path), tu.keystr(path), tu.keystr(path, simple=True, separator="/"))
        for path, _ in pairs
    ]


def _jax_path_strs(pairs: list[tuple[Any, Any]]) -> list[tuple[str, str, str]]:
    return [
        (repr(path), jtu.keystr(path), jtu.keystr(path, simple=True, separator="/"))
        for path, _ in pairs
    ]


@pytest.mark.parametrize("name", PATH_IDS)
def test_flatten_with_path_matches_jax(name: str) -> None:
    tree = PATH_EXAMPLES[name]
    pairs, treedef = tu.tree_flatten_with_path(tree)
    jax_pairs, jax_treedef = jtu.tree_flatten_with_path(tree)
    assert [leaf for _, leaf in pairs] == [leaf for _, leaf in jax_pairs]
    assert _path_strs(pairs) == _jax_path_strs(jax_pairs)
    assert repr(treedef) == repr(jax_treedef)
    # The same leaves and the same structure as tree_flatten.
    leaves, plain_treedef = tu.tree_flatten(tree)
    assert [leaf for _, leaf in pairs] == leaves
    assert treedef == plain_treedef and hash(treedef) == hash(plain_treedef)
    assert tu.tree_leaves_with_path(tree) == pairs
    assert tu.tree_unflatten(treedef, leaves) == tree


@pytest.mark.parametrize("name", PATH_IDS)
def test_tree_map_with_path_matches_jax(name: str) -> None:
    tree = PATH_EXAMPLES[name]
    ours = tu.tree_map_with_path(lambda p, x: f"{tu.keystr(p)}={x}", tree)
    theirs = jtu.tree_map_with_path(lambda p, x: f"{jtu.keystr(p)}={x}", tree)
    assert ours == theirs
    assert tu.tree_structure(ours) == tu.tree_structure(tree)
    doubled = tu.tree_map_with_path(lambda p, x, y: (x, y), tree, tree)
    assert doubled == jtu.tree_map_with_path(lambda p, x, y: (x, y), tree, tree)


def test_tree_map_with_path_rest_may_hold_subtrees() -> None:
    tree, other = {"a": 1, "b": (2, 3)}, {"a": [10, 20], "b": ((30,), None)}
    f = lambda p, x, y: (tu.keystr(p), x, y)  # noqa: E731 - short
    jf = lambda p, x, y: (jtu.keystr(p), x, y)  # noqa: E731 - short
    assert tu.tree_map_with_path(f, tree, other) == jtu.tree_map_with_path(jf, tree, other)


def test_tree_map_with_path_mismatch() -> None:
    with pytest.raises(ValueError):
        jtu.tree_map_with_path(lambda p, x, y: x, (1, 2), (1, 2, 3))
    with pytest.raises(
        ValueError, match=r"tree_map_with_path: rest\[0\] must have the structure of tree"
    ):
        tu.tree_map_with_path(lambda p, x, y: x, (1, 2), (1, 2, 3))


IS_LEAF_CASES = [
    ("none-as-leaf", (None, [1, None]), lambda x: x is None),
    ("tuples", [(1, 2), ((3,),)], lambda x: isinstance(x, tuple)),
    ("root", {"a": 1}, lambda x: isinstance(x, dict)),
    ("cell", {"c": Cell(1, 2)}, lambda x: isinstance(x, Cell)),
]


@pytest.mark.parametrize(
    ("tree", "is_leaf"), [c[1:] for c in IS_LEAF_CASES], ids=[c[0] for c in IS_LEAF_CASES]
)
def test_flatten_with_path_is_leaf_matches_jax(tree: Any, is_leaf: Any) -> None:
    pairs, treedef = tu.tree_flatten_with_path(tree, is_leaf)
    jax_pairs, jax_treedef = jtu.tree_flatten_with_path(tree, is_leaf)
    assert [x for _, x in pairs] == [x for _, x in jax_pairs]
    assert _path_strs(pairs) == _jax_path_strs(jax_pairs)
    assert repr(treedef) == repr(jax_treedef)
    assert treedef == tu.tree_structure(tree, is_leaf)


def test_is_leaf_takes_path_matches_jax() -> None:
    tree = {"a": (1, 2), "b": [3, (4, 5)], "c": {"d": (6,)}}

    def stop_at_depth_2(path: Any, x: Any) -> bool:
        return len(path) == 2

    seen: list[str] = []
    jax_seen: list[str] = []

    def record(into: list[str], keystr: Any) -> Any:
        def is_leaf(path: Any, x: Any) -> bool:
            into.append(keystr(path))
            return False

        return is_leaf

    pairs, treedef = tu.tree_flatten_with_path(tree, stop_at_depth_2, is_leaf_takes_path=True)
    jax_pairs, jax_treedef = jtu.tree_flatten_with_path(
        tree, stop_at_depth_2, is_leaf_takes_path=True
    )
    assert _path_strs(pairs) == _jax_path_strs(jax_pairs)
    assert [x for _, x in pairs] == [x for _, x in jax_pairs]
    assert repr(treedef) == repr(jax_treedef)
    tu.tree_leaves_with_path(tree, record(seen, tu.keystr), is_leaf_takes_path=True)
    jtu.tree_leaves_with_path(tree, record(jax_seen, jtu.keystr), is_leaf_takes_path=True)
    assert seen == jax_seen
    mapped = tu.tree_map_with_path(
        lambda p, x: len(p), tree, is_leaf=stop_at_depth_2, is_leaf_takes_path=True
    )
    assert mapped == {"a": (2, 2), "b": [2, 2], "c": {"d": 2}}


# ---------------------------------------------------------------------------------------------
# Keys and keystr.

KEY_CASES = [
    ("sequence", tu.SequenceKey(0), jtu.SequenceKey(0)),
    ("sequence-negative", tu.SequenceKey(-2), jtu.SequenceKey(-2)),
    ("dict-str", tu.DictKey("a"), jtu.DictKey("a")),
    ("dict-int", tu.DictKey(1), jtu.DictKey(1)),
    ("dict-tuple", tu.DictKey((1, "b")), jtu.DictKey((1, "b"))),
    ("getattr", tu.GetAttrKey("x"), jtu.GetAttrKey("x")),
    ("flattened-index", tu.FlattenedIndexKey(3), jtu.FlattenedIndexKey(3)),
]


@pytest.mark.parametrize(
    ("ours", "theirs"), [c[1:] for c in KEY_CASES], ids=[c[0] for c in KEY_CASES]
)
def test_key_str_repr_and_fields_match_jax(ours: Any, theirs: Any) -> None:
    assert str(ours) == str(theirs)
    assert repr(ours) == repr(theirs)
    assert type(ours).__name__ == type(theirs).__name__
    assert type(ours).__match_args__ == type(theirs).__match_args__
    field = type(ours).__match_args__[0]
    assert getattr(ours, field) == getattr(theirs, field)
    assert tu.keystr((ours,), simple=True) == jtu.keystr((theirs,), simple=True)
    # Records: equal by value, hashable, immutable, copyable and picklable.
    twin = type(ours)(getattr(ours, field))
    assert twin == ours and hash(twin) == hash(ours) and twin is not ours
    assert len({ours, twin}) == 1
    with pytest.raises(AttributeError):
        setattr(ours, field, 5)
    with pytest.raises(AttributeError):
        theirs.__setattr__(field, 5)
    assert pickle.loads(pickle.dumps(ours)) == ours
    assert copy.deepcopy(ours) == ours


def test_keys_of_different_classes_differ() -> None:
    keys = [tu.SequenceKey(0), tu.FlattenedIndexKey(0), tu.DictKey(0), tu.GetAttrKey("0")]
    jax_keys = [jtu.SequenceKey(0), jtu.FlattenedIndexKey(0), jtu.DictKey(0), jtu.GetAttrKey("0")]
    for i, j in itertools.product(range(4), repeat=2):
        assert (keys[i] == keys[j]) == (jax_keys[i] == jax_keys[j])
    assert tu.SequenceKey(0) != 0 and jtu.SequenceKey(0) != 0
    assert tu.DictKey("a") != tu.DictKey("b")


def test_keys_match_by_pattern() -> None:
    def describe(key: Any) -> str:
        match key:
            case tu.SequenceKey(idx=i):
                return f"seq {i}"
            case tu.DictKey(key=k):
                return f"dict {k}"
            case tu.GetAttrKey(name):
                return f"attr {name}"
            case tu.FlattenedIndexKey(k):
                return f"flat {k}"
        return "other"

    path = tu.tree_leaves_with_path({"a": [Vec(Cell(1, 2), 3)]})[1][0]
    assert [describe(k) for k in path] == ["dict a", "seq 0", "attr x", "flat 1"]


@pytest.mark.parametrize(
    ("cls", "jax_cls", "bad"),
    [
        (tu.SequenceKey, jtu.SequenceKey, "a"),
        (tu.GetAttrKey, jtu.GetAttrKey, 1),
        (tu.FlattenedIndexKey, jtu.FlattenedIndexKey, 1.5),
    ],
    ids=["sequence", "getattr", "flattened-index"],
)
def test_key_constructor_type_errors(cls: Any, jax_cls: Any, bad: Any) -> None:
    with pytest.raises(TypeError):
        jax_cls(bad)
    with pytest.raises(TypeError, match=f"{cls.__name__}: .* must be an? "):
        cls(bad)


@pytest.mark.parametrize("value", [True, onp.int64(3), onp.uint8(2)], ids=repr)
def test_integer_keys_accept_index_types_like_jax(value: Any) -> None:
    for cls, jax_cls in [
        (tu.SequenceKey, jtu.SequenceKey),
        (tu.FlattenedIndexKey, jtu.FlattenedIndexKey),
    ]:
        assert repr(cls(value)) == repr(jax_cls(value))
        assert type(cls(value)._value()) is int


def test_dict_key_of_unhashable_is_unhashable() -> None:
    with pytest.raises(TypeError):
        hash(jtu.DictKey([1]))
    with pytest.raises(TypeError):
        hash(tu.DictKey([1]))


class CustomKey:
    def __str__(self) -> str:
        return "<custom>"


@pytest.mark.parametrize(
    ("path", "kwargs"),
    [
        ((), {}),
        (("DictKey", "a"), {}),
        (("DictKey", "a", "SequenceKey", 0, "GetAttrKey", "x", "FlattenedIndexKey", 2), {}),
        (("DictKey", "a", "SequenceKey", 0, "GetAttrKey", "x"), {"simple": True}),
        (("DictKey", "a", "SequenceKey", 0, "DictKey", 5), {"simple": True, "separator": "/"}),
        (("DictKey", "a", "DictKey", "b"), {"separator": "."}),
    ],
    ids=["empty", "one", "all-kinds", "simple", "simple-separator", "separator"],
)
def test_keystr_matches_jax(path: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    ours = tuple(getattr(tu, path[i])(path[i + 1]) for i in range(0, len(path), 2))
    theirs = tuple(getattr(jtu, path[i])(path[i + 1]) for i in range(0, len(path), 2))
    assert tu.keystr(ours, **kwargs) == jtu.keystr(theirs, **kwargs)


def test_keystr_of_other_objects_uses_str() -> None:
    path = ("a", 1, CustomKey())
    assert tu.keystr(path) == jtu.keystr(path) == "a1<custom>"
    assert tu.keystr(path, simple=True, separator="/") == "a/1/<custom>"
    assert jtu.keystr(path, simple=True, separator="/") == "a/1/<custom>"


def test_custom_keys_from_register_pytree_with_keys() -> None:
    class Pair:
        def __init__(self, a: Any, b: Any) -> None:
            self.a, self.b = a, b

    tu.register_pytree_with_keys(
        Pair, lambda p: (((CustomKey(), p.a), ("plain", p.b)), None), lambda aux, c: Pair(*c)
    )
    pairs, treedef = tu.tree_flatten_with_path([Pair(1, (2,))])
    assert [tu.keystr(p) for p, _ in pairs] == ["[0]<custom>", "[0]plain[0]"]
    assert [x for _, x in pairs] == tu.tree_leaves([Pair(1, (2,))]) == [1, 2]
    rebuilt = tu.tree_map(lambda x: x * 10, [Pair(1, (2,))])[0]
    assert (rebuilt.a, rebuilt.b) == (10, (20,))


def test_structure_mismatch_names_the_key_path() -> None:
    # Key strings in errors come from the same keys as tree_flatten_with_path.
    cases = [
        ([Cell(1, (2,))], [Cell(1, [2])], r"at key path \[0\]\[<flat index 1>\]: expected tuple"),
        (Named(1, {"e": (1,)}), Named(1, {"e": [1]}), r"at key path \['extras'\]\['e'\]"),
        (Layer(w=(1,), b=2), Layer(w=[1], b=2), r"at key path \.w: expected tuple, got list"),
        (Vec(1, (2,)), Vec(1, [2]), r"at key path \.y: expected tuple"),
    ]
    for tree, other, match in cases:
        with pytest.raises(ValueError, match=match):
            tu.tree_map(lambda x, y: x, tree, other)


# ---------------------------------------------------------------------------------------------
# flatten_one_level, is_tree_node, treedef_tuple, PyTreeDef.compose.

ONE_LEVEL_CASES = {
    "dict": {"b": 1, "a": [2]},
    "list": [1, (2,)],
    "tuple": (1, 2),
    "none": None,
    "empty-tuple": (),
    "ordered-dict": collections.OrderedDict(b=1, a=2),
    "defaultdict": collections.defaultdict(list, b=1),
    "cell": Cell(1, 2, "q"),
    "named": Named(1, 2),
    "dataclass": Layer(w=1, b=2, activation="tanh"),
    "static": Mode("s"),
}


@pytest.mark.parametrize("name", list(ONE_LEVEL_CASES))
def test_flatten_one_level_matches_jax(name: str) -> None:
    tree = ONE_LEVEL_CASES[name]
    children, aux = tu.flatten_one_level(tree)
    jax_children, jax_aux = jtu.flatten_one_level(tree)
    assert list(children) == list(jax_children)
    assert aux == jax_aux
    pairs, aux = tu.flatten_one_level_with_keys(tree)
    jax_pairs, jax_aux = jtu.flatten_one_level_with_keys(tree)
    assert [(str(k), c) for k, c in pairs] == [(str(k), c) for k, c in jax_pairs]
    assert aux == jax_aux


def test_flatten_one_level_namedtuple() -> None:
    tree = Vec(1, (2,))
    assert jtu.flatten_one_level(tree) == ([1, (2,)], Vec)
    assert tu.flatten_one_level(tree) == ([1, (2,)], Vec)
    # NB: JAX 0.10.2 names both children ".x" here; tree_flatten_with_path names them .x, .y.
    pairs, aux = tu.flatten_one_level_with_keys(tree)
    assert pairs == [(tu.GetAttrKey("x"), 1), (tu.GetAttrKey("y"), (2,))] and aux is Vec


@pytest.mark.parametrize(
    "leaf", [1, "a", 2.5, onp.ones(2), (i for i in ()), functools.partial(print)]
)
def test_flatten_one_level_of_a_leaf_raises(leaf: Any) -> None:
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        jtu.flatten_one_level(leaf)
    with pytest.raises(ValueError, match=r"flatten_one_level: can't tree-flatten type: <class"):
        tu.flatten_one_level(leaf)
    with pytest.raises(ValueError, match=r"flatten_one_level_with_keys: can't tree-flatten"):
        tu.flatten_one_level_with_keys(leaf)


@pytest.mark.parametrize(
    "typ",
    [int, str, tuple, list, dict, type(None), Vec, collections.OrderedDict,
     collections.defaultdict, Cell, Named, Layer, Cached, Plain, Mode, functools.partial,
     onp.ndarray],
    ids=lambda t: t.__name__,
)  # fmt: skip
def test_is_tree_node_matches_jax(typ: type) -> None:
    assert tu.is_tree_node(typ) == jtu.is_tree_node(typ)


def test_is_tree_node_partial() -> None:
    assert tu.is_tree_node(tu.Partial) and jtu.is_tree_node(jtu.Partial)


TUPLE_CASES = [
    ("two", [1, {"a": 2, "b": (3,)}]),
    ("leaves", [1, 2, 3]),
    ("empty", []),
    ("nones", [None, (None,)]),
    ("one", [[1, 2]]),
]


@pytest.mark.parametrize("trees", [c[1] for c in TUPLE_CASES], ids=[c[0] for c in TUPLE_CASES])
def test_treedef_tuple_matches_jax(trees: list[Any]) -> None:
    ours = tu.treedef_tuple(tu.tree_structure(t) for t in trees)
    theirs = jtu.treedef_tuple([jtu.tree_structure(t) for t in trees])
    assert repr(ours) == repr(theirs)
    assert ours == tu.tree_structure(tuple(trees))
    assert hash(ours) == hash(tu.tree_structure(tuple(trees)))
    assert (ours.num_leaves, ours.num_nodes) == (theirs.num_leaves, theirs.num_nodes)


def test_treedef_tuple_rejects_non_treedefs() -> None:
    with pytest.raises(TypeError, match="treedef_tuple: expected PyTreeDefs, got int"):
        tu.treedef_tuple([tu.tree_structure(1), 5])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("outer", "inner"),
    [([0, 0], (0, 0, 0)), ({"a": 0, "b": (0,)}, 0), (0, [0, 0]), ((0, None), {"k": 0}), ((), (0,))],
    ids=["list-tuple", "leaf-inner", "leaf-outer", "with-none", "empty-outer"],
)
def test_compose_matches_jax(outer: Any, inner: Any) -> None:
    ours = tu.tree_structure(outer).compose(tu.tree_structure(inner))
    theirs = jtu.tree_structure(outer).compose(jtu.tree_structure(inner))
    assert repr(ours) == repr(theirs)
    assert (ours.num_leaves, ours.num_nodes) == (theirs.num_leaves, theirs.num_nodes)
    assert ours == tu.tree_structure(jtu.tree_unflatten(theirs, [0] * theirs.num_leaves))


# ---------------------------------------------------------------------------------------------
# tree_transpose, tree_broadcast, tree_reduce_associative.

TRANSPOSE_CASES = [
    ("list-of-tuples", [0, 0], (0, 0, 0), [(1, 2, 3), (4, 5, 6)]),
    ("dict-of-lists", {"a": 0, "b": 0}, [0, 0], {"a": [1, 2], "b": [3, 4]}),
    ("tuple-of-dicts", (0, 0, 0), {"x": 0, "y": 0}, ({"x": 1, "y": 2},) * 3),
    ("leaf-outer", 0, (0, 0), (1, 2)),
    ("leaf-inner", (0, 0), 0, (1, 2)),
    ("namedtuple", Vec(0, 0), [0, 0], Vec([1, 2], [3, 4])),
    ("nested-inner", [0, 0], (0, {"k": 0}), [(1, {"k": 2}), (3, {"k": 4})]),
    ("empty-inner", [0, 0], (), [(), ()]),
]


@pytest.mark.parametrize(
    ("outer", "inner", "tree"),
    [c[1:] for c in TRANSPOSE_CASES],
    ids=[c[0] for c in TRANSPOSE_CASES],
)
def test_tree_transpose_matches_jax(outer: Any, inner: Any, tree: Any) -> None:
    ours = tu.tree_transpose(tu.tree_structure(outer), tu.tree_structure(inner), tree)
    theirs = jtu.tree_transpose(jtu.tree_structure(outer), jtu.tree_structure(inner), tree)
    assert ours == theirs
    assert repr(tu.tree_structure(ours)) == repr(jtu.tree_structure(theirs))
    inferred = tu.tree_transpose(tu.tree_structure(outer), None, tree)
    assert inferred == jtu.tree_transpose(jtu.tree_structure(outer), None, tree)
    # Transposing back gives the original.
    back = tu.tree_transpose(tu.tree_structure(inner), tu.tree_structure(outer), ours)
    assert back == tree


def test_tree_transpose_empty_outer() -> None:
    # NB: JAX raises here (it builds no outer trees); mjcore gives one empty outer per inner leaf.
    result = tu.tree_transpose(tu.tree_structure([]), tu.tree_structure((0, 0)), [])
    assert result == ([], [])


def test_tree_transpose_mismatch_raises_type_error() -> None:
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0))
    tree = [(1, 2, 3), (4, 5, 6)]
    with pytest.raises(TypeError, match="Mismatch"):
        jtu.tree_transpose(jtu.tree_structure([0, 0]), jtu.tree_structure((0, 0)), tree)
    with pytest.raises(
        TypeError,
        match=r"tree_transpose: .*PyTreeDef\(\[\(\*, \*\), \(\*, \*\)\]\) \(2 \* 2 leaves\), but "
        r"it has structure PyTreeDef\(\[\(\*, \*, \*\), \(\*, \*, \*\)\]\) \(6 leaves\)",
    ):
        tu.tree_transpose(outer, inner, tree)
    with pytest.raises(ValueError, match=r"PyTreeDef\.flatten_up_to"):
        tu.tree_transpose(tu.tree_structure((0, 0)), None, [(1,), (2,)])
    with pytest.raises(ValueError, match="cannot infer inner_treedef"):
        tu.tree_transpose(tu.tree_structure(()), None, ())


BROADCAST_CASES = [
    ("doc-example", (1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))),
    ("leaf-prefix", 5, {"a": [1, 2], "b": None}),
    ("exact", (1, 2), (3, 4)),
    ("none-matches-none", (1, None), (0, None)),
    ("leaf-over-none", 1, None),
    ("dict", {"a": 1, "b": 2}, {"a": (0, 0), "b": [0]}),
    ("namedtuple", Vec(1, 2), Vec((0, 0), 0)),
    ("registered", Cell(1, 2), Cell([0, 0], {"z": 0})),
]


@pytest.mark.parametrize(
    ("prefix", "full"), [c[1:] for c in BROADCAST_CASES], ids=[c[0] for c in BROADCAST_CASES]
)
def test_tree_broadcast_matches_jax(prefix: Any, full: Any) -> None:
    ours = tu.tree_broadcast(prefix, full)
    theirs = jtu.tree_broadcast(prefix, full)
    assert ours == theirs
    assert tu.tree_structure(ours) == tu.tree_structure(full)
    assert mjcore.tree.broadcast(prefix, full) == jax.tree.broadcast(prefix, full)


def test_tree_broadcast_is_leaf_matches_jax() -> None:
    is_none = lambda x: x is None  # noqa: E731 - short
    prefix, full = (None, 1), ((0, 0), [0])
    assert tu.tree_broadcast(prefix, full, is_none) == jtu.tree_broadcast(prefix, full, is_none)
    assert tu.tree_broadcast(prefix, full, is_none) == ((None, None), [1])


@pytest.mark.parametrize(
    ("prefix", "full", "match"),
    [
        (None, (1, 2), r"at the root: expected None, got tuple"),
        ((1, 2), (1,), r"expected tuple of length 2, got length 1"),
        ({"a": 1}, {"b": 1}, r"expected dict with keys"),
        ((1, (2, 3)), (0, 0), r"at key path \[1\]: expected tuple, got int"),
    ],
    ids=["none-vs-tuple", "arity", "keys", "nested"],
)
def test_tree_broadcast_errors(prefix: Any, full: Any, match: str) -> None:
    with pytest.raises(ValueError):
        jtu.tree_broadcast(prefix, full)
    with pytest.raises(ValueError, match="tree_broadcast: prefix_tree must be a tree prefix"):
        tu.tree_broadcast(prefix, full)
    with pytest.raises(ValueError, match=match):
        tu.tree_broadcast(prefix, full)


@pytest.mark.parametrize(
    "tree",
    [[1, 2, 3, 4, 5], (1,), {"a": 1, "b": [2, 3]}, list(range(8)), [[1, 2], (3, None, 4)]],
    ids=["five", "one", "dict", "eight", "nested"],
)
def test_tree_reduce_associative_matches_jax(tree: Any) -> None:
    pair = lambda a, b: (a, b)  # noqa: E731 - shows the grouping
    assert tu.tree_reduce_associative(pair, tree) == jtu.tree_reduce_associative(pair, tree)
    assert tu.tree_reduce_associative(operator.add, tree, identity=0) == jtu.tree_reduce(
        operator.add, tree
    )
    is_list = lambda x: isinstance(x, list)  # noqa: E731 - short
    assert tu.tree_reduce_associative(
        pair, {"t": tree}, is_leaf=is_list
    ) == jtu.tree_reduce_associative(pair, {"t": tree}, is_leaf=is_list)


def test_tree_reduce_associative_empty() -> None:
    assert tu.tree_reduce_associative(operator.add, (), identity=0) == 0
    assert tu.tree_reduce_associative(operator.add, [None], identity=None) is None
    with pytest.raises(TypeError, match="Must specify identity"):
        jtu.tree_reduce_associative(operator.add, ())
    with pytest.raises(TypeError, match="tree_reduce_associative: the tree has no leaves"):
        tu.tree_reduce_associative(operator.add, ())


# ---------------------------------------------------------------------------------------------
# register_dataclass and register_static.


@pytest.mark.parametrize(
    "tree",
    [
        Layer(w=1, b=2),
        Layer(w=(1, 2), b=None, activation="tanh"),
        Cached(value=[1, 2], scale=0.5, note="dropped"),
        Plain(p=1, q=2, mode="x"),
    ],
    ids=["inferred", "inferred-static-value", "dropped-field", "explicit"],
)
def test_dataclass_flatten_matches_jax(tree: Any) -> None:
    leaves, treedef = tu.tree_flatten(tree)
    jax_leaves, jax_treedef = jtu.tree_flatten(tree)
    assert leaves == jax_leaves
    assert repr(treedef) == repr(jax_treedef)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert rebuilt == jtu.tree_unflatten(jax_treedef, jax_leaves)


def test_dataclass_dropped_field_takes_its_default() -> None:
    rebuilt = tu.tree_map(lambda x: x, Cached(value=1, scale=2.0, note="changed"))
    assert rebuilt == Cached(value=1, scale=2.0)  # note is back to its default
    assert rebuilt.note == jtu.tree_map(lambda x: x, Cached(1, 2.0, "changed")).note == "n"


def test_dataclass_static_values_are_part_of_the_treedef() -> None:
    pairs = [(Layer(1, 2), Layer(3, 4)), (Layer(1, 2, "tanh"), Layer(1, 2, "relu"))]
    for a, b in pairs:
        assert (tu.tree_structure(a) == tu.tree_structure(b)) == (
            jtu.tree_structure(a) == jtu.tree_structure(b)
        )


def test_register_dataclass_decorator_and_tree_static() -> None:
    def make(lib: Any, tree_module: Any) -> Any:
        @lib.register_dataclass
        @dataclasses.dataclass
        class Op:
            x: Any
            y: Any
            op: str = tree_module.static(default="add")
            doc: str = tree_module.static(default="d", metadata={"other": 1})

        return Op

    Op, JaxOp = make(tu, mjcore.tree), make(jtu, jax.tree)
    assert dataclasses.fields(Op)[3].metadata == {"static": True, "other": 1}
    assert dataclasses.fields(Op)[3].metadata == dataclasses.fields(JaxOp)[3].metadata
    leaves, treedef = tu.tree_flatten(Op(1, 2))
    jax_leaves, jax_treedef = jtu.tree_flatten(JaxOp(1, 2))
    assert leaves == jax_leaves == [1, 2]
    assert repr(treedef).replace("Op", "") == repr(jax_treedef).replace("JaxOp", "").replace(
        "Op", ""
    )
    assert tu.tree_unflatten(treedef, [5, 6]) == Op(5, 6)


def _fresh_dataclass() -> type:
    @dataclasses.dataclass
    class Fresh:
        a: Any
        b: Any
        c: Any = dataclasses.field(default=0, init=False)

    return Fresh


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"data_fields": ["a", "b"]}, TypeError, "must both be given or both be omitted"),
        ({"meta_fields": []}, TypeError, "must both be given or both be omitted"),
        ({"data_fields": ["a"], "meta_fields": []}, ValueError, r"Missing: \['b'\]"),
        (
            {"data_fields": ["a", "b", "c"], "meta_fields": []},
            ValueError,
            r"Unexpected fields: \['c'\]",
        ),
        ({"data_fields": ["a", "b"], "meta_fields": ["b"]}, ValueError, "must not overlap"),
    ],
    ids=["only-data", "only-meta", "missing", "unexpected-init-false", "duplicate"],
)
def test_register_dataclass_errors_match_jax(
    kwargs: dict[str, Any], error: type, match: str
) -> None:
    with pytest.raises(error):
        jtu.register_dataclass(_fresh_dataclass(), **kwargs)
    with pytest.raises(error, match=f"register_dataclass: .*{match}"):
        tu.register_dataclass(_fresh_dataclass(), **kwargs)


def test_register_dataclass_overlap_and_non_dataclass() -> None:
    class NotADataclass:
        pass

    with pytest.raises(TypeError, match="is not a dataclass, so data_fields and meta_fields"):
        tu.register_dataclass(NotADataclass)
    with pytest.raises(TypeError):
        jtu.register_dataclass(NotADataclass)
    with pytest.raises(ValueError, match=r"must not overlap, but both hold \['a'\]"):
        tu.register_dataclass(type("Other", (), {}), data_fields=["a"], meta_fields=["a"])
    with pytest.raises(ValueError, match="overlap"):
        jtu.register_dataclass(type("Other", (), {}), data_fields=["a"], meta_fields=["a"])


def test_register_dataclass_keeps_its_own_copy_of_the_fields() -> None:
    data, meta = ["q", "p"], ["mode"]

    class Later:
        def __init__(self, p: Any, q: Any, mode: str) -> None:
            self.p, self.q, self.mode = p, q, mode

    tu.register_dataclass(Later, data_fields=data, meta_fields=meta)
    data.append("mode")
    assert tu.tree_leaves(Later(1, 2, "m")) == [2, 1]


def test_register_static_matches_jax() -> None:
    tree = {"m": Mode("a"), "x": 1}
    assert tu.tree_leaves(tree) == jtu.tree_leaves(tree) == [1]
    assert repr(tu.tree_structure(tree)) == repr(jtu.tree_structure(tree))
    assert tu.tree_structure(Mode("a")) == tu.tree_structure(Mode("a"))
    assert tu.tree_structure(Mode("a")) != tu.tree_structure(Mode("b"))
    assert tu.tree_map(lambda x: x + 1, tree) == {"m": Mode("a"), "x": 2}
    assert tu.tree_leaves_with_path(tree) == [((tu.DictKey("x"),), 1)]


def test_registration_errors() -> None:
    with pytest.raises(ValueError, match="already registered"):
        tu.register_static(Mode)
    with pytest.raises(ValueError, match="already registered"):
        tu.register_dataclass(Layer)
    with pytest.raises(ValueError, match="already registered"):
        tu.register_pytree_node(tu.Partial, _cell_flatten, _cell_unflatten)
    with pytest.raises(TypeError, match="flatten_with_keys_func must be callable"):
        tu.register_pytree_node(type("A", (), {}), _cell_flatten, _cell_unflatten, 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="flatten_with_keys must be callable"):
        tu.register_pytree_with_keys(type("B", (), {}), None, _cell_unflatten)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs a tree_flatten_with_keys method"):
        tu.register_pytree_with_keys_class(type("C", (), {"tree_flatten": lambda self: ((), 0)}))


def test_register_pytree_with_keys_class_matches_jax() -> None:
    tree = [KeyedOurs(1, (2, 3))]
    jax_tree = [KeyedJax(1, (2, 3))]
    pairs = tu.tree_leaves_with_path(tree)
    jax_pairs = jtu.tree_leaves_with_path(jax_tree)
    assert _path_strs(pairs) == _jax_path_strs(jax_pairs)
    assert tu.tree_leaves(tree) == jtu.tree_leaves(jax_tree) == [1, 2, 3]
    assert tu.tree_map(lambda x: -x, tree) == [KeyedOurs(-1, (-2, -3))]


# ---------------------------------------------------------------------------------------------
# Partial.


def _affine(a: Any, x: Any, b: Any = 0) -> Any:
    return a * x + b


def test_partial_calls_like_functools_partial() -> None:
    p = tu.Partial(_affine, 2, b=1)
    assert isinstance(p, functools.partial)
    assert p(5) == 11 and p(5, b=0) == 10
    assert (p.func, p.args, p.keywords) == (_affine, (2,), {"b": 1})
    assert repr(p).replace("mjcore.tree_util.", "") == repr(jtu.Partial(_affine, 2, b=1)).replace(
        "jax.tree_util.", ""
    )
    assert tu.Partial(_affine)(2, 3) == 6


def test_partial_flatten_matches_jax() -> None:
    ours, theirs = tu.Partial(_affine, 2, b=(1, 3)), jtu.Partial(_affine, 2, b=(1, 3))
    leaves, treedef = tu.tree_flatten(ours)
    jax_leaves, jax_treedef = jtu.tree_flatten(theirs)
    assert leaves == jax_leaves == [2, 1, 3]
    assert repr(treedef) == repr(jax_treedef)
    assert _path_strs(tu.tree_leaves_with_path(ours)) == _jax_path_strs(
        jtu.tree_leaves_with_path(theirs)
    )
    rebuilt = tu.tree_map(lambda x: 10 * x, ours)
    assert type(rebuilt) is tu.Partial and rebuilt.func is _affine
    assert (rebuilt.args, rebuilt.keywords) == ((20,), {"b": (10, 30)})
    # Equal structure needs the same func; a fresh function is a different structure.
    assert treedef == tu.tree_structure(tu.Partial(_affine, 0, b=(0, 0)))
    assert treedef != tu.tree_structure(tu.Partial(lambda a, x, b: 0, 0, b=(0, 0)))
    assert treedef != tu.tree_structure(tu.Partial(_affine, 0, b=0))


def test_partial_of_a_partial_keeps_inner_arguments_static() -> None:
    for inner_ctor in (functools.partial, "self"):
        ours_inner = (
            tu.Partial(_affine, 2) if inner_ctor == "self" else functools.partial(_affine, 2)
        )
        jax_inner = (
            jtu.Partial(_affine, 2) if inner_ctor == "self" else functools.partial(_affine, 2)
        )
        ours, theirs = tu.Partial(ours_inner, 5), jtu.Partial(jax_inner, 5)
        assert tu.tree_leaves(ours) == jtu.tree_leaves(theirs) == [5]
        assert ours(b=1) == theirs(b=1) == 11
        assert (ours.args, ours.func.args, ours.func.func) == (
            theirs.args,
            theirs.func.args,
            theirs.func.func,
        )
        assert ours.func == ours_inner and hash(ours.func) == hash(ours_inner)
        assert tu.tree_structure(ours) == tu.tree_structure(tu.Partial(ours_inner, 0))
        assert repr(ours.func).startswith("_HashableCallableShim(")


def test_partial_through_jit_grad_and_vmap() -> None:
    w, b = onp.array([1.0, -2.0, 0.5]), onp.array([0.1, 0.2, 0.3])
    x = onp.array([[0.3, 0.1, -0.4], [1.0, 2.0, 3.0]])

    def apply(lib: Any, f: Any, x: Any) -> Any:
        return lib.sum(lib.tanh(f(x)))

    ours = tu.Partial(_affine, np.asarray(w), b=np.asarray(b))
    theirs = jtu.Partial(_affine, jnp.asarray(w), b=jnp.asarray(b))

    jitted = mjcore.jit(functools.partial(apply, np))
    assert onp.allclose(jitted(ours, x), apply(jnp, theirs, x))
    jitted(tu.Partial(_affine, np.asarray(2 * w), b=np.asarray(b)), x)
    assert jitted.trace_count == 1  # same func, same shapes: one trace

    def returns_partial(p: Any) -> Any:
        return tu.Partial(_affine, p.args[0] * 2, b=p.keywords["b"])

    out = mjcore.jit(returns_partial)(ours)
    assert type(out) is tu.Partial and onp.allclose(onp.asarray(out(x)), _affine(2 * w, x, b))

    g = mjcore.grad(lambda f: apply(np, f, x))(ours)
    jax_g = jax.grad(lambda f: apply(jnp, f, x))(theirs)
    assert type(g) is tu.Partial and g.func is _affine
    assert onp.allclose(g.args[0], jax_g.args[0])
    assert onp.allclose(g.keywords["b"], jax_g.keywords["b"])

    batched = tu.Partial(_affine, np.asarray(onp.stack([w, 2 * w])), b=np.asarray(b))
    jax_batched = jtu.Partial(_affine, jnp.asarray(onp.stack([w, 2 * w])), b=jnp.asarray(b))
    in_axes = (tu.Partial(_affine, 0, b=None), None)
    jax_in_axes = (jtu.Partial(_affine, 0, b=None), None)
    per = mjcore.vmap(functools.partial(apply, np), in_axes=in_axes)(batched, x[0])
    jax_per = jax.vmap(functools.partial(apply, jnp), in_axes=jax_in_axes)(jax_batched, x[0])
    assert onp.allclose(per, jax_per)


def test_dataclass_through_jit_grad_and_vmap() -> None:
    w, b = onp.array([[1.0, 2.0], [3.0, -1.0]]), onp.array([0.5, -0.5])
    x = onp.array([0.2, -0.7])

    def loss(lib: Any, layer: Layer, x: Any) -> Any:
        act = lib.tanh if layer.activation == "tanh" else (lambda v: lib.maximum(v, 0.0))
        return lib.sum(act(layer.w @ x + layer.b) ** 2)

    ours = Layer(np.asarray(w), np.asarray(b), "tanh")
    theirs = Layer(jnp.asarray(w), jnp.asarray(b), "tanh")
    jitted = mjcore.jit(functools.partial(loss, np))
    assert onp.allclose(jitted(ours, x), loss(jnp, theirs, x))
    jitted(Layer(np.asarray(2 * w), np.asarray(b), "tanh"), x)
    assert jitted.trace_count == 1
    jitted(Layer(np.asarray(w), np.asarray(b), "relu"), x)  # a static field: a new trace
    assert jitted.trace_count == 2

    g = mjcore.grad(functools.partial(loss, np))(ours, x)
    jax_g = jax.grad(functools.partial(loss, jnp))(theirs, x)
    assert type(g) is Layer and g.activation == "tanh"
    assert onp.allclose(g.w, jax_g.w) and onp.allclose(g.b, jax_g.b)

    xs = onp.array([[0.2, -0.7], [1.0, 0.5], [0.0, 0.1]])
    per = mjcore.vmap(functools.partial(loss, np), in_axes=(None, 0))(ours, xs)
    jax_per = jax.vmap(functools.partial(loss, jnp), in_axes=(None, 0))(theirs, xs)
    assert onp.allclose(per, jax_per)
    stacked = Layer(np.asarray(onp.stack([w, -w])), np.asarray(onp.stack([b, b])), "tanh")
    jax_stacked = Layer(jnp.asarray(onp.stack([w, -w])), jnp.asarray(onp.stack([b, b])), "tanh")
    per = mjcore.vmap(functools.partial(loss, np), in_axes=(0, None))(stacked, x)
    jax_per = jax.vmap(functools.partial(loss, jnp), in_axes=(0, None))(jax_stacked, x)
    assert onp.allclose(per, jax_per)


def test_static_node_through_jit() -> None:
    def f(mode: Mode, x: Any) -> Any:
        return x * 2 if mode.name == "double" else x + 1

    jitted = mjcore.jit(f)
    assert float(jitted(Mode("double"), 3.0)) == 6.0
    assert float(jitted(Mode("inc"), 3.0)) == 4.0
    assert float(jitted(Mode("double"), 5.0)) == 10.0
    assert jitted.trace_count == 2


# ---------------------------------------------------------------------------------------------
# The mjcore.tree namespace and the public surface.


def test_tree_namespace_matches_jax_tree() -> None:
    public = sorted(name for name in dir(jax.tree) if not name.startswith("_"))
    assert sorted(mjcore.tree.__all__) == public
    aliases = {
        "all": tu.tree_all,
        "broadcast": tu.tree_broadcast,
        "flatten": tu.tree_flatten,
        "flatten_with_path": tu.tree_flatten_with_path,
        "leaves": tu.tree_leaves,
        "leaves_with_path": tu.tree_leaves_with_path,
        "map": tu.tree_map,
        "map_with_path": tu.tree_map_with_path,
        "reduce": tu.tree_reduce,
        "reduce_associative": tu.tree_reduce_associative,
        "structure": tu.tree_structure,
        "transpose": tu.tree_transpose,
        "unflatten": tu.tree_unflatten,
    }
    for name, fun in aliases.items():
        assert getattr(mjcore.tree, name) is fun
    tree = {"a": [1, 2], "b": Vec(3, None)}
    assert mjcore.tree.map(lambda x: x * 2, tree) == jax.tree.map(lambda x: x * 2, tree)
    assert mjcore.tree.leaves(tree) == jax.tree.leaves(tree)
    assert mjcore.tree.reduce(operator.add, tree) == jax.tree.reduce(operator.add, tree)
    assert "tree" in mjcore.__all__


# Left out on purpose: default_registry (mjcore has one registry, a private dict, and no
# PyTreeRegistry objects to expose).
LEFT_OUT = {"default_registry"}


def test_tree_util_covers_jax_tree_util() -> None:
    public = {name for name in dir(jtu) if not name.startswith("_")}
    assert public - set(tu.__all__) == LEFT_OUT
    for name in tu.__all__:
        value = getattr(tu, name)
        if callable(value) and name not in ("KeyEntry", "KeyPath"):
            assert value.__doc__, name


# ---------------------------------------------------------------------------------------------
# Random trees.

_keys = st.text(alphabet="abcd", min_size=1, max_size=2)
_leaves = st.one_of(st.integers(-5, 5), st.text(alphabet="xyz", max_size=2))


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=3).map(tuple),
        st.lists(children, max_size=3),
        st.dictionaries(_keys, children, max_size=3),
        st.builds(Vec, children, children),
        st.builds(Cell, children, children, _keys),
        st.builds(Named, children, children),
        st.builds(Layer, children, children, _keys),
        st.builds(tu.Partial, st.just(_affine), children, b=children),
    )


random_trees = st.recursive(st.one_of(_leaves, st.none()), _extend, max_leaves=12)


def _to_jax(tree: Any) -> Any:
    """The same tree with mjcore's Partial swapped for JAX's."""
    if isinstance(tree, tu.Partial):
        keywords = {k: _to_jax(v) for k, v in tree.keywords.items()}
        return jtu.Partial(tree.func, *map(_to_jax, tree.args), **keywords)
    if isinstance(tree, Vec):
        return Vec(_to_jax(tree.x), _to_jax(tree.y))
    if isinstance(tree, tuple | list):
        return type(tree)(map(_to_jax, tree))
    if isinstance(tree, dict):
        return {k: _to_jax(v) for k, v in tree.items()}
    if isinstance(tree, Cell):
        return Cell(_to_jax(tree.a), _to_jax(tree.b), tree.tag)
    if isinstance(tree, Named):
        return Named(_to_jax(tree.w), _to_jax(tree.extras))
    if isinstance(tree, Layer):
        return Layer(_to_jax(tree.w), _to_jax(tree.b), tree.activation)
    return tree


@settings(max_examples=60, deadline=None)
@given(random_trees)
def test_random_trees_paths_match_jax(tree: Any) -> None:
    jax_tree = _to_jax(tree)
    pairs, treedef = tu.tree_flatten_with_path(tree)
    jax_pairs, jax_treedef = jtu.tree_flatten_with_path(jax_tree)
    assert _path_strs(pairs) == _jax_path_strs(jax_pairs)
    assert [x for _, x in pairs] == [x for _, x in jax_pairs] == tu.tree_leaves(tree)
    assert treedef == tu.tree_structure(tree)
    assert (treedef.num_leaves, treedef.num_nodes) == (
        jax_treedef.num_leaves,
        jax_treedef.num_nodes,
    )
    # Each path leads to its leaf.
    for path, leaf in pairs:
        node = tree
        for key in path:
            if isinstance(key, tu.SequenceKey):
                node = node[key.idx]
            elif isinstance(key, tu.DictKey):
                node = node[key.key] if isinstance(node, dict) else getattr(node, key.key)
            elif isinstance(key, tu.GetAttrKey):
                node = getattr(node, key.name)
            else:
                node = list(tu.flatten_one_level(node)[0])[key.key]
        assert node is leaf
    # Partial has no __eq__, so trees are compared by structure and leaves.
    broadcast = tu.tree_broadcast(0, tree)
    assert tu.tree_structure(broadcast) == treedef
    assert tu.tree_leaves(broadcast) == [0] * treedef.num_leaves
    doubled = tu.tree_map(lambda x: (x, x), tree)
    transposed = tu.tree_transpose(treedef, tu.tree_structure((0, 0)), doubled)
    assert tu.tree_structure(transposed) == tu.tree_structure((tree, tree))
    assert tu.tree_leaves(transposed) == tu.tree_leaves((tree, tree))
