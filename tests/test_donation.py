"""jit's donate_argnums: donated buffers are reused for outputs and their Arrays deleted; which
arguments alias which outputs follows JAX's lowering (the oracle)."""

from __future__ import annotations

import functools
import re
import warnings

import numpy as onp
import pytest

import mjcore
from mjcore import grad, jit, lax, vmap

F32 = onp.float32
DELETED = "Array has been deleted with shape=float32"


def _arr(*shape: int, start: float = 1.0):
    return mjcore.device_put(onp.arange(onp.prod(shape), dtype=F32).reshape(shape) + start)


def _computed(x):
    # A buffer XLA allocated: `device_put` may wrap (aligned) host memory without a copy, and
    # XLA can delete such a donated buffer but not reuse its memory.
    return _negate(_negate(x))


_negate = jit(lambda x: lax.neg(x))


def _ptr(x) -> int:
    return x._buf.unsafe_buffer_pointer()


# --- the donated buffer is reused and its Array deleted --------------------------------------


def test_donated_input_is_deleted_and_its_buffer_becomes_the_output():
    f = jit(lambda x, y: (lax.add(x, y), lax.mul(x, y)), donate_argnums=0)
    x, y = _computed(_arr(2, 3)), _arr(2, 3, start=5.0)
    x_np, y_np, x_ptr = onp.asarray(x).copy(), onp.asarray(y), _ptr(x)
    s, p = f(x, y)
    onp.testing.assert_array_equal(onp.asarray(s), x_np + y_np)
    onp.testing.assert_array_equal(onp.asarray(p), x_np * y_np)
    assert x.is_deleted() and not y.is_deleted()
    assert _ptr(s) == x_ptr  # the first output of x's type reuses x's buffer
    onp.testing.assert_array_equal(onp.asarray(y), y_np)  # the other argument is untouched


@pytest.mark.skipif(
    mjcore.default_backend() != "cpu",
    reason="only a CPU buffer can be viewed by NumPy (on a GPU np.asarray copies to the host)",
)
def test_a_numpy_view_held_by_the_user_blocks_donation():
    # PJRT does not donate a buffer with an external reference: x stays valid and unchanged.
    f = jit(lambda x, y: lax.add(x, y), donate_argnums=0)
    x, y = _computed(_arr(4)), _arr(4)
    view = onp.asarray(x)
    out = f(x, y)
    assert not x.is_deleted()
    onp.testing.assert_array_equal(view, onp.arange(4, dtype=F32) + 1)
    onp.testing.assert_array_equal(onp.asarray(out), 2 * (onp.arange(4, dtype=F32) + 1))


def test_donation_in_a_loop_threads_the_state():
    step = jit(lambda w, g: lax.sub(w, lax.mul(g, 0.5)), donate_argnums=(0,))
    w, g = _arr(4), _arr(4, start=0.0)
    expected = onp.asarray(w).copy()
    for _ in range(5):
        old, w = w, step(w, g)
        expected = expected - onp.asarray(g) * F32(0.5)
        assert old.is_deleted()
    onp.testing.assert_allclose(onp.asarray(w), expected)
    assert step.compile_count == 1


@pytest.mark.parametrize(
    "use",
    [
        pytest.param(onp.asarray, id="asarray"),
        pytest.param(repr, id="repr"),
        pytest.param(lambda x: x.block_until_ready(), id="block_until_ready"),
        pytest.param(lambda x: lax.add(x, 1.0), id="eager-op"),
        pytest.param(jit(lambda x: lax.neg(x)), id="jit-call"),
    ],
)
def test_using_a_donated_array_raises(use):
    x = _arr(3)
    onp.asarray(x)  # a cached host copy must not keep a deleted Array readable
    jit(lambda x: lax.neg(x), donate_argnums=0)(x)
    with pytest.raises(RuntimeError, match=re.escape(DELETED + "[3]: it was donated")):
        use(x)


def test_a_warm_non_donating_jit_explains_a_deleted_argument():
    # The second call takes jit's all-Array fast path, which must explain it the same way.
    g = jit(lambda x: lax.mul(x, 2.0))
    x = _arr(3)
    g(_arr(3))
    jit(lambda x: lax.neg(x), donate_argnums=0)(x)
    with pytest.raises(RuntimeError, match=re.escape(DELETED + "[3]: it was donated")):
        g(x)


def test_donating_twice_raises():
    f = jit(lambda x: lax.neg(x), donate_argnums=0)
    x = _arr(3)
    f(x)
    with pytest.raises(RuntimeError, match=re.escape(DELETED + "[3]")):
        f(x)


def test_donated_array_passed_twice_raises():
    f = jit(lambda x, y: lax.add(x, y), donate_argnums=0)
    x = _arr(3)
    with pytest.raises(RuntimeError, match="donate"):
        f(x, x)


# --- what is and is not donated --------------------------------------------------------------


def test_unusable_donation_is_harmless_and_warns():
    f = jit(lambda x: lax.reduce_sum(x, (0,)), donate_argnums=0)
    x = _arr(5)
    with pytest.warns(UserWarning, match=r"donated buffers were not usable: f32\[5\]"):
        out = f(x)
    assert float(out) == 15.0
    assert not x.is_deleted()
    onp.testing.assert_array_equal(onp.asarray(x), onp.arange(5, dtype=F32) + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x)  # warned once, when compiling
    assert not x.is_deleted()


def test_same_size_other_shape_is_donated_to_xla():
    f = jit(lambda x: lax.reshape(lax.neg(x), (6,)), donate_argnums=0)
    x = _computed(_arr(2, 3))
    x_ptr = _ptr(x)
    out = f(x)
    onp.testing.assert_array_equal(onp.asarray(out), -(onp.arange(6, dtype=F32) + 1))
    assert x.is_deleted()
    assert _ptr(out) == x_ptr


def test_pytree_argument_donates_every_leaf():
    f = jit(
        lambda p, g: {k: lax.sub(p[k], g[k]) for k in p},
        donate_argnums=0,
    )
    params = {"w": _arr(2, 2), "b": _arr(2)}
    grads = {"w": _arr(2, 2), "b": _arr(2)}
    out = f(params, grads)
    assert all(v.is_deleted() for v in params.values())
    assert not any(v.is_deleted() for v in grads.values())
    onp.testing.assert_array_equal(onp.asarray(out["w"]), onp.zeros((2, 2), F32))


def test_static_and_keyword_arguments_shift_nothing():
    def f(scale, x, y):
        return lax.mul(lax.add(x, y), scale)

    g = jit(f, static_argnums=0, donate_argnums=2)
    x, y = _arr(3), _arr(3)
    out = g(2.0, x, y)
    assert y.is_deleted() and not x.is_deleted()
    onp.testing.assert_array_equal(onp.asarray(out), 2 * 2 * (onp.arange(3, dtype=F32) + 1))
    z = _arr(3)
    g(2.0, x, y=z)  # passed by keyword: not donated, as in JAX
    assert not z.is_deleted()


def test_negative_donate_argnums_count_from_the_last_parameter():
    f = jit(lambda x, y: lax.add(x, y), donate_argnums=-1)
    x, y = _arr(3), _arr(3)
    f(x, y)
    assert y.is_deleted() and not x.is_deleted()


def test_scalars_and_numpy_arguments_are_safe_to_donate():
    f = jit(
        lambda x, s: lax.mul(x, lax.convert_element_type(s, onp.float32)), donate_argnums=(0, 1)
    )
    host = onp.arange(3, dtype=F32)
    out = f(host, 2.0)  # a NumPy array is copied to the device; 0-d arguments are kept
    onp.testing.assert_array_equal(onp.asarray(out), host * 2)
    onp.testing.assert_array_equal(host, onp.arange(3, dtype=F32))
    s = mjcore.device_put(F32(3.0))
    f(_arr(3), s)
    assert not s.is_deleted()
    # The device buffer cached for the Python scalar 2.0 is still alive.
    onp.testing.assert_array_equal(onp.asarray(lax.mul(_arr(3), 2.0)), [2, 4, 6])


def test_closure_constants_are_not_donated():
    c = _arr(3)
    f = jit(lambda x: lax.add(x, c), donate_argnums=0)
    x = _arr(3)
    out = f(x)
    assert x.is_deleted() and not c.is_deleted()
    onp.testing.assert_array_equal(onp.asarray(out), 2 * (onp.arange(3, dtype=F32) + 1))
    onp.testing.assert_array_equal(onp.asarray(f(_arr(3))), onp.asarray(out))


@pytest.mark.parametrize(
    "transform,expected",
    [
        pytest.param(
            lambda f: grad(lambda x: lax.reduce_sum(f(x), (0, 1))), lambda x: 2 * x, id="grad"
        ),
        pytest.param(vmap, lambda x: x * x, id="vmap"),
        pytest.param(lambda f: jit(lambda x: f(x)), lambda x: x * x, id="inner-jit"),
    ],
)
def test_donation_is_ignored_under_transformations(transform, expected):
    f = jit(lambda x: lax.mul(x, x), donate_argnums=0)
    x = _arr(2, 3)
    out = transform(f)(x)
    assert not x.is_deleted()
    onp.testing.assert_array_equal(onp.asarray(out), expected(onp.asarray(x)))


# --- argument checking -----------------------------------------------------------------------


def test_donate_argnums_errors():
    with pytest.raises(ValueError, match=r"jit\(f\): argument 0 is both static and donated"):

        def f(x):
            return x

        jit(f, static_argnums=0, donate_argnums=0)
    with pytest.raises(TypeError, match=r"donate_argnums must be integers, got str"):
        jit(lambda x: x, donate_argnums=("x",))
    with pytest.raises(ValueError, match="negative donate_argnums -1 needs a function with"):
        jit(lambda *xs: xs[0], donate_argnums=-1)


# --- the lowered module, against JAX's -------------------------------------------------------

# (name, function of (ops, x, y), argument shapes, donate_argnums); `ops` is JAX's or ours.
ALIAS_CASES = [
    ("same-type", lambda o, x, y: (o.add(x, y), o.mul(x, y)), ((2, 3), (2, 3)), (0, 1)),
    ("second-only", lambda o, x, y: (o.add(x, y), o.mul(x, y)), ((2, 3), (2, 3)), (1,)),
    ("reshape-donor", lambda o, x, y: o.reshape(o.add(x, y), (6,)), ((2, 3), (2, 3)), (0,)),
    ("unusable", lambda o, x, y: o.sum(o.add(x, y)), ((2, 3), (2, 3)), (0,)),
    ("more-donors-than-outputs", lambda o, x, y: o.sub(x, y), ((4,), (4,)), (0, 1)),
    ("mixed", lambda o, x, y: (o.reshape(y, (4,)), o.neg(x)), ((2, 2), (2, 2)), (0, 1)),
    ("other-dtype", lambda o, x, y: o.to_int(o.add(x, y)), ((3,), (3,)), (0,)),
]


class _Ops:
    """The few operations the cases use, from JAX's lax or from mjcore.lax."""

    def __init__(self, lx, sum_fn):
        self.add, self.sub, self.mul, self.neg, self.reshape = (
            lx.add,
            lx.sub,
            lx.mul,
            lx.neg,
            lx.reshape,
        )
        self.sum = sum_fn
        self.to_int = lambda x: lx.convert_element_type(x, onp.int32)


def _donation_attrs(text: str) -> list[str]:
    header = re.search(r"func\.func public @main\((.*?)\) ->", text).group(1)
    args = re.split(r", (?=%)", header)
    out = []
    for a in args:
        m = re.search(r"(tf\.aliasing_output = \d+|jax\.buffer_donor = true)", a)
        out.append(m.group(1) if m else "")
    return out


@pytest.mark.parametrize(
    "fun,shapes,donate", [c[1:] for c in ALIAS_CASES], ids=[c[0] for c in ALIAS_CASES]
)
def test_donation_marks_match_jax(fun, shapes, donate):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_platforms", "cpu")
    theirs_ops = _Ops(jax.lax, jax.numpy.sum)
    our_ops = _Ops(lax, lambda x: lax.reduce_sum(x, (0, 1)))
    host = [onp.ones(s, F32) for s in shapes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = jax.jit(functools.partial(fun, theirs_ops), donate_argnums=donate)
        ours = jit(functools.partial(fun, our_ops), donate_argnums=donate)
        expected = theirs.lower(*host).as_text()
        got = ours.lower(*map(mjcore.device_put, host)).as_text()
    assert _donation_attrs(got) == _donation_attrs(expected)
