"""JAX top-level API extras: ShapeDtypeStruct/eval_shape/typeof, jacobian, linear_transpose,
custom_gradient, closure_convert, named_call, disable_jit, clear_caches,
ensure_compile_time_eval and device introspection, with JAX (x64) as the oracle."""

from __future__ import annotations

import functools
import importlib

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import grad, jit, make_jaxpr, vmap
from mjcore.tree_util import tree_leaves, tree_map

jax.config.update("jax_enable_x64", True)


def _rand(*shape, seed=0, dtype=onp.float64):
    return onp.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _close(a, b, rtol=1e-12):
    for x, y in zip(tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        onp.testing.assert_allclose(onp.asarray(x), onp.asarray(y), rtol=rtol, atol=1e-12)


def _sds_summary(tree, leaves_map):
    return leaves_map(lambda s: (tuple(s.shape), onp.dtype(s.dtype), bool(s.weak_type)), tree)


# --- eval_shape and ShapeDtypeStruct ---------------------------------------------------------

# (id, mjnp function, jax.numpy function, argument builder): the argument builder gets the
# array module and returns the arguments (arrays, NumPy arrays, Python scalars).
EVAL_SHAPE_CASES = [
    (
        "matmul-f32",
        lambda x, y: x @ y,
        lambda x, y: x @ y,
        ((2, 3), "float32"),
        ((3, 4), "float32"),
    ),
    (
        "pytree-out",
        lambda x, y: {"s": x.sum() + 1.0, "t": (x * 2.0, y[None])},
        lambda x, y: {"s": x.sum() + 1.0, "t": (x * 2.0, y[None])},
        ((5,), "float32"),
        ((2, 2), "int64"),
    ),
    (
        "f32-times-weak",
        lambda x, y: x * 2.0 + y,
        lambda x, y: x * 2.0 + y,
        ((3,), "float32"),
        ((3,), "float32"),
    ),
    (
        "int64-plus-f64",
        lambda x, y: x + y,
        lambda x, y: x + y,
        ((4, 1), "int64"),
        ((1, 5), "float64"),
    ),
    ("f32-plus-f64", lambda x, y: x + y, lambda x, y: x + y, ((3,), "float32"), ((3,), "float64")),
    ("bool-times-int", lambda x, y: x * y, lambda x, y: x * y, ((3,), "bool"), ((3,), "int64")),
    (
        "c64-times-f64",
        lambda x, y: x * y,
        lambda x, y: x * y,
        ((2,), "complex64"),
        ((2,), "float64"),
    ),
    ("int32-plus-int64", lambda x, y: x + y, lambda x, y: x + y, ((2,), "int32"), ((2,), "int64")),
    ("python-scalar-out", lambda x, y: 2.0, lambda x, y: 2.0, ((2,), "float64"), ((2,), "float64")),
    (
        "reductions",
        lambda x, y: (np.mean(x, axis=0), np.max(y, keepdims=True)),
        lambda x, y: (jnp.mean(x, axis=0), jnp.max(y, keepdims=True)),
        ((3, 4), "float32"),
        ((2, 5), "int64"),
    ),
]


@pytest.mark.parametrize(
    "mj_fun,jax_fun,spec_x,spec_y",
    [c[1:] for c in EVAL_SHAPE_CASES],
    ids=[c[0] for c in EVAL_SHAPE_CASES],
)
@pytest.mark.parametrize("kind", ["sds", "numpy", "array"])
def test_eval_shape_matches_jax(mj_fun, jax_fun, spec_x, spec_y, kind):
    def make(spec, seed):
        shape, dtype = spec
        if kind == "sds":
            return mjcore.ShapeDtypeStruct(shape, dtype), jax.ShapeDtypeStruct(shape, dtype)
        x = (_rand(*shape, seed=seed) * 3).astype(dtype)
        return (x if kind == "numpy" else np.asarray(x)), x

    (x, jx), (y, jy) = make(spec_x, 0), make(spec_y, 1)
    out = mjcore.eval_shape(mj_fun, x, y)
    expected = jax.eval_shape(jax_fun, jx, jy)
    assert all(isinstance(s, mjcore.ShapeDtypeStruct) for s in tree_leaves(out))
    assert _sds_summary(out, tree_map) == _sds_summary(expected, jax.tree_util.tree_map)


def test_eval_shape_kwargs_python_scalars_and_jax_arrays():
    def f(x, *, scale, offset):
        return {"y": x * scale + offset, "n": scale}

    jx = jnp.ones((2, 3), jnp.float32)  # a foreign array: used through .shape and .dtype
    out = mjcore.eval_shape(f, jx, scale=2.0, offset=onp.ones(3, onp.float32))
    expected = jax.eval_shape(f, jx, scale=2.0, offset=onp.ones(3, onp.float32))
    assert _sds_summary(out, tree_map) == _sds_summary(expected, jax.tree_util.tree_map)
    assert out["n"].weak_type and not out["y"].weak_type


def test_eval_shape_does_no_flops():
    big = mjcore.ShapeDtypeStruct((100_000, 100_000), np.float64)  # 80 GB if ever allocated
    out = mjcore.eval_shape(lambda a: np.tanh(a @ a).sum(axis=0), big)
    assert out == mjcore.ShapeDtypeStruct((100_000,), np.float64)


def test_eval_shape_of_jitted_function_traces_without_compiling():
    f = jit(lambda x, y: (x @ y, np.sum(y)))
    x, y = mjcore.ShapeDtypeStruct((2, 3), np.float32), jnp.ones((3,), jnp.float32)
    out = mjcore.eval_shape(f, x, y)
    assert out == (
        mjcore.ShapeDtypeStruct((2,), np.float32),
        mjcore.ShapeDtypeStruct((), np.float32),
    )
    assert f.compile_count == 0


def test_eval_shape_rejects_non_array_leaf():
    with pytest.raises(TypeError, match=r"eval_shape\(<lambda>\): .*type str"):
        mjcore.eval_shape(lambda x, s: x, np.ones(2), "hello")


def test_shape_dtype_struct_behaves_like_jax():
    s = mjcore.ShapeDtypeStruct([2, 3], onp.float32)
    j = jax.ShapeDtypeStruct((2, 3), jnp.float32)
    assert (s.shape, s.dtype, s.ndim, s.size, s.weak_type) == (
        j.shape,
        j.dtype,
        j.ndim,
        j.size,
        j.weak_type,
    )
    assert repr(s) == "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
    w = mjcore.ShapeDtypeStruct((), float, weak_type=True)
    assert repr(w) == "ShapeDtypeStruct(shape=(), dtype=float64, weak_type=True)"
    assert s == mjcore.ShapeDtypeStruct((2, 3), "float32") and hash(s) == hash(
        mjcore.ShapeDtypeStruct((2, 3), "float32")
    )
    assert s != mjcore.ShapeDtypeStruct((2, 3), "float32", weak_type=True)
    assert mjcore.ShapeDtypeStruct.like(np.ones((2, 3), dtype=np.float32)) == s
    with pytest.raises(AttributeError, match="immutable"):
        s.shape = (4,)
    with pytest.raises(ValueError, match="dtype must be specified"):
        mjcore.ShapeDtypeStruct((2,), None)
    with pytest.raises(TypeError, match="non-negative integers"):
        mjcore.ShapeDtypeStruct((2, -1), "float32")
    with pytest.raises(TypeError, match="has no value"):
        np.sin(s)
    with pytest.raises(TypeError, match="has no value"):
        jit(np.sin)(s)


def test_jit_lower_trace_and_make_jaxpr_accept_shape_dtype_structs():
    def f(x, y):
        return np.sin(x) * y

    x = mjcore.ShapeDtypeStruct((3,), np.float32)
    y = mjcore.ShapeDtypeStruct((), np.float32)
    text = jit(f).lower(x, y).as_text()
    assert "tensor<3xf32>" in text
    assert jit(f).trace(x, y).out_avals == [mjcore.ShapedArray((3,), np.float32)]
    assert str(make_jaxpr(f)(x, y)) == str(make_jaxpr(f)(np.ones(3, np.float32), np.float32(1)))
    compiled = jit(f).lower(x, y).compile()
    onp.testing.assert_allclose(
        compiled(np.ones(3, np.float32), np.float32(2)), 2 * onp.sin(onp.ones(3, onp.float32))
    )


@pytest.mark.parametrize(
    "value",
    [1.0, 3, True, onp.float32(2), onp.ones((2, 3), onp.int32), 1j],
    ids=["float", "int", "bool", "np-f32-scalar", "np-i32", "complex"],
)
def test_typeof_matches_jax(value):
    t, jt = mjcore.typeof(value), jax.typeof(value)
    # NB: mjcore types every Python scalar as weak, a bool too (where JAX does not); a weak
    # bool promotes exactly as a strong one, so only the flag differs.
    weak = jt.weak_type or type(value) is bool
    assert (t.shape, t.dtype, t.weak_type) == (jt.shape, jt.dtype, weak)
    assert mjcore.typeof(np.asarray(value)).shape == onp.shape(value)


def test_typeof_of_tracer_and_error():
    seen = []
    jit(lambda x: seen.append(mjcore.typeof(x)) or x)(np.ones(4, np.float32))
    assert seen == [mjcore.ShapedArray((4,), np.float32)]
    with pytest.raises(TypeError, match="typeof: a value of type str"):
        mjcore.typeof("x")


# --- jacobian -------------------------------------------------------------------------------


def test_jacobian_is_jacrev():
    assert mjcore.jacobian is mjcore.jacrev


JACOBIAN_CASES = [
    ("tanh-matvec", lambda w, x: np.tanh(w @ x), lambda w, x: jnp.tanh(w @ x), 0),
    ("two-args", lambda w, x: np.sin(w) @ x, lambda w, x: jnp.sin(w) @ x, (0, 1)),
    (
        "pytree-out",
        lambda w, x: {"a": w * x[0], "b": np.sum(w**2)},
        lambda w, x: {"a": w * x[0], "b": jnp.sum(w**2)},
        1,
    ),
]


@pytest.mark.parametrize(
    "mj_fun,jax_fun,argnums", [c[1:] for c in JACOBIAN_CASES], ids=[c[0] for c in JACOBIAN_CASES]
)
def test_jacobian_matches_jax(mj_fun, jax_fun, argnums):
    w, x = _rand(3, 3, seed=2), _rand(3, seed=3)
    _close(
        mjcore.jacobian(mj_fun, argnums)(np.asarray(w), np.asarray(x)),
        jax.jacobian(jax_fun, argnums)(w, x),
    )
    _close(
        jit(mjcore.jacobian(mj_fun, argnums))(np.asarray(w), np.asarray(x)),
        jax.jacobian(jax_fun, argnums)(w, x),
    )


# --- linear_transpose -----------------------------------------------------------------------

_A = _rand(4, 3, seed=4)

# (id, mjnp linear function, jax linear function, primal shapes (a pytree of shapes))
LINEAR_CASES = [
    ("scale-and-sum", lambda x: 2.0 * x + np.sum(x), lambda x: 2.0 * x + jnp.sum(x), ((3,),)),
    ("matvec", lambda x: np.asarray(_A) @ x, lambda x: _A @ x, ((3,),)),
    (
        "two-args-pair-out",
        lambda x, y: (x - 3.0 * y, np.cumsum(x)[::-1]),
        lambda x, y: (x - 3.0 * y, jnp.cumsum(x)[::-1]),
        ((3,), (3,)),
    ),
    (
        "pytree-in",
        lambda d: d["a"].T @ np.asarray(_A[:2]) + d["b"][0],
        lambda d: d["a"].T @ _A[:2] + d["b"][0],
        ({"a": (2, 5), "b": ((5, 3), (5, 3))},),
    ),
    (
        "jit-inside",
        lambda x: jit(lambda z: np.concatenate([z, -z]) / 2.0)(x),
        lambda x: jax.jit(lambda z: jnp.concatenate([z, -z]) / 2.0)(x),
        ((3,),),
    ),
]


def _zeros_like_shapes(shapes):
    return jax.tree_util.tree_map(
        lambda s: onp.zeros(s),
        shapes,
        is_leaf=lambda s: isinstance(s, tuple) and all(isinstance(d, int) for d in s),
    )


@pytest.mark.parametrize(
    "mj_fun,jax_fun,shapes", [c[1:] for c in LINEAR_CASES], ids=[c[0] for c in LINEAR_CASES]
)
@pytest.mark.parametrize("wrap", ["plain", "jit"])
def test_linear_transpose_matches_jax(mj_fun, jax_fun, shapes, wrap):
    primals = _zeros_like_shapes(shapes)
    out_struct = jax.eval_shape(jax_fun, *primals)
    rng = onp.random.default_rng(5)
    ct = jax.tree_util.tree_map(lambda s: rng.standard_normal(s.shape), out_struct)
    f_t = mjcore.linear_transpose(mj_fun, *primals)
    if wrap == "jit":
        f_t = jit(f_t)
    got = f_t(ct)
    expected = jax.linear_transpose(jax_fun, *primals)(ct)
    assert isinstance(got, tuple) and len(got) == len(primals)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(expected)
    _close(got, expected)
    # The transpose of a linear map equals its vjp.
    _, f_vjp = mjcore.vjp(mj_fun, *primals)
    _close(got, f_vjp(ct))


def test_linear_transpose_of_jitted_function_and_under_grad():
    f = jit(lambda x: np.asarray(_A) @ x)
    f_t = mjcore.linear_transpose(f, onp.zeros(3))
    ct = _rand(4, seed=6)
    _close(f_t(ct), (_A.T @ ct,))
    # The transposed map is itself linear: its gradient is the original map's matrix.
    g = grad(lambda c: f_t(c)[0][1])(np.asarray(ct))
    _close(g, _A[:, 1])


def test_linear_transpose_dtypes_follow_primals():
    f_t = mjcore.linear_transpose(lambda x: x * 2.0, onp.zeros(3, onp.float32))
    (out,) = f_t(onp.ones(3, onp.float32))
    assert out.dtype == onp.float32


@pytest.mark.parametrize(
    "fun,match",
    [
        (np.sin, r"linear_transpose\(sin\): .*not linear.*'sin'"),
        (lambda x: x * x, r"not linear.*mul: cannot transpose a product of two linear inputs"),
        (lambda x: 1.0 / x, r"not linear.*div: the divisor cannot be a linear input"),
    ],
    ids=["sin", "square", "reciprocal"],
)
def test_linear_transpose_rejects_nonlinear_functions(fun, match):
    with pytest.raises(TypeError, match=match):
        mjcore.linear_transpose(fun, onp.ones(3))


def test_linear_transpose_input_errors():
    with pytest.raises(TypeError, match="only supports"):
        mjcore.linear_transpose(lambda x: x * 2.0, onp.ones(3, onp.int64))
    with pytest.raises(NotImplementedError, match="reduce_axes"):
        mjcore.linear_transpose(lambda x: x, 1.0, reduce_axes=("batch",))
    f_t = mjcore.linear_transpose(lambda x: (x, x), onp.ones(2))
    with pytest.raises(TypeError, match="cotangent tree does not match"):
        f_t(onp.ones(2))
    with pytest.raises(TypeError, match="cotangent type does not match"):
        f_t((onp.ones(3), onp.ones(2)))


# --- custom_gradient ------------------------------------------------------------------------


def _clipped_sin(mod):
    @mod.custom_gradient
    def f(x):
        y = mod_np(mod).sin(x)
        return y, lambda g: (mod_np(mod).clip(g * mod_np(mod).cos(x), -0.5, 0.5),)

    return f


def mod_np(mod):
    return np if mod is mjcore else jnp


def _scaled_product(mod):
    @mod.custom_gradient
    def f(x, y):
        xp = mod_np(mod)
        z = xp.sum(x * y)
        # Closes over values computed in f (z) and returns one cotangent per argument.
        return z, lambda g: (3.0 * g * y * z, g * x)

    return f


def _single_cotangent(mod):
    @mod.custom_gradient
    def f(x):
        return mod_np(mod).exp(x), lambda g: 10.0 * g  # a single argument: not a tuple

    return f


@pytest.mark.parametrize(
    "make,n_args",
    [(_clipped_sin, 1), (_scaled_product, 2), (_single_cotangent, 1)],
    ids=["clipped-sin", "scaled-product", "single-cotangent"],
)
@pytest.mark.parametrize("wrap", ["grad", "jit-grad", "grad-jit", "vmap-grad"])
def test_custom_gradient_matches_jax(make, n_args, wrap):
    mj_f, jax_f = make(mjcore), make(jax)
    argnums = tuple(range(n_args))

    def loss(mod, f):
        xp = mod_np(mod)
        return lambda *a: xp.sum(f(*a) * 1.5)

    mj_loss, jax_loss = loss(mjcore, mj_f), loss(jax, jax_f)
    batch = wrap == "vmap-grad"
    args = [_rand(*((4, 3) if batch else (3,)), seed=7 + i) for i in range(n_args)]
    transforms = {
        "grad": (lambda f: grad(f, argnums), lambda f: jax.grad(f, argnums)),
        "jit-grad": (lambda f: jit(grad(f, argnums)), lambda f: jax.jit(jax.grad(f, argnums))),
        "grad-jit": (lambda f: grad(jit(f), argnums), lambda f: jax.grad(jax.jit(f), argnums)),
        "vmap-grad": (
            lambda f: vmap(grad(f, argnums)),
            lambda f: jax.vmap(jax.grad(f, argnums)),
        ),
    }
    mj_t, jax_t = transforms[wrap]
    _close(mj_t(mj_loss)(*map(np.asarray, args)), jax_t(jax_loss)(*args))
    _close(mj_f(*map(np.asarray, args)), jax_f(*args))  # the primal value


def test_custom_gradient_keyword_arguments_bind_to_positions():
    @mjcore.custom_gradient
    def f(x, scale):
        return x * scale, lambda g: (g * 100.0, g * x)

    assert float(f(2.0, scale=3.0)) == 6.0
    assert float(grad(lambda x: f(x, scale=3.0))(2.0)) == 100.0
    assert float(grad(f, 1)(2.0, 3.0)) == 2.0


def test_custom_gradient_value_and_vjp():
    f = _clipped_sin(mjcore)
    x = np.asarray(_rand(5, seed=9) * 3)
    y, f_vjp = mjcore.vjp(f, x)
    (ct,) = f_vjp(np.ones(5))
    onp.testing.assert_allclose(y, onp.sin(onp.asarray(x)))
    onp.testing.assert_allclose(ct, onp.clip(onp.cos(onp.asarray(x)), -0.5, 0.5))


# --- closure_convert ------------------------------------------------------------------------


def _make_apply(mod):
    """A custom_vjp `apply(f, x, *consts)` taking a closure-converted `f`, as JAX's docs."""

    @functools.partial(mod.custom_vjp, nondiff_argnums=(0,))
    def apply(f, x, *consts):
        return f(x, *consts)

    def fwd(f, x, *consts):
        return f(x, *consts), (x, consts)

    def bwd(f, res, g):
        x, consts = res
        _, f_vjp = mod.vjp(f, x, *consts)
        return f_vjp(g)

    apply.defvjp(fwd, bwd)

    def call(f, x):
        converted, consts = mod.closure_convert(f, x)
        return apply(converted, x, *consts)

    return call


def test_closure_convert_in_custom_vjp_matches_jax():
    def loss(mod, a, x):
        xp = mod_np(mod)
        b = a * 2.0
        return xp.sum(_make_apply(mod)(lambda y: b * xp.sin(y) + a, x))

    a, x = 0.7, _rand(3, seed=10)
    g_mj = grad(functools.partial(loss, mjcore), (0, 1))(a, np.asarray(x))
    g_jax = jax.grad(functools.partial(loss, jax), (0, 1))(a, x)
    _close(g_mj, g_jax)
    _close(
        jit(grad(functools.partial(loss, mjcore), (0, 1)))(a, np.asarray(x)),
        g_jax,
    )


def test_closure_convert_round_trip_and_hoisting():
    a = np.asarray(_rand(3, seed=11))

    def f(y):
        return {"out": np.sin(y) * a}

    x = np.asarray(_rand(3, seed=12))
    converted, consts = mjcore.closure_convert(f, x)
    assert consts == []  # a concrete closed-over value cannot be perturbed: stays closed over
    _close(converted(x), f(x))

    def outer(a):
        converted, consts = mjcore.closure_convert(lambda y: np.sin(y) * a, x)
        assert len(consts) == 1  # `a` is being differentiated: it is hoisted
        return np.sum(converted(x, *consts))

    jax_consts = []

    def jax_outer(a):
        converted, consts = jax.closure_convert(lambda y: jnp.sin(y) * a, onp.asarray(x))
        jax_consts.append(len(consts))
        return jnp.sum(converted(onp.asarray(x), *consts))

    _close(grad(outer)(a), jax.grad(jax_outer)(onp.asarray(a)))
    assert jax_consts == [1]
    with pytest.raises(TypeError, match="same pytree structure"):
        converted((x,))


# --- named_call -----------------------------------------------------------------------------


def test_named_call_names_the_sub_jaxpr_and_transforms():
    def inner(x, y):
        return np.sin(x) * y

    named = mjcore.named_call(inner, name="my_block")
    assert named.__name__ == "inner"
    text = str(make_jaxpr(lambda x: named(x, 2.0) + 1.0)(1.0))
    assert "name=my_block" in text
    x = np.asarray(_rand(4, seed=13))
    _close(named(x, 2.0), inner(x, 2.0))
    _close(jit(named)(x, 2.0), inner(x, 2.0))
    transforms = [
        lambda f: lambda x: grad(lambda z: np.sum(f(z, 2.0)))(x),
        lambda f: lambda x: vmap(f, in_axes=(0, None))(x, 2.0),
        lambda f: lambda x: mjcore.jvp(lambda z: f(z, 2.0), (x,), (np.ones(4),)),
        lambda f: lambda x: mjcore.linearize(lambda z: f(z, 2.0), x)[1](np.ones(4)),
        lambda f: lambda x: jit(lambda z: mjcore.vjp(lambda w: f(w, 2.0), z)[1](z))(x),
        lambda f: lambda x: mjcore.hessian(lambda z: np.sum(f(z, 2.0)))(x),
    ]
    for transform in transforms:
        _close(transform(named)(x), transform(inner)(x))
    assert "name=inner" in str(make_jaxpr(mjcore.named_call(inner))(1.0, 2.0))


def test_named_call_passes_non_array_arguments():
    def apply(f, x):
        return f(x)

    named = mjcore.named_call(apply, name="apply")
    assert float(named(np.cos, 0.0)) == 1.0
    assert float(jit(lambda x: named(np.cos, x))(0.0)) == 1.0


# --- disable_jit ----------------------------------------------------------------------------


@jit
def _branchy(x):
    if x > 0:  # Python branching on a value: only possible with jit disabled
        return x * 2.0
    return -x


def test_disable_jit_runs_python_on_values(capsys):
    with pytest.raises(mjcore.ConcretizationTypeError):
        _branchy(1.0)

    @jit
    def shout(x):
        print("value:", float(x))
        return x + 1

    with mjcore.disable_jit():
        assert float(_branchy(3.0)) == 6.0
        assert float(_branchy(np.asarray(-2.0))) == 2.0
        assert float(shout(1.5)) == 2.5
        # mjnp's own eagerly fused functions also run op by op and stay correct.
        onp.testing.assert_allclose(np.sin(np.arange(3.0)), onp.sin(onp.arange(3.0)))
    assert capsys.readouterr().out == "value: 1.5\n"
    with pytest.raises(mjcore.ConcretizationTypeError):
        _branchy(1.0)  # restored on exit


def test_disable_jit_restored_after_exception_and_nesting():
    with pytest.raises(ZeroDivisionError):
        with mjcore.disable_jit():
            raise ZeroDivisionError("inside the block")
    with pytest.raises(mjcore.ConcretizationTypeError):
        _branchy(1.0)
    with mjcore.disable_jit():
        with mjcore.disable_jit(False):
            with pytest.raises(mjcore.ConcretizationTypeError):
                _branchy(1.0)
        assert float(_branchy(1.0)) == 2.0
    state = mjcore.core._state
    assert state.eager and not state.jit_disabled  # eager fast paths are back on


def test_disable_jit_control_flow_runs_python(capsys):
    def body(i, v):
        print("step", int(i))
        return v + i

    def f(x):
        v = mjcore.fori_loop(0, 3, body, x)
        w = mjcore.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, v)
        c, ys = mjcore.scan(lambda c, a: (c + a, c * a), 0.0, np.arange(3.0), reverse=True)
        z = mjcore.cond(w > 5, lambda a: a + 1.0, lambda a: print("never") or a, w)
        s = mjcore.switch(5, [lambda a: a, lambda a: 3.0 * a], z)
        return s, c, ys

    def jax_f(x):
        v = jax.lax.fori_loop(0, 3, lambda i, v: v + i, x)
        w = jax.lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, v)
        c, ys = jax.lax.scan(lambda c, a: (c + a, c * a), 0.0, jnp.arange(3.0), reverse=True)
        z = jax.lax.cond(w > 5, lambda a: a + 1.0, lambda a: a, w)
        return jax.lax.switch(5, [lambda a: a, lambda a: 3.0 * a], z), c, ys

    with mjcore.disable_jit():
        got = jit(f)(1.0)
    assert capsys.readouterr().out == "step 0\nstep 1\nstep 2\n"
    _close(got, jax_f(1.0))
    with mjcore.disable_jit():
        # A batched predicate cannot run in Python: the loop is staged, as in JAX.
        out = vmap(lambda x: mjcore.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x))(
            np.asarray([1.0, 3.0, 20.0])
        )
        onp.testing.assert_allclose(out, [16.0, 12.0, 20.0])
        g = grad(lambda x: mjcore.scan(lambda c, a: (c * a, c), x, np.arange(1.0, 4.0))[0])(2.0)
        assert float(g) == 6.0
        assert float(mjcore.fori_loop(3, 2, lambda i, v: v + 1.0, 5.0)) == 5.0
        with pytest.raises(ValueError, match="zero-length scan"):
            mjcore.scan(lambda c, a: (c, a), 0.0, np.zeros((0,)))


# --- clear_caches ---------------------------------------------------------------------------


def test_clear_caches_forces_recompile():
    from mjcore import ad, batching, dispatch, partial_eval
    from mjcore.control_flow import common

    # `mjcore.jit` and `mjcore.checkpoint` name the functions; these are their modules.
    jit_module = importlib.import_module("mjcore.jit")
    checkpoint_module = importlib.import_module("mjcore.checkpoint")

    @jit
    def f(x):
        return np.cos(x) * 2

    x = np.ones(3)
    f(x)
    f(x)
    assert (f.trace_count, f.compile_count) == (1, 1)
    grad(lambda z: np.sum(jit(np.sin)(z)))(x)  # fills the transformation caches too
    mjcore.cond(True, lambda a: a, lambda a: -a, x)
    assert dispatch._executables or dispatch._host_plans  # eager ops: XLA or host rules
    mjcore.clear_caches()
    assert f.cache_size() == 0
    for cache in (
        dispatch._executables,
        dispatch._host_plans,
        jit_module._compiled,
        ad._jvp_cache,
        ad._transpose_cache,
        batching._batch_cache,
        partial_eval._pe_cache,
        common._programs,
        checkpoint_module._split_cache,
    ):
        assert len(cache) == 0
    assert not np.sin.__wrapped_fused__._flat_calls
    onp.testing.assert_allclose(f(x), 2 * onp.cos(1.0))
    assert (f.trace_count, f.compile_count) == (2, 2)


# --- ensure_compile_time_eval ---------------------------------------------------------------


def test_ensure_compile_time_eval_matches_jax():
    def make(mod):
        xp = mod_np(mod)

        def f(x):
            with mod.ensure_compile_time_eval():
                n = int(xp.sum(xp.arange(4)))  # concrete while tracing
                table = xp.asarray([1.0, 2.0, 3.0]) * 2
            return x * n + table[2]

        return f

    _close(jit(make(mjcore))(1.5), jax.jit(make(jax))(1.5))
    text = str(make_jaxpr(make(mjcore))(1.5))
    assert "mul" in text and "iota" not in text  # only the traced product is staged

    @jit
    def g(x):
        with mjcore.ensure_compile_time_eval():
            return int(x)  # a traced argument stays abstract

    with pytest.raises(mjcore.ConcretizationTypeError):
        g(1)
    assert mjcore.core._state.dynamic_trace is None and mjcore.core._state.eager
    assert float(make(mjcore)(1.0)) == 12.0  # a no-op outside tracing


# --- devices --------------------------------------------------------------------------------


def test_device_introspection_matches_jax():
    assert mjcore.default_backend() == jax.default_backend() == "cpu"
    assert mjcore.device_count() == mjcore.local_device_count() == len(mjcore.devices()) == 1
    assert mjcore.local_devices() == mjcore.devices()
    assert mjcore.local_devices(process_index=0, backend="cpu") == mjcore.devices()
    assert (mjcore.process_index(), mjcore.process_count()) == (
        jax.process_index(),
        jax.process_count(),
    )
    with pytest.raises(RuntimeError, match="device_count: unknown backend 'gpu'"):
        mjcore.device_count("gpu")
    with pytest.raises(ValueError, match="process_index 1"):
        mjcore.local_devices(process_index=1)


NEW_NAMES = [
    "ShapeDtypeStruct",
    "eval_shape",
    "typeof",
    "jacobian",
    "linear_transpose",
    "closure_convert",
    "custom_gradient",
    "named_call",
    "disable_jit",
    "clear_caches",
    "ensure_compile_time_eval",
    "default_backend",
    "device_count",
    "local_device_count",
    "local_devices",
    "process_index",
    "process_count",
]


@pytest.mark.parametrize("name", NEW_NAMES)
def test_new_names_are_exported_and_documented(name):
    assert name in mjcore.__all__
    assert hasattr(jax, name)
    assert getattr(mjcore, name).__doc__


def test_vjp_and_linear_transpose_results_are_pytrees_passed_to_jit():
    # As JAX's, f_vjp and the transposed function are Partials: their residuals and
    # constants are pytree children, so they can be arguments of a jitted function.
    x = onp.linspace(-1.0, 1.0, 5)
    w = onp.arange(5.0)

    def f(a):
        return np.sin(a) * w

    _, f_vjp = mjcore.vjp(f, np.asarray(x))
    _, jax_vjp = jax.vjp(lambda a: jnp.sin(a) * w, x)
    apply = jit(lambda fn, ct: fn(ct))
    ct = onp.cos(x)
    (got,) = apply(f_vjp, np.asarray(ct))
    (expected,) = jax.jit(lambda fn, c: fn(c))(jax_vjp, ct)
    onp.testing.assert_allclose(onp.asarray(got), onp.asarray(expected), rtol=1e-12)
    assert len(tree_leaves(f_vjp)) >= 1  # the residuals are children, not closed over

    m = onp.arange(6.0).reshape(2, 3)
    f_t = mjcore.linear_transpose(lambda v: np.asarray(m) @ v, np.zeros(3))
    jax_t = jax.linear_transpose(lambda v: jnp.asarray(m) @ v, onp.zeros(3))
    ct2 = onp.array([1.0, -2.0])
    (got2,) = apply(f_t, np.asarray(ct2))
    (expected2,) = jax_t(ct2)
    onp.testing.assert_allclose(onp.asarray(got2), onp.asarray(expected2), rtol=1e-12)
