"""JAX's static `size=`/`fill_value=` on `nonzero`, `argwhere` and `flatnonzero`, against
`jax.numpy` (x64): eagerly, under jit and under vmap."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjcore
import mjnp

jax.config.update("jax_enable_x64", True)

ARRAYS = {
    "2d-int": np.array([[0, 1, 0], [2, 0, 3]]),
    "1d-bool": np.array([True, False, True, True, False]),
    "3d-float": np.array([[[0.0, 1.5], [0.0, 0.0]], [[-2.0, 0.0], [0.0, np.nan]]]),
    "all-zero": np.zeros((2, 2)),
    "empty": np.zeros((0, 3)),
}
SIZES = [0, 2, 4, 9]
FILLS = [None, -1, (7, 8)]


def _cases():
    for name, x in ARRAYS.items():
        for size in SIZES:
            for fill in FILLS:
                if isinstance(fill, tuple) and x.ndim != 2:
                    continue
                yield pytest.param(x, size, fill, id=f"{name}-size{size}-fill{fill}")


def _same(got, want):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize(("x", "size", "fill"), list(_cases()))
@pytest.mark.parametrize("name", ["nonzero", "argwhere", "flatnonzero"])
def test_sized_matches_jax_eager_and_jit(name, x, size, fill):
    if name == "flatnonzero" and isinstance(fill, tuple):
        return
    ours = getattr(mjnp, name)
    theirs = getattr(jnp, name)
    want = theirs(x, size=size, fill_value=fill)
    _same(ours(x, size=size, fill_value=fill), want)
    _same(mjcore.jit(lambda v: ours(v, size=size, fill_value=fill))(x), want)


@pytest.mark.parametrize("name", ["nonzero", "argwhere", "flatnonzero"])
def test_sized_matches_jax_under_vmap(name):
    xs = np.array([[0, 3, 0, 1], [0, 0, 0, 0], [5, 6, 7, 8]])
    got = mjcore.vmap(lambda v: getattr(mjnp, name)(v, size=3, fill_value=-2))(xs)
    want = jax.vmap(lambda v: getattr(jnp, name)(v, size=3, fill_value=-2))(xs)
    _same(got, want)


def test_sized_argwhere_of_a_scalar_matches_jax():
    for x in (np.array(0.0), np.array(2.0)):
        _same(mjnp.argwhere(x, size=2), jnp.argwhere(x, size=2))


def test_without_size_numpy_semantics_and_errors():
    x = ARRAYS["2d-int"]
    _same(mjnp.nonzero(x), np.nonzero(x))
    with pytest.raises(ValueError, match="fill_value is only allowed together with size"):
        mjnp.nonzero(x, fill_value=0)
    with pytest.raises(ValueError, match="size must be non-negative"):
        mjnp.flatnonzero(x, size=-1)
    with pytest.raises(ValueError, match="one entry per dimension"):
        mjnp.nonzero(x, size=2, fill_value=(1, 2, 3))
    with pytest.raises(TypeError, match="size must be a non-negative int"):
        mjnp.argwhere(x, size=2.5)


UNIQUE = {
    "float-nan": np.array([3.0, 1.0, 3.0, 2.0, np.nan, np.nan, -0.0, 0.0]),
    "int-2d": np.array([[4, 1, 4], [1, 7, 0]]),
    "bool": np.array([True, True]),
}


@pytest.mark.parametrize("equal_nan", [True, False])
@pytest.mark.parametrize("fill", [None, -5])
@pytest.mark.parametrize("size", [0, 1, 3, 10])
@pytest.mark.parametrize("name", list(UNIQUE))
def test_unique_sized_matches_jax(name, size, fill, equal_nan):
    x = UNIQUE[name]
    if name == "bool" and fill is not None:
        fill = True
    want = jnp.unique(x, size=size, fill_value=fill, equal_nan=equal_nan)
    got = mjnp.unique(x, size=size, fill_value=fill, equal_nan=equal_nan)
    _same(got, want)
    jitted = mjcore.jit(lambda v: mjnp.unique(v, size=size, fill_value=fill, equal_nan=equal_nan))
    _same(jitted(x), want)


def test_unique_sized_under_vmap_matches_jax():
    xs = np.array([[1, 1, 2, 5], [3, 3, 3, 3], [9, 8, 7, 6]])
    _same(
        mjcore.vmap(lambda v: mjnp.unique(v, size=3))(xs),
        jax.vmap(lambda v: jnp.unique(v, size=3))(xs),
    )


def test_unique_sized_restrictions():
    with pytest.raises(NotImplementedError, match="values alone"):
        mjnp.unique(np.arange(3), return_counts=True, size=2)
    with pytest.raises(ValueError, match="size must be non-negative"):
        mjnp.unique(np.arange(3), size=-2)
