"""bfloat16 (ml_dtypes' type, `mjnp.bfloat16`) against JAX x64, the oracle for everything that
involves it: NumPy has no bfloat16 of its own, so promotion, `finfo`, `issubdtype` and the
values of operations are JAX's. Eager and jit must give the same bits over the primitive table.
"""

from __future__ import annotations

import itertools
import zlib

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mjcore
import mjnp
from mjcore import dtypes, lax
from mjcore import random as mjrandom
from tests.test_primitives import PRIMITIVE_CASES

jax.config.update("jax_enable_x64", True)

BF16 = np.dtype(ml_dtypes.bfloat16)
NUMPY_DTYPES = [np.dtype(d) for d in dtypes.SUPPORTED_DTYPES]
ALL = [*NUMPY_DTYPES, BF16]


def _bf16(values) -> np.ndarray:
    return np.asarray(values, np.float64).astype(BF16)


def _rng(salt: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(salt.encode()))


def _assert_same(actual, expected) -> None:
    """Same dtype, shape and bits (NaNs equal)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.dtype == BF16:
        actual, expected = actual.view(np.uint16), expected.view(np.uint16)
        nan = np.isnan(np.asarray(actual).view(BF16).astype(np.float32))
        assert (nan == np.isnan(expected.view(BF16).astype(np.float32))).all()
        np.testing.assert_array_equal(actual[~nan], expected[~nan])
    else:
        np.testing.assert_array_equal(actual, expected)


# --- the dtype and its queries ----------------------------------------------------------------


def test_the_name_is_ml_dtypes_type_as_in_jax():
    assert mjnp.bfloat16 is ml_dtypes.bfloat16
    assert np.dtype(mjnp.bfloat16) == np.dtype(jnp.bfloat16) == BF16
    for spec in (mjnp.bfloat16, BF16, "bfloat16"):
        assert dtypes.canonicalize_dtype(spec) is BF16
    assert dtypes.short_name(BF16) == "bf16" and dtypes.hlo_name(BF16) == "bf16"
    assert dtypes.kind(BF16) == "f" and dtypes.is_floating(BF16) and not dtypes.is_integer(BF16)


def test_finfo_iinfo_issubdtype_isdtype_as_jax():
    mine, want = mjnp.finfo(mjnp.bfloat16), jnp.finfo(jnp.bfloat16)
    for attr in ("bits", "eps", "epsneg", "max", "min", "tiny", "smallest_subnormal", "nmant"):
        assert getattr(mine, attr) == getattr(want, attr), attr
    assert mine.dtype == BF16
    assert mjnp.finfo(np.float32).eps == np.finfo(np.float32).eps
    with pytest.raises(ValueError):
        jnp.iinfo(jnp.bfloat16)
    with pytest.raises(ValueError):
        mjnp.iinfo(mjnp.bfloat16)
    supers = [
        mjnp.floating, mjnp.inexact, mjnp.number, mjnp.generic, mjnp.integer,
        mjnp.complexfloating, mjnp.float16, mjnp.float32, mjnp.bfloat16,
    ]  # fmt: skip
    for spec, sup in itertools.product((mjnp.bfloat16, BF16, "bfloat16"), supers):
        assert mjnp.issubdtype(spec, sup) == jnp.issubdtype(spec, sup), (spec, sup)
    for sub in (np.float32, np.float16, np.int8):
        assert mjnp.issubdtype(sub, mjnp.bfloat16) == jnp.issubdtype(sub, jnp.bfloat16)
        assert mjnp.issubdtype(sub, mjnp.floating) == np.issubdtype(sub, np.floating)
    kinds = [
        "bool", "signed integer", "unsigned integer", "integral", "real floating",
        "complex floating", "numeric", ("integral", "real floating"), BF16, np.float32,
    ]  # fmt: skip
    for kind in kinds:
        assert mjnp.isdtype(BF16, kind) == jnp.isdtype(BF16, kind), kind
        assert mjnp.isdtype(np.dtype(np.float32), kind) == jnp.isdtype(np.float32, kind), kind
    with pytest.raises(ValueError, match="isdtype"):
        mjnp.isdtype(BF16, "floating point")


def test_array_api_info_keeps_the_standards_dtypes():
    info = mjnp.__array_namespace_info__()
    assert BF16 not in info.dtypes().values()
    assert BF16 not in info.dtypes(kind="real floating").values()


def test_unsupported_dtype_message_names_bfloat16():
    with pytest.raises(TypeError, match="bfloat16"):
        dtypes.canonicalize_dtype(np.dtype("U3"))


# --- promotion: JAX's lattice for every pair that involves bfloat16 --------------------------


@pytest.mark.parametrize("other", ALL, ids=lambda d: d.name)
def test_promote_types_as_jax(other):
    want = jnp.promote_types(jnp.bfloat16, other)
    assert mjnp.promote_types(mjnp.bfloat16, other) == want
    assert mjnp.promote_types(other, mjnp.bfloat16) == want
    assert mjnp.result_type(BF16, other) == want
    # arrays of both dtypes, through an operation
    x, y = mjnp.ones(2, BF16), mjnp.ones(2, other)
    assert (x + y).dtype == (jnp.ones(2, jnp.bfloat16) + jnp.ones(2, other)).dtype == want


@pytest.mark.parametrize("scalar", [True, 1, 1.0, 1j], ids=lambda s: type(s).__name__)
def test_weak_python_scalars_as_jax(scalar):
    x, jx = mjnp.ones(3, BF16), jnp.ones(3, jnp.bfloat16)
    assert mjnp.result_type(x, scalar) == jnp.result_type(jx, scalar)
    assert (x * scalar).dtype == (jx * scalar).dtype
    assert (scalar * x).dtype == (scalar * jx).dtype
    # a weak (traced Python scalar) operand keeps bfloat16 too
    got = mjcore.jit(lambda s: mjnp.add(x, s))(scalar).dtype
    assert got == jax.jit(lambda s: jnp.add(jx, s))(scalar).dtype


def test_triples_with_bfloat16_as_jax():
    for a, b in itertools.product(NUMPY_DTYPES, repeat=2):
        want = jnp.result_type(jnp.bfloat16, a, b)
        assert mjnp.result_type(a, BF16, b) == want, (a, b)


def test_can_cast_as_jax():
    for other in ALL:
        for casting in ("safe", "same_kind"):
            want = jnp.can_cast(jnp.bfloat16, other, casting)
            assert mjnp.can_cast(mjnp.bfloat16, other, casting) == want, (other, casting)
            want = jnp.can_cast(other, jnp.bfloat16, casting)
            assert mjnp.can_cast(other, mjnp.bfloat16, casting) == want, (other, casting)


def test_bfloat16_scalars_and_integer_only_functions():
    s = mjnp.bfloat16(1.5)
    _assert_same(mjnp.sin(s), jnp.sin(jnp.bfloat16(1.5)))
    _assert_same(mjnp.asarray(s) + s, jnp.asarray(s) + s)
    x = mjnp.ones(3, BF16)
    for f in (mjnp.bitwise_and, mjnp.gcd, mjnp.left_shift):
        with pytest.raises(TypeError, match=f"mjnp.{f.__name__}: .*bfloat16"):
            f(x, x)
    with pytest.raises(TypeError, match="linalg.inv: .*bfloat16"):
        mjnp.linalg.inv(mjnp.eye(2, dtype=BF16))  # JAX: NotImplementedError, no bf16 kernels
    assert mjnp.fft.fft(x).dtype == jnp.fft.fft(jnp.ones(3, jnp.bfloat16)).dtype == np.complex64


def test_numpy_pairs_stay_numpys():
    # bfloat16 changes nothing among NumPy's own dtypes (NumPy, not JAX: int64 + float16).
    assert mjnp.promote_types(np.int64, np.float16) == np.float64


# --- buffers in and out, printing --------------------------------------------------------------


def test_round_trip_printing_and_python_values():
    host = _bf16([1.5, -2.0, 3.140625, np.inf, np.nan, 1e10, -3.3e-3, 0.0])
    x, jx = mjnp.asarray(host), jnp.asarray(host)
    assert x.dtype == BF16
    out = np.asarray(x)
    assert out.dtype == BF16
    _assert_same(out, host)
    _assert_same(np.asarray(mjcore.jit(lambda a: a)(x)), host)  # an XLA-made buffer
    assert str(x) == str(jx)
    assert repr(x).replace("array(", "Array(").split() == repr(jx).split()
    assert x.tolist()[:4] == jx.tolist()[:4]
    assert float(x[2]) == float(jx[2]) == 3.140625
    assert type(x[2].item()) is float
    assert x.itemsize == 2 and x.nbytes == 16
    assert mjnp.asarray([], BF16).shape == (0,)
    assert np.asarray(mjcore.jit(lambda a: a)(mjnp.zeros((0, 3), BF16))).shape == (0, 3)


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.zeros((2, 3), L.bfloat16),
        lambda L: L.ones(4, dtype=L.bfloat16),
        lambda L: L.full(3, 0.1, L.bfloat16),
        lambda L: L.linspace(0, 1, 9, dtype=L.bfloat16),
        lambda L: L.eye(3, dtype=L.bfloat16),
        lambda L: L.asarray([0.1, 1.7, 300.3], dtype=L.bfloat16),
        lambda L: L.asarray([0.1, 1.7, 300.3]).astype(L.bfloat16),
        lambda L: L.asarray([1, 2, 255], L.uint8).astype(L.bfloat16),
        lambda L: L.asarray([0.1, -1.7, 3e5], L.bfloat16).astype(L.int32),
        lambda L: L.asarray([0.1, -1.7], L.bfloat16).astype(L.complex64),
        lambda L: L.asarray([0.1, -1.7], L.bfloat16).astype(L.float16),
        lambda L: L.zeros_like(L.ones(3, L.bfloat16)),
    ],
)
def test_creation_and_casts_as_jax(make):
    _assert_same(make(mjnp), make(jnp))


# --- values: mjnp functions against jax.numpy -------------------------------------------------

_X = _rng("x").uniform(-2, 2, 64)
_Y = _rng("y").uniform(-2, 2, 64)
_M = _rng("m").uniform(-2, 2, (8, 8))

FUNCTIONS = {
    "add": lambda L, x, y: x + y,
    "sub": lambda L, x, y: x - y,
    "mul": lambda L, x, y: x * y,
    "div": lambda L, x, y: x / y,
    "floor_divide": lambda L, x, y: x // y,
    "mod": lambda L, x, y: x % y,
    "pow": lambda L, x, y: L.abs(x) ** y,
    "maximum": lambda L, x, y: L.maximum(x, y),
    "arctan2": lambda L, x, y: L.arctan2(x, y),
    "hypot": lambda L, x, y: L.hypot(x, y),
    "hypot_edges": lambda L, x, y: L.hypot(
        L.asarray([0.0, 0.0, L.inf, 3.0, -L.inf, L.nan, 1e38], L.bfloat16),
        L.asarray([0.0, -2.0, L.nan, 4.0, 1.0, 1.0, 1e38], L.bfloat16),
    ),
    "divmod_edges": lambda L, x, y: L.divmod(
        L.asarray([5.0, -5.0, 5.0, 0.0, 1.0, L.inf, 7.5], L.bfloat16),
        L.asarray([0.0, 3.0, -3.0, -2.0, L.inf, 2.0, 0.5], L.bfloat16),
    ),
    "sin": lambda L, x, y: L.sin(x),
    "cos": lambda L, x, y: L.cos(x),
    "tanh": lambda L, x, y: L.tanh(x),
    "exp": lambda L, x, y: L.exp(x),
    "log": lambda L, x, y: L.log(L.abs(x)),
    "log1p": lambda L, x, y: L.log1p(L.abs(x)),
    "sqrt": lambda L, x, y: L.sqrt(L.abs(x)),
    "square": lambda L, x, y: L.square(x),
    "reciprocal": lambda L, x, y: L.reciprocal(x),
    "round": lambda L, x, y: L.round(x, 1),
    "floor": lambda L, x, y: L.floor(x * 3),
    "clip": lambda L, x, y: L.clip(x, -1, 1),
    "where": lambda L, x, y: L.where(x > y, x, 0),
    "isfinite": lambda L, x, y: L.isfinite(x / 0),
    "sign": lambda L, x, y: L.sign(x),
    "sort": lambda L, x, y: L.sort(x),
    "argmax": lambda L, x, y: L.argmax(x),
    "cumsum": lambda L, x, y: L.cumsum(x),
    "sum": lambda L, x, y: L.sum(x),
    "sum_ones": lambda L, x, y: L.sum(L.ones(1000, L.bfloat16)),
    "mean": lambda L, x, y: L.mean(x),
    "var": lambda L, x, y: L.var(x),
    "std": lambda L, x, y: L.std(x),
    "nanmean": lambda L, x, y: L.nanmean(x),
    "max": lambda L, x, y: L.max(x),
    "prod": lambda L, x, y: L.prod(x[:8]),
    "dot": lambda L, x, y: L.dot(x, y),
    "matmul": lambda L, x, y: L.reshape(x, (8, 8)) @ L.reshape(y, (8, 8)),
    "einsum": lambda L, x, y: L.einsum("ij,jk->ik", L.reshape(x, (8, 8)), L.reshape(y, (8, 8))),
    "int_plus_bf16": lambda L, x, y: x + L.arange(64, dtype=L.int32),
    "f16_plus_bf16": lambda L, x, y: x + L.ones(64, L.float16),
    "weak_float": lambda L, x, y: x * 1.1 + 2,
    "weak_complex": lambda L, x, y: x * 1j,
    "concatenate": lambda L, x, y: L.concatenate([x, y])[::3],
    "getitem": lambda L, x, y: x[L.asarray([3, 1, 60])],
    "softmax_like": lambda L, x, y: L.exp(x) / L.exp(x).sum(),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_values_as_jax_eager_and_jit(name):
    f = FUNCTIONS[name]
    x, y = _bf16(_X), _bf16(_Y)
    want = f(jnp, jnp.asarray(x), jnp.asarray(y))
    with np.errstate(divide="ignore", invalid="ignore"):
        eager = f(mjnp, mjnp.asarray(x), mjnp.asarray(y))
        jitted = mjcore.jit(lambda a, b: f(mjnp, a, b))(mjnp.asarray(x), mjnp.asarray(y))
    _assert_same(eager, want)
    _assert_same(jitted, want)


def test_sum_accumulates_in_float32_as_jax():
    # 1000 ones: a bfloat16 accumulator would stop at 256
    assert float(mjnp.sum(mjnp.ones(1000, BF16))) == 1000.0
    assert mjnp.sum(mjnp.ones(4, BF16)).dtype == BF16


LAX_FUNCTIONS = [
    "tan", "cbrt", "erfc", "erf_inv", "lgamma", "digamma", "atan2", "pow", "igamma", "igammac",
]  # fmt: skip


@pytest.mark.parametrize("name", LAX_FUNCTIONS)
def test_lax_as_jax(name):
    x, y = _bf16(np.abs(_X) / 2.5 + 0.05), _bf16(np.abs(_Y) + 0.05)
    args = (x, y) if name in ("atan2", "pow", "igamma", "igammac") else (x,)
    mine = mjcore.jit(getattr(lax, name))(*[mjnp.asarray(a) for a in args])
    _assert_same(mine, jax.jit(getattr(jax.lax, name))(*args))


def test_reduce_window_as_jax():
    # (the primitive table's own windowed rows build their identities with NumPy's iinfo,
    # which has no bfloat16: they are refused above, so checked here)
    x = _bf16(_M[:6, :7])
    for init, mine_op, jax_op, padding in (
        (-np.inf, lax.max, jax.lax.max, "VALID"),
        (np.inf, lax.min, jax.lax.min, "VALID"),
        (0.0, lax.add, jax.lax.add, "SAME"),
    ):
        init = np.asarray(init, BF16)
        mine = lax.reduce_window(mjnp.asarray(x), init, mine_op, (2, 3), (1, 2), padding)
        _assert_same(mine, jax.lax.reduce_window(x, init, jax_op, (2, 3), (1, 2), padding))


@pytest.mark.parametrize("name", ["exp2", "logistic"])
def test_lax_within_two_ulps_of_jax(name):
    # mjcore lowers exp2 as one power(2, x) and logistic as one stablehlo.logistic; JAX
    # composes them of bfloat16 steps (exp(x * ln 2), 1 / (1 + exp(-x))), each rounded, so its
    # results are up to 2 bfloat16 ulps away from mjcore's here (exp2; logistic: 1).
    x = _bf16(_X)
    mine = np.asarray(mjcore.jit(getattr(lax, name))(mjnp.asarray(x)))
    want = np.asarray(jax.jit(getattr(jax.lax, name))(x))
    assert mine.dtype == want.dtype == BF16
    # positive results: the bit patterns order as the values do
    ulps = np.abs(mine.view(np.uint16).astype(int) - want.view(np.uint16).astype(int))
    assert (want.astype(np.float32) > 0).all() and ulps.max() <= 2, ulps.max()


# --- eager against jit over the primitive table -------------------------------------------------


def _bf16_cases():
    for case in PRIMITIVE_CASES:
        if "float32" in case.dtypes and not case.arg_dtypes:
            yield pytest.param(case, id=f"{case.name}-{case.shapes}")


def _bf16_args(case):
    rng = np.random.default_rng(zlib.crc32(f"{case.name}/bf16".encode()))
    return [a.astype(BF16) for a in case.make_args(rng, "float32")]


@pytest.mark.parametrize("case", list(_bf16_cases()))
def test_eager_matches_jit_bit_for_bit(case):
    args = [mjnp.asarray(a) for a in _bf16_args(case)]
    try:
        eager = case.fun(*args)
    except (TypeError, ValueError, NotImplementedError) as err:  # refused for bfloat16
        with pytest.raises(type(err)):
            mjcore.jit(case.fun)(*args)
        return
    jitted = mjcore.jit(case.fun)(*args)
    eager_leaves = mjcore.tree_util.tree_leaves(eager)
    for e, j in zip(eager_leaves, mjcore.tree_util.tree_leaves(jitted), strict=True):
        _assert_same(e, j)


def test_host_rules_run_for_exact_primitives_only():
    from mjcore import dispatch

    x = mjnp.asarray(_bf16(_X[:8]))
    add_p = mjcore.make_jaxpr(lax.add)(x, x).jaxpr.eqns[0].primitive
    sin_p = mjcore.make_jaxpr(lax.sin)(x).jaxpr.eqns[0].primitive
    assert dispatch.host_rule_exact(add_p, [x.aval])
    assert not dispatch.host_rule_exact(sin_p, [x.aval])
    assert dispatch.host_rule_exact(sin_p, [mjnp.ones(2, np.float32).aval])


# --- transformations --------------------------------------------------------------------------


def _mlp_loss(L, params, x, y):
    (w1, b1), (w2, b2) = params
    h = L.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return L.mean(((out - y) ** 2).astype(L.float32))


def _mlp_data():
    rng = _rng("mlp")
    sizes = [(4, 8), (8,), (8, 2), (2,)]
    params = [_bf16(rng.normal(0, 0.5, s)) for s in sizes]
    x, y = _bf16(rng.normal(size=(5, 4))), _bf16(rng.normal(size=(5, 2)))
    return [(params[0], params[1]), (params[2], params[3])], x, y


def test_mlp_grad_step_as_jax():
    params, x, y = _mlp_data()

    def step(L, grad, params, x, y):
        g = grad(lambda p: _mlp_loss(L, p, x, y))(params)
        return [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, g, strict=True)], g

    mj_p = [(mjnp.asarray(w), mjnp.asarray(b)) for w, b in params]
    jx_p = [(jnp.asarray(w), jnp.asarray(b)) for w, b in params]
    mine = mjcore.jit(lambda p, x, y: step(mjnp, mjcore.grad, p, x, y))(mj_p, x, y)
    want = jax.jit(lambda p, x, y: step(jnp, jax.grad, p, x, y))(jx_p, x, y)
    eager = step(mjnp, mjcore.grad, mj_p, mjnp.asarray(x), mjnp.asarray(y))
    leaves = zip(
        mjcore.tree_util.tree_leaves(mine),
        jax.tree_util.tree_leaves(want),
        mjcore.tree_util.tree_leaves(eager),
        strict=True,
    )
    for m, w, e in leaves:
        assert m.dtype == w.dtype == e.dtype == BF16
        # one bfloat16 ulp (2**-8 relative) of slack: the two programs may fuse differently
        np.testing.assert_allclose(
            np.asarray(m, np.float32), np.asarray(w, np.float32), rtol=2**-7, atol=2**-10
        )
        np.testing.assert_allclose(
            np.asarray(e, np.float32), np.asarray(m, np.float32), rtol=2**-7, atol=2**-10
        )


@pytest.mark.parametrize(
    "f",
    [
        lambda L, v: L.sum(L.sin(v)),
        lambda L, v: L.sum(L.tanh(v) * v),
        lambda L, v: L.sum(L.abs(v) ** 1.7),
        lambda L, v: L.sum(v**3),
        lambda L, v: L.sum(L.maximum(v, 0.3)),
        lambda L, v: L.mean(L.exp(v) / (1 + v * v)),
    ],
)
def test_eager_grad_matches_jit_grad_and_jax(f):
    x = _bf16(_X)
    eager = mjcore.grad(lambda v: f(mjnp, v))(mjnp.asarray(x))
    _assert_same(eager, mjcore.jit(mjcore.grad(lambda v: f(mjnp, v)))(mjnp.asarray(x)))
    want = np.asarray(jax.grad(lambda v: f(jnp, v))(jnp.asarray(x)), np.float32)
    # 2 bfloat16 ulps: some derivative formulas differ from JAX's (tanh's: mjcore's
    # (1 + t) * (1 - t), JAX's g * (1 - t) + g * (1 - t) * t), each rounded in bfloat16
    np.testing.assert_allclose(np.asarray(eager, np.float32), want, rtol=2**-6, atol=2**-12)


def test_jvp_and_vmap_as_jax():
    x, t = _bf16(_X[:16]), _bf16(_Y[:16])

    def f(L, v):
        return L.sin(v) * v + 1.5

    p_mine, t_mine = mjcore.jvp(lambda v: f(mjnp, v), (mjnp.asarray(x),), (mjnp.asarray(t),))
    p_want, t_want = jax.jvp(lambda v: f(jnp, v), (jnp.asarray(x),), (jnp.asarray(t),))
    _assert_same(p_mine, p_want)
    _assert_same(t_mine, t_want)
    m = _bf16(_M)
    got = mjcore.vmap(lambda r: mjnp.sum(f(mjnp, r)))(mjnp.asarray(m))
    _assert_same(got, jax.vmap(lambda r: jnp.sum(f(jnp, r)))(jnp.asarray(m)))
    g = mjcore.grad(lambda v: mjnp.sum(f(mjnp, v)))(mjnp.asarray(x))
    _assert_same(g, jax.grad(lambda v: jnp.sum(f(jnp, v)))(jnp.asarray(x)))


def test_convert_element_type_and_dot_general_preferred_as_jax():
    x = _bf16(_X[:16])
    for dt in (np.float32, np.float16, np.int8, np.bool_, np.float64):
        _assert_same(
            lax.convert_element_type(mjnp.asarray(x), dt),
            jax.lax.convert_element_type(jnp.asarray(x), dt),
        )
    a, b = _bf16(_M), _bf16(_M.T * 3)
    dims = (((1,), (0,)), ((), ()))
    mine = lax.dot_general(
        mjnp.asarray(a), mjnp.asarray(b), dims, preferred_element_type=np.float32
    )
    want = jax.lax.dot_general(a, b, dims, preferred_element_type=jnp.float32)
    assert mine.dtype == want.dtype == np.float32
    np.testing.assert_allclose(np.asarray(mine), np.asarray(want), rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(mine), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5
    )


@pytest.mark.parametrize("shape", [(5,), (3, 7)])
def test_random_uniform_and_normal_as_jax(shape):
    # mjcore.random gives JAX's bits (threefry, partitionable) for float32: so for bfloat16
    for seed in (0, 7):
        mk, jk = mjrandom.PRNGKey(seed), jax.random.PRNGKey(seed)
        _assert_same(
            mjrandom.uniform(mk, shape, mjnp.bfloat16),
            jax.random.uniform(jk, shape, jnp.bfloat16),
        )
        _assert_same(
            mjrandom.uniform(mk, shape, mjnp.bfloat16, -3.0, 2.0),
            jax.random.uniform(jk, shape, jnp.bfloat16, -3.0, 2.0),
        )
        _assert_same(
            mjrandom.normal(mk, shape, mjnp.bfloat16),
            jax.random.normal(jk, shape, jnp.bfloat16),
        )
    u = np.asarray(mjrandom.uniform(mjrandom.PRNGKey(1), (2000,), mjnp.bfloat16), np.float32)
    assert u.min() >= 0 and u.max() < 1
