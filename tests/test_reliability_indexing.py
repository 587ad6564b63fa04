"""Out-of-bounds indices under jit and vmap follow JAX's documented modes and never write or
read a wrong element: gathers clamp or fill, scatters drop (or clamp on request), negative
indices wrap once. Oracle: JAX (x64), the same function under the same transformation."""

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np

jax.config.update("jax_enable_x64", True)

X10 = onp.arange(10.0)
I10 = onp.arange(10)
INDICES = [10, 11, -11, -12, -10, -1, 0, 3, 9]

# name -> (function of (module, x, i), operand)
PROGRAMS = {
    "at.set": (lambda M, x, i: x.at[i].set(-1.0), X10),
    "at.add": (lambda M, x, i: x.at[i].add(100.0), X10),
    "at.subtract": (lambda M, x, i: x.at[i].subtract(100.0), X10),
    "at.multiply": (lambda M, x, i: x.at[i].multiply(3.0), X10),
    "at.divide": (lambda M, x, i: x.at[i].divide(4.0), X10),
    "at.power": (lambda M, x, i: x.at[i].power(2.0), X10),
    "at.min": (lambda M, x, i: x.at[i].min(-5.0), X10),
    "at.max": (lambda M, x, i: x.at[i].max(50.0), X10),
    "at.set-int": (lambda M, x, i: x.at[i].set(-1), I10),
    "at.set-clip": (lambda M, x, i: x.at[i].set(-1.0, mode="clip"), X10),
    "at.add-clip": (lambda M, x, i: x.at[i].add(100.0, mode="clip"), X10),
    "at.set-drop": (lambda M, x, i: x.at[i].set(-1.0, mode="drop"), X10),
    "at.set-fill": (lambda M, x, i: x.at[i].set(-1.0, mode="fill"), X10),
    "at.set-promise": (lambda M, x, i: x.at[i].set(-1.0, mode="promise_in_bounds"), X10),
    "at.set-array": (lambda M, x, i: x.at[M.stack([i, i - 2])].set(-1.0), X10),
    "at.set-row-slice": (lambda M, x, i: x.reshape(2, 5).at[i % 4 - 1, 1:].set(7.0), X10),
    "at.get": (lambda M, x, i: x.at[i].get(), X10),
    "at.get-fill": (lambda M, x, i: x.at[i].get(mode="fill"), X10),
    "at.get-drop": (lambda M, x, i: x.at[i].get(mode="drop"), X10),
    "at.get-fill-int": (lambda M, x, i: x.at[i].get(mode="fill"), I10),
    "at.get-fill-uint8": (lambda M, x, i: x.at[i].get(mode="fill"), I10.astype(onp.uint8)),
    "at.get-fill-bool": (lambda M, x, i: x.at[i].get(mode="fill"), I10 > 4),
    "at.get-fill-value": (lambda M, x, i: x.at[i].get(mode="fill", fill_value=7.0), X10),
    "at.get-fill-implied": (lambda M, x, i: x.at[i].get(fill_value=-3.0), X10),
    "at.get-clip": (lambda M, x, i: x.at[i].get(mode="clip"), X10),
    "at.get-promise": (lambda M, x, i: x.at[i].get(mode="promise_in_bounds"), X10),
    "getitem": (lambda M, x, i: x[i], X10),
    "getitem-array": (lambda M, x, i: x[M.stack([i, 2, i])], X10),
    "getitem-2d": (lambda M, x, i: x.reshape(2, 5)[:, i % 7], X10),
    "take": (lambda M, x, i: M.take(x, i), X10),
    "take-array": (lambda M, x, i: M.take(x, M.stack([i, 1])), X10),
    "take-int": (lambda M, x, i: M.take(x, i), I10),
    "take-uint8": (lambda M, x, i: M.take(x, i), I10.astype(onp.uint8)),
    "take-fill-value": (lambda M, x, i: M.take(x, i, fill_value=5.0), X10),
    "take-fill": (lambda M, x, i: M.take(x, i, mode="fill"), X10),
    "take-clip": (lambda M, x, i: M.take(x, i, mode="clip"), X10),
    "take-axis1": (lambda M, x, i: M.take(x.reshape(2, 5), M.stack([i, 0]), axis=1), X10),
    "take_along_axis": (
        lambda M, x, i: M.take_along_axis(x, M.stack([i, 1, i]), axis=0),
        X10,
    ),
    "take_along_axis-clip": (
        lambda M, x, i: M.take_along_axis(x, M.stack([i, 1, i]), axis=0, mode="clip"),
        X10,
    ),
    "take_along_axis-2d": (
        lambda M, x, i: M.take_along_axis(x.reshape(2, 5), M.stack([i, 0])[None] % 7, axis=1),
        X10,
    ),
}


def _same(got, want):
    got, want = onp.asarray(got), onp.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    onp.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jit_matches_jax(name):
    f, x = PROGRAMS[name]
    mj = mjcore.jit(lambda x, i: f(np, x, i))
    jx = jax.jit(lambda x, i: f(jnp, x, i))
    for i in INDICES:
        _same(mj(np.asarray(x), i), jx(jnp.asarray(x), i))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vmap_over_indices_matches_jax(name):
    f, x = PROGRAMS[name]
    idx = onp.array(INDICES)
    got = mjcore.vmap(lambda i: f(np, np.asarray(x), i))(np.asarray(idx))
    # JAX's vmap as one jitted program (eager JAX compiles each batched op).
    _same(got, jax.jit(jax.vmap(lambda i: f(jnp, jnp.asarray(x), i)))(jnp.asarray(idx)))


@pytest.mark.parametrize("name", ["at.set", "at.add", "at.get-fill", "take", "getitem"])
def test_vmap_over_rows_and_indices_matches_jax(name):
    f, _ = PROGRAMS[name]
    rows = onp.arange(8.0).reshape(2, 4)
    # JAX's vmap as one jitted program, the same shapes for every i (eager JAX compiles each op).
    jax_vmapped = jax.jit(jax.vmap(lambda r, i: f(jnp, r, i)))
    for i in ([7, 2], [-5, -1], [4, 0]):
        got = mjcore.vmap(lambda r, i: f(np, r, i))(np.asarray(rows), np.asarray(i))
        want = jax_vmapped(jnp.asarray(rows), jnp.asarray(i))
        _same(got, want)


def test_the_issue_cases():
    x = np.arange(10.0)
    f = mjcore.jit(lambda x, i: x.at[i].set(-1.0))
    _same(f(x, 10), X10)
    _same(f(x, -11), X10)
    _same(mjcore.jit(lambda x, i: x.at[i].add(100.0))(x, 10), X10)
    _same(mjcore.jit(np.take)(x, 10), onp.float64(onp.nan))
    rows = np.arange(8.0).reshape(2, 4)
    got = mjcore.jit(mjcore.vmap(lambda r, i: r.at[i].set(-1.0), in_axes=(0, None)))
    _same(got(rows, 7), onp.arange(8.0).reshape(2, 4))
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 4"):
        mjcore.vmap(lambda r: r.at[7].set(-1.0))(rows)  # a known index is checked, as NumPy


def test_uint64_huge_index_stays_out_of_bounds():
    x = np.arange(10.0)
    i = onp.uint64(2**64 - 1)  # -1 if it were wrapped to int64
    got = mjcore.jit(lambda x, i: x.at[i].set(-1.0))(x, np.asarray(i))
    _same(got, X10)
    got = mjcore.jit(lambda x, i: x.at[i].get(mode="fill"))(x, np.asarray(i))
    assert onp.isnan(onp.asarray(got))


def test_grad_through_dropped_and_filled_indices_matches_jax():
    idx = onp.array([10, 2, -11, -1])

    def loss(M, x, i):
        a = x.at[i].get(mode="fill", fill_value=0.0)
        b = x.at[i].set(x[0] * 2.0)
        return (a * a).sum() + (b * b).sum()

    got = mjcore.jit(mjcore.grad(lambda x, i: loss(np, x, i)))(np.asarray(X10), idx)
    want = jax.jit(jax.grad(lambda x, i: loss(jnp, x, i)))(jnp.asarray(X10), idx)
    onp.testing.assert_allclose(onp.asarray(got), onp.asarray(want))


def test_eager_static_out_of_bounds_still_raises_index_error():
    x = np.arange(10.0)
    for call in (
        lambda: x[10],
        lambda: x[-11],
        lambda: x.at[10].set(1.0),
        lambda: x.at[-11].add(1.0),
        lambda: x.at[10].get(),
        lambda: np.take(x, 10),
        lambda: np.take_along_axis(x, np.asarray([10]), axis=0),
    ):
        with pytest.raises(IndexError, match="out of bounds"):
            call()


def test_explicit_modes_apply_to_known_indices_as_jax():
    x = np.arange(10.0)
    jx = jnp.arange(10.0)
    for i in (10, -11):
        _same(x.at[i].set(-1.0, mode="drop"), jx.at[i].set(-1.0, mode="drop"))
        _same(x.at[i].set(-1.0, mode="clip"), jx.at[i].set(-1.0, mode="clip"))
        _same(x.at[i].get(mode="fill"), jx.at[i].get(mode="fill"))
        _same(x.at[i].get(mode="clip"), jx.at[i].get(mode="clip"))
        _same(np.take(x, i, mode="fill"), jnp.take(jx, i, mode="fill"))
    _same(np.zeros(0).at[np.asarray([0])].get(mode="fill"), onp.array([onp.nan]))


def test_unknown_mode_raises_value_error():
    x = np.arange(3.0)
    with pytest.raises(ValueError, match="mode must be one of"):
        x.at[0].set(1.0, mode="wrap")
    with pytest.raises(ValueError, match="mode must be one of"):
        x.at[0].get(mode="bogus")
    with pytest.raises(ValueError, match="mode must be"):
        np.take_along_axis(x, np.asarray([0]), axis=0, mode="wrap")


# --- checked_indexing: out-of-bounds indices in compiled code raise at the call -------------


@pytest.fixture
def checked():
    mjcore.config.update("checked_indexing", True)
    yield
    mjcore.config.update("checked_indexing", False)


_X = np.arange(10.0)
CHECKED_CASES = {
    "jit-getitem": lambda i: mjcore.jit(lambda x, i: x[i])(_X, i),
    "jit-getitem-array": lambda i: mjcore.jit(lambda x, i: x[np.stack([1, i])])(_X, i),
    "jit-at-set": lambda i: mjcore.jit(lambda x, i: x.at[i].set(1.0))(_X, i),
    "jit-at-add-2d": lambda i: mjcore.jit(lambda x, i: x.reshape(2, 5).at[:, i].add(1.0))(_X, i),
    "jit-take": lambda i: mjcore.jit(np.take)(_X, i),
    "jit-take_along_axis": lambda i: mjcore.jit(
        lambda x, i: np.take_along_axis(x, np.stack([i, 0]), axis=0)
    )(_X, i),
    "vmap": lambda i: mjcore.vmap(lambda i: _X[i])(np.stack([0, i, 2])),
    "jit-vmap": lambda i: mjcore.jit(mjcore.vmap(lambda i: _X[i]))(np.stack([0, i, 2])),
    "jit-grad": lambda i: mjcore.jit(mjcore.grad(lambda x, i: x[i] * 2.0))(_X, i),
    "jit-fori_loop": lambda i: mjcore.jit(
        lambda x, n: mjcore.lax.fori_loop(0, 3, lambda k, c: c + x[n - k], 0.0)
    )(_X, i),
    "jit-cond": lambda i: mjcore.jit(
        lambda x, i: mjcore.lax.cond(i != 5, lambda: x[i], lambda: 0.0)
    )(_X, i),
    "nested-jit": lambda i: mjcore.jit(lambda x, i: mjcore.jit(lambda y, j: y[j])(x, i) + 1)(_X, i),
}


@pytest.mark.parametrize("name", sorted(CHECKED_CASES))
@pytest.mark.parametrize("bad", [10, 13, -11])
def test_checked_indexing_raises_index_error_at_the_call(checked, name, bad):
    run = CHECKED_CASES[name]
    run(4)  # in bounds: runs
    # fori_loop indexes n, n-1, n-2: the first bad one is n itself for n >= 10
    with pytest.raises(IndexError, match=f"index {bad} is out of bounds for axis . with size"):
        run(bad)


def test_checked_indexing_in_bounds_values_unchanged(checked):
    f = mjcore.jit(lambda x, i: (x[i], x.at[i].add(1.0), np.take(x, np.stack([i, -i]))))
    got = f(_X, -3)
    want = jax.jit(lambda x, i: (x[i], x.at[i].add(1.0), jnp.take(x, jnp.stack([i, -i]))))(
        jnp.arange(10.0), -3
    )
    for g, w in zip(got, want, strict=True):
        _same(g, w)


def test_checked_indexing_leaves_explicit_modes_alone(checked):
    f = mjcore.jit(lambda x, i: (x.at[i].set(1.0, mode="drop"), x.at[i].get(mode="fill")))
    dropped, filled = f(_X, 10)
    _same(dropped, X10)
    assert onp.isnan(onp.asarray(filled))


def test_checked_indexing_flag_retraces_cached_functions():
    f = mjcore.jit(lambda x, i: x[i])
    _same(f(_X, 10), onp.float64(9.0))  # JAX's clamp
    mjcore.config.update("checked_indexing", True)
    try:
        with pytest.raises(IndexError, match="index 10 is out of bounds"):
            f(_X, 10)
    finally:
        mjcore.config.update("checked_indexing", False)
    _same(f(_X, 10), onp.float64(9.0))
