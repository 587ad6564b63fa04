"""mjcore.tree_util against jax.tree_util as the oracle."""

import collections
import importlib.util
import pathlib
import subprocess
import sys
from typing import Any, NamedTuple

import jax.tree_util as jtu
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax._src.tree_util import broadcast_prefix as jax_broadcast_prefix

TREE_UTIL_PATH = pathlib.Path(__file__).resolve().parents[1] / "mjcore" / "tree_util.py"

try:
    from mjcore import tree_util as tu
except Exception:  # noqa: BLE001 - mjcore/__init__ may be mid-edit; tree_util needs none of it
    _spec = importlib.util.spec_from_file_location("mjcore.tree_util", TREE_UTIL_PATH)
    assert _spec is not None and _spec.loader is not None
    tu = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(tu)


# ---------------------------------------------------------------------------------------------
# Node types used by the examples, registered with both libraries the same way.


class Point(NamedTuple):
    x: Any
    y: Any


Pair = collections.namedtuple("Pair", ["x", "y"])


class Box:
    """Registered with register_pytree_node; aux data is a string label."""

    def __init__(self, value: Any, label: str) -> None:
        self.value, self.label = value, label

    def __eq__(self, other: object) -> bool:
        return type(other) is Box and (self.value, self.label) == (other.value, other.label)

    def __repr__(self) -> str:
        return f"Box({self.value!r}, {self.label!r})"


def _box_flatten(box: Box) -> tuple[tuple[Any], str]:
    return (box.value,), box.label


def _box_unflatten(label: str, children: tuple[Any, ...]) -> Box:
    return Box(children[0], label)


tu.register_pytree_node(Box, _box_flatten, _box_unflatten)
jtu.register_pytree_node(Box, _box_flatten, _box_unflatten)


class Linear:
    """Registered with register_pytree_node_class; two children and a tuple of aux data."""

    def __init__(self, w: Any, b: Any, act: tuple[str, int] = ("relu", 1)) -> None:
        self.w, self.b, self.act = w, b, act

    def tree_flatten(self) -> tuple[tuple[Any, Any], tuple[str, int]]:
        return (self.w, self.b), self.act

    @classmethod
    def tree_unflatten(cls, act: tuple[str, int], children: tuple[Any, ...]) -> "Linear":
        return cls(children[0], children[1], act)

    def __eq__(self, other: object) -> bool:
        return type(other) is Linear and (self.w, self.b, self.act) == (
            other.w,
            other.b,
            other.act,
        )

    def __repr__(self) -> str:
        return f"Linear({self.w!r}, {self.b!r}, {self.act!r})"


tu.register_pytree_node_class(Linear)
jtu.register_pytree_node(Linear, Linear.tree_flatten, Linear.tree_unflatten)


class Opaque(tuple):
    """A tuple subclass without _fields: a leaf in both libraries."""


# ---------------------------------------------------------------------------------------------
# One table of trees.

EXAMPLES = {
    "leaf": 1,
    "string-leaf": "abc",
    "none": None,
    "empty-tuple": (),
    "empty-list": [],
    "empty-dict": {},
    "tuple": (1, 2.0, "c"),
    "singleton-tuple": (1,),
    "list": [1, [2, [3, []]]],
    "dict-unsorted": {"b": 1, "a": 2, "c": (3, 4)},
    "dict-int-keys": {3: "x", 1: "y", 2: None},
    "dict-of-nones": {"a": None, "b": (None, None)},
    "nested-none": (None, 1, [None, {"k": None}]),
    "namedtuple": Point(1, (2, 3)),
    "namedtuple-collections": Pair([1], {"z": 2}),
    "namedtuple-empty-children": Point(None, ()),
    "ordered-dict": collections.OrderedDict([("b", 1), ("a", (2, 3))]),
    "defaultdict": collections.defaultdict(list, {"b": 1, "a": [2]}),
    "registered": Box((1, 2), "label"),
    "registered-class": Linear([1, 2], {"b": 3}),
    "tuple-subclass-leaf": (Opaque((1, 2)), 3),
    "args-kwargs": ((1, 2, 3), {}),
    "deep": {"w": [1, (2, 3)], "b": None, "c": {"x": Point(4, Box(5, "p"))}},
    "mixed-depth": [1, (2,), [(3, 4), 5], {"a": 6, "b": [7]}],
}
EXAMPLE_IDS = list(EXAMPLES)


def same_tree(a: Any, b: Any) -> bool:
    """Equal values and equal structure (so a namedtuple is not mistaken for a tuple)."""
    return a == b and tu.tree_structure(a) == tu.tree_structure(b)


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_flatten_matches_jax(name: str) -> None:
    tree = EXAMPLES[name]
    leaves, treedef = tu.tree_flatten(tree)
    jax_leaves, jax_treedef = jtu.tree_flatten(tree)
    assert leaves == jax_leaves
    assert repr(treedef) == repr(jax_treedef)
    assert treedef.num_leaves == jax_treedef.num_leaves
    assert treedef.num_nodes == jax_treedef.num_nodes
    assert tu.tree_leaves(tree) == jax_leaves
    assert tu.tree_structure(tree) == treedef
    assert [repr(c) for c in tu.treedef_children(treedef)] == [
        repr(c) for c in jtu.treedef_children(jax_treedef)
    ]
    assert tu.treedef_is_leaf(treedef) == jtu.treedef_is_leaf(jax_treedef)


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_unflatten_round_trip(name: str) -> None:
    tree = EXAMPLES[name]
    leaves, treedef = tu.tree_flatten(tree)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert same_tree(rebuilt, tree)
    assert type(rebuilt) is type(tree)
    assert same_tree(treedef.unflatten(iter(leaves)), tree)  # any iterable of leaves
    jax_rebuilt = jtu.tree_unflatten(jtu.tree_structure(tree), leaves)
    assert same_tree(rebuilt, jax_rebuilt)


def test_structure_equality_and_hash_match_jax() -> None:
    trees = list(EXAMPLES.values()) + [
        (5, 6.0, "z"),  # same structure as "tuple"
        {"a": 0, "b": 0, "c": (0, 0)},  # same keys as "dict-unsorted", sorted insertion
        Pair(1, (2, 3)),  # same shape as "namedtuple", different class
        Box((1, 2), "other"),  # different aux data
        collections.OrderedDict([("a", (2, 3)), ("b", 1)]),  # different key order
        {"b": 1, "a": (2, 3)},  # dict, not OrderedDict
        collections.defaultdict(dict, {"b": 1, "a": [2]}),  # different default_factory
        [1, [2, [3, ()]]],
    ]
    ours = [tu.tree_structure(t) for t in trees]
    theirs = [jtu.tree_structure(t) for t in trees]
    for i in range(len(trees)):
        for j in range(len(trees)):
            assert (ours[i] == ours[j]) == (theirs[i] == theirs[j]), (trees[i], trees[j])
            if ours[i] == ours[j]:
                assert hash(ours[i]) == hash(ours[j])
    assert len(set(ours)) == len(set(theirs))
    assert ours[0] != "PyTreeDef(*)"


def test_defaultdict_keeps_default_factory() -> None:
    tree = collections.defaultdict(list, {"b": 1})
    rebuilt = tu.tree_map(lambda x: x + 1, tree)
    assert type(rebuilt) is collections.defaultdict
    assert rebuilt.default_factory is list
    assert rebuilt == {"b": 2}


def test_ordered_dict_keeps_insertion_order() -> None:
    tree = collections.OrderedDict([("b", 1), ("a", 2)])
    assert tu.tree_leaves(tree) == [1, 2]
    assert list(tu.tree_map(str, tree).items()) == [("b", "1"), ("a", "2")]


# ---------------------------------------------------------------------------------------------
# is_leaf, tree_map and friends.

IS_LEAF_CASES = [
    ("none-as-leaf", (None, 1, [None]), lambda x: x is None),
    ("root", (1, 2), lambda x: isinstance(x, tuple)),
    ("inner-tuples", [(1, 2), (3, (4,)), 5], lambda x: isinstance(x, tuple)),
    ("dicts", {"a": {"b": 1}, "c": [2]}, lambda x: isinstance(x, dict) and "b" in x),
    ("never", {"a": (1, None)}, lambda x: False),
]


@pytest.mark.parametrize(
    ("tree", "is_leaf"), [c[1:] for c in IS_LEAF_CASES], ids=[c[0] for c in IS_LEAF_CASES]
)
def test_is_leaf_matches_jax(tree: Any, is_leaf: Any) -> None:
    leaves, treedef = tu.tree_flatten(tree, is_leaf=is_leaf)
    jax_leaves, jax_treedef = jtu.tree_flatten(tree, is_leaf=is_leaf)
    assert leaves == jax_leaves
    assert repr(treedef) == repr(jax_treedef)
    assert tu.tree_leaves(tree, is_leaf) == jax_leaves
    assert same_tree(tu.tree_unflatten(treedef, leaves), tree)
    assert tu.tree_map(str, tree, is_leaf=is_leaf) == jtu.tree_map(str, tree, is_leaf=is_leaf)


def test_is_leaf_called_once_per_value() -> None:
    def recorder(seen: list[Any]) -> Any:
        def is_leaf(x: Any) -> bool:
            seen.append(x)
            return False

        return is_leaf

    tree = (1, [2, (3,)], {"a": None})
    seen: list[Any] = []
    jax_seen: list[Any] = []
    tu.tree_flatten(tree, is_leaf=recorder(seen))
    jtu.tree_flatten(tree, is_leaf=recorder(jax_seen))
    assert seen == jax_seen


TREE_MAP_CASES = [
    ("one-tree", lambda x: x * 2, ((1, [2]), {"a": 3}), ()),
    ("two-trees", lambda x, y: x + y, ((1, [2]), {"a": 3}), (((10, [20]), {"a": 30}),)),
    ("three-trees", lambda x, y, z: (x, y, z), [1, 2], ([3, 4], [5, 6])),
    ("rest-has-subtrees", lambda x, y: (x, y), (1, 2), (((3, 4), {"a": 5}),)),
    ("rest-has-none-subtree", lambda x, y: (x, y), [1, 2], ([None, (None,)],)),
    ("nones-kept", lambda x: x + 1, (1, None, {"a": None}), ()),
    ("namedtuple", lambda x, y: x - y, Point(5, 6), (Point(1, 2),)),
    ("registered", lambda x, y: x * y, Box(3, "l"), (Box(4, "l"),)),
]


@pytest.mark.parametrize(
    ("f", "tree", "rest"), [c[1:] for c in TREE_MAP_CASES], ids=[c[0] for c in TREE_MAP_CASES]
)
def test_tree_map_matches_jax(f: Any, tree: Any, rest: tuple[Any, ...]) -> None:
    assert same_tree(tu.tree_map(f, tree, *rest), jtu.tree_map(f, tree, *rest))


MISMATCH_CASES = [
    ("tuple-arity", (1, 2), (1, 2, 3), r"at the root: expected tuple of length 2, got length 3"),
    ("tuple-vs-list", (1, [2]), (1, (2,)), r"at key path \[1\]: expected list, got tuple"),
    ("dict-keys", {"a": 1}, {"b": 1}, r"expected dict with keys \('a',\), got keys \('b',\)"),
    ("node-vs-leaf", (1, (2, 3)), (1, 5), r"at key path \[1\]: expected tuple, got int"),
    ("none-vs-leaf", (None,), (1,), r"expected None, got int"),
    ("namedtuple-class", Point(1, 2), Pair(1, 2), r"expected Point, got Pair"),
    ("namedtuple-path", {"p": Point(1, (2,))}, {"p": Point(1, [2])}, r"\['p'\]\.y: expected tuple"),
    ("aux-data", Box(1, "a"), Box(1, "b"), r"expected Box with aux data 'a', got aux data 'b'"),
    ("dict-vs-ordered", {"a": 1}, collections.OrderedDict(a=1), r"expected dict, got OrderedDict"),
]


@pytest.mark.parametrize(
    ("tree", "other", "match"),
    [c[1:] for c in MISMATCH_CASES],
    ids=[c[0] for c in MISMATCH_CASES],
)
def test_tree_map_mismatch_raises_value_error(tree: Any, other: Any, match: str) -> None:
    with pytest.raises(ValueError):
        jtu.tree_map(lambda x, y: x, tree, other)
    with pytest.raises(ValueError, match=match) as info:
        tu.tree_map(lambda x, y: x, tree, other)
    message = str(info.value)
    assert message.startswith("tree_map: rest[0]")
    assert repr(tu.tree_structure(tree)) in message
    assert repr(tu.tree_structure(other)) in message
    with pytest.raises(ValueError, match=r"PyTreeDef\.flatten_up_to: .*" + match):
        tu.tree_structure(tree).flatten_up_to(other)


FLATTEN_UP_TO_CASES = [
    ("same", (1, 2), (3, 4)),
    ("deeper", (1, 2), ((3, 4), {"a": [5]})),
    ("dict", {"b": 1, "a": 2}, {"a": (1,), "b": None}),
    ("leaf-prefix", 0, {"a": 1}),
    ("namedtuple", Point(1, 2), Point((3,), [4])),
    ("nested-partial", [1, (2, 3)], [(9,), ({"x": 1}, None)]),
]


@pytest.mark.parametrize(
    ("prefix", "tree"),
    [c[1:] for c in FLATTEN_UP_TO_CASES],
    ids=[c[0] for c in FLATTEN_UP_TO_CASES],
)
def test_flatten_up_to_matches_jax(prefix: Any, tree: Any) -> None:
    ours = tu.tree_structure(prefix).flatten_up_to(tree)
    assert ours == jtu.tree_structure(prefix).flatten_up_to(tree)


BROADCAST_CASES = [
    ("brief-example", (0, None), (1, {"a": 2, "b": 3})),
    ("int-prefix", 0, (1, [2, 3], {"a": 4})),
    ("none-prefix", None, (1, 2)),
    ("none-over-none", (0, None), (1, None)),
    ("dict-prefix", {"a": 1, "b": None}, {"a": (1, 2), "b": [3, 4, 5]}),
    ("exact", (0, 1), (5, 6)),
    ("empty-subtree", (0, 1), ((), 6)),
    ("namedtuple", Point(0, 1), Point((1, 2), 3)),
]


@pytest.mark.parametrize(
    ("prefix", "full"), [c[1:] for c in BROADCAST_CASES], ids=[c[0] for c in BROADCAST_CASES]
)
def test_broadcast_prefix_matches_jax(prefix: Any, full: Any) -> None:
    expected = jax_broadcast_prefix(prefix, full, is_leaf=lambda x: x is None)
    assert tu.broadcast_prefix(prefix, full) == expected
    assert tu.broadcast_prefix(prefix, full, is_leaf=lambda x: x is None) == expected


def test_broadcast_prefix_extra_is_leaf() -> None:
    prefix, full = ((0, 1), None), ((5, 6), 7)
    # A tuple leaf of the prefix is broadcast whole over the matching subtree.
    is_pair = lambda x: isinstance(x, tuple) and len(x) == 2 and x[0] == 0  # noqa: E731 - short
    expected = jax_broadcast_prefix(prefix, full, is_leaf=lambda x: x is None or is_pair(x))
    assert tu.broadcast_prefix(prefix, full, is_leaf=is_pair) == expected == [(0, 1), (0, 1), None]


@pytest.mark.parametrize(
    ("prefix", "full", "match"),
    [
        ((0, 0), (1,), r"got prefix \(0, 0\) for value tree PyTreeDef\(\(\*,\)\); .*length 2"),
        ({"a": 0}, {"b": 1}, r"got prefix \{'a': 0\} for value tree PyTreeDef\(\{'b': \*\}\)"),
        ((0, (0, 1)), (1, 2), r"at key path \[1\]: expected tuple, got int"),
    ],
    ids=["arity", "keys", "nested"],
)
def test_broadcast_prefix_errors(prefix: Any, full: Any, match: str) -> None:
    with pytest.raises(ValueError):
        jax_broadcast_prefix(prefix, full, is_leaf=lambda x: x is None)
    with pytest.raises(ValueError, match=match):
        tu.broadcast_prefix(prefix, full)


REDUCE_CASES = [
    ("sum", (1, [2, 3], {"a": 4})),
    ("single", 7),
    ("with-none", (1, None, 2)),
]


@pytest.mark.parametrize("tree", [c[1] for c in REDUCE_CASES], ids=[c[0] for c in REDUCE_CASES])
def test_tree_reduce_and_tree_all_match_jax(tree: Any) -> None:
    add = lambda a, b: a + b  # noqa: E731 - short
    assert tu.tree_reduce(add, tree) == jtu.tree_reduce(add, tree)
    assert tu.tree_reduce(add, tree, 100) == jtu.tree_reduce(add, tree, 100)
    assert tu.tree_all(tree) == jtu.tree_all(tree)
    assert tu.tree_all(tu.tree_map(lambda x: 0, tree)) == jtu.tree_all(
        jtu.tree_map(lambda x: 0, tree)
    )


def test_tree_reduce_empty() -> None:
    assert tu.tree_reduce(lambda a, b: a + b, (), 5) == 5
    assert tu.tree_reduce(lambda a, b: a + b, (None,), None) is None
    with pytest.raises(TypeError, match="tree_reduce: the tree has no leaves"):
        tu.tree_reduce(lambda a, b: a + b, ())
    assert tu.tree_all(()) and tu.tree_all(None)


@pytest.mark.parametrize(
    "items",
    [[1, 2.0, "a"], [1, None], [1, (2,)], [], [Point(1, 2)], [Opaque((1,)), Box(1, "a")], [{}]],
    ids=["leaves", "none", "tuple", "empty", "namedtuple", "subclass-and-registered", "dict"],
)
def test_all_leaves_matches_jax(items: list[Any]) -> None:
    assert tu.all_leaves(items) == jtu.all_leaves(items)
    is_none = lambda x: x is None  # noqa: E731 - short
    assert tu.all_leaves(items, is_none) == jtu.all_leaves(items, is_none)


# ---------------------------------------------------------------------------------------------
# Errors.


def test_unflatten_wrong_leaf_count() -> None:
    treedef = tu.tree_structure((1, {"a": 2}))
    with pytest.raises(ValueError, match=r"tree_unflatten: .* takes 2 leaves, got 1"):
        tu.tree_unflatten(treedef, [1])
    with pytest.raises(ValueError, match="takes 2 leaves, got 3"):
        treedef.unflatten([1, 2, 3])
    with pytest.raises(ValueError):
        jtu.tree_unflatten(jtu.tree_structure((1, {"a": 2})), [1])


def test_register_twice_raises() -> None:
    nodetypes: list[type] = [tuple, list, dict, type(None), collections.OrderedDict, Box, Linear]
    for nodetype in nodetypes:
        with pytest.raises(ValueError, match="already registered"):
            tu.register_pytree_node(nodetype, _box_flatten, _box_unflatten)
    with pytest.raises(ValueError, match="Duplicate"):
        jtu.register_pytree_node(Box, _box_flatten, _box_unflatten)


def test_register_validates_arguments() -> None:
    with pytest.raises(TypeError, match="nodetype must be a class"):
        tu.register_pytree_node(Box(1, "a"), _box_flatten, _box_unflatten)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be callable"):
        tu.register_pytree_node(type("Fresh", (), {}), None, _box_unflatten)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tree_flatten method"):
        tu.register_pytree_node_class(type("NoMethods", (), {}))


def test_unsortable_dict_keys() -> None:
    tree = {1: "a", "b": 2}
    with pytest.raises(ValueError):
        jtu.tree_flatten(tree)
    with pytest.raises(ValueError, match="tree_flatten: cannot sort the dict keys"):
        tu.tree_flatten(tree)


def test_module_imports_only_the_standard_library() -> None:
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('tree_util', {str(TREE_UTIL_PATH)!r})\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "heavy = {'jax', 'jaxlib', 'numpy', 'typing'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------------------------
# Random trees.

_keys = st.text(alphabet="abcdef", min_size=1, max_size=3)
_leaves = st.one_of(st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=2))


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.tuples(children, children),
        st.lists(children, max_size=4).map(tuple),
        st.lists(children, max_size=4),
        st.dictionaries(_keys, children, max_size=4),
        st.dictionaries(_keys, children, max_size=4).map(collections.OrderedDict),
        st.builds(Point, children, children),
        st.builds(Box, children, _keys),
        st.builds(Linear, children, children),
    )


random_trees = st.recursive(st.one_of(_leaves, st.none()), _extend, max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(random_trees)
def test_random_trees_match_jax(tree: Any) -> None:
    leaves, treedef = tu.tree_flatten(tree)
    jax_leaves, jax_treedef = jtu.tree_flatten(tree)
    assert tu.tree_leaves(tree) == leaves
    assert [repr(x) for x in leaves] == [repr(x) for x in jax_leaves]
    assert repr(treedef) == repr(jax_treedef)
    assert (treedef.num_leaves, treedef.num_nodes) == (
        jax_treedef.num_leaves,
        jax_treedef.num_nodes,
    )
    rebuilt = tu.tree_unflatten(tu.tree_structure(tree), tu.tree_leaves(tree))
    assert repr(rebuilt) == repr(jtu.tree_unflatten(jax_treedef, leaves))
    assert tu.tree_structure(rebuilt) == treedef
    assert hash(tu.tree_structure(rebuilt)) == hash(treedef)
    assert tu.tree_structure(tree).flatten_up_to(tree) == leaves
    assert tu.broadcast_prefix(0, tree) == [0] * len(leaves)
