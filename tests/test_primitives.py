"""The primitive table: every lax primitive checked eagerly against NumPy, abstractly, under jvp
(central finite differences, float64), under vmap (a Python loop over the batch) and nested."""

from __future__ import annotations

import importlib
import pkgutil
import zlib
from typing import Any

import numpy as np
import pytest

import mjcore
from mjcore import lax
from mjcore.batching import AxisPrimitive
from mjcore.core import Primitive
from mjcore.test_util import check_grads, check_vjp
from tests.cases import arithmetic
from tests.primitive_case import PrimCase, tolerance

FAMILY_MODULES = [
    "arithmetic",
    "math",
    "structural",
    "reductions",
    "indexing",
    "sorting",
    "linalg",
    "fft",
    "bitcast",
    "convolution",
    "windowed",
]


def _load_cases() -> list[PrimCase]:
    cases = list(arithmetic.CASES)
    for name in FAMILY_MODULES[1:]:
        # No try/except: a case module that fails to import must fail the run loudly, not
        # silently drop its primitives from every check.
        cases.extend(importlib.import_module(f"tests.cases.{name}").CASES)
    return cases


PRIMITIVE_CASES = _load_cases()
# On a GPU (the suite run there by hand: scripts/gpu_check.sh runs tests/test_gpu.py), XLA has
# no integer convolution (tests/test_gpu.py checks the error mjcore raises instead), and
# 32-bit float products run at TF32 precision, as JAX's.
_ON_GPU = mjcore.default_backend() == "gpu"
_NO_GPU_KERNEL = pytest.mark.skip(reason="XLA's GPU backend has no integer convolution")


def _gpu_marks(case: PrimCase, dtype: str) -> list[Any]:
    integer = np.dtype(dtype).kind in "iub"
    return [_NO_GPU_KERNEL] if _ON_GPU and case.name.startswith("conv") and integer else []


def _rtol(case: PrimCase, dtype: str) -> float | None:
    products = case.name.startswith(("dot_general", "conv"))
    if _ON_GPU and products and dtype in ("float32", "complex64"):
        return max(case.rtol or 0.0, 1e-3)
    return case.rtol


EAGER_PARAMS = [
    pytest.param(
        case, dtype, id=f"{case.name}-{dtype}-{case.shapes}", marks=_gpu_marks(case, dtype)
    )
    for case in PRIMITIVE_CASES
    for dtype in case.dtypes
]
DIFF_PARAMS = [
    pytest.param(case, id=case.name)
    for case in PRIMITIVE_CASES
    if "float64" in case.dtypes and case.differentiable_argnums
]


def _rng(case: PrimCase, salt: str = "") -> np.random.Generator:
    # A stable seed (str hashes change per process), so failures reproduce.
    return np.random.default_rng(zlib.crc32(f"{case.name}/{salt}".encode()))


def _assert_close(actual, expected, dtype, rtol=None):
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if np.dtype(expected.dtype).kind in "fc":
        np.testing.assert_allclose(actual, expected, **tolerance(expected.dtype, rtol))
    else:
        np.testing.assert_array_equal(actual, expected)


# --- eager vs NumPy, abstract eval vs eager -------------------------------------------------


@pytest.mark.parametrize("case,dtype", EAGER_PARAMS)
def test_eager_matches_numpy(case: PrimCase, dtype: str):
    args = case.make_args(_rng(case, dtype), dtype)
    out = case.fun(*[mjcore.device_put(a) for a in args])
    expected = np.asarray(case.numpy_fun(*args))
    assert isinstance(out, mjcore.Array)
    assert out.dtype == expected.dtype, (out.dtype, expected.dtype)
    _assert_close(out, expected, expected.dtype, _rtol(case, dtype))


@pytest.mark.parametrize("case,dtype", EAGER_PARAMS)
def test_abstract_eval_matches_eager(case: PrimCase, dtype: str):
    args = case.make_args(_rng(case, dtype), dtype)
    closed = mjcore.make_jaxpr(case.fun)(*args)
    mjcore.typecheck_jaxpr(closed.jaxpr)
    out = case.fun(*args)
    (aval,) = closed.out_avals
    assert aval.shape == out.shape and aval.dtype == out.dtype
    (result,) = mjcore.eval_closed_jaxpr(closed, *args)
    _assert_close(result, out, out.dtype)


@pytest.mark.parametrize("case,dtype", EAGER_PARAMS)
def test_jit_matches_eager(case: PrimCase, dtype: str):
    args = case.make_args(_rng(case, dtype), dtype)
    eager = case.fun(*args)
    jitted = mjcore.jit(case.fun)(*args)
    assert isinstance(jitted, mjcore.Array)
    assert jitted.dtype == eager.dtype and jitted.shape == eager.shape
    assert jitted.weak_type == eager.weak_type
    _assert_close(jitted, eager, eager.dtype)


# --- jvp vs finite differences --------------------------------------------------------------


def _partial(case: PrimCase, args, argnums):
    """`case.fun` as a function of only the differentiable arguments."""

    def f(*diff_args):
        full = list(args)
        for i, a in zip(argnums, diff_args, strict=True):
            full[i] = a
        return case.fun(*full)

    return f


def _numerical_jvp(f, primals, tangents, eps=1e-6):
    plus = [p + eps * t for p, t in zip(primals, tangents, strict=True)]
    minus = [p - eps * t for p, t in zip(primals, tangents, strict=True)]
    return (np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * eps)


@pytest.mark.parametrize("case", DIFF_PARAMS)
def test_jvp_matches_finite_differences(case: PrimCase):
    rng = _rng(case, "jvp")
    args = case.make_args(rng, "float64")
    argnums = case.differentiable_argnums
    f = _partial(case, args, argnums)
    primals = [args[i] for i in argnums]
    tangents = [rng.standard_normal(np.shape(p)) for p in primals]
    out, out_dot = mjcore.jvp(f, primals, tangents)
    _assert_close(out, case.numpy_fun(*args), np.float64)
    if out.dtype.kind not in "fc":
        # No tangent space: the tangent is zero (JAX would say float0).
        assert not np.asarray(out_dot).any()
        return
    expected = _numerical_jvp(lambda *xs: np.asarray(f(*xs)), primals, tangents)
    np.testing.assert_allclose(np.asarray(out_dot), expected, rtol=1e-5, atol=1e-6)


def _float_output(case: PrimCase) -> bool:
    args = case.make_args(np.random.default_rng(0), "float64")
    return np.asarray(case.numpy_fun(*args)).dtype.kind in "fc"


SMOOTH_PARAMS = [p for p in DIFF_PARAMS if p.values[0].smooth and _float_output(p.values[0])]


@pytest.mark.parametrize("case", SMOOTH_PARAMS)
def test_second_order_jvp(case: PrimCase):
    rng = _rng(case, "jvp2")
    args = case.make_args(rng, "float64")
    argnums = case.differentiable_argnums
    f = _partial(case, args, argnums)
    primals = [args[i] for i in argnums]
    tangents = [rng.standard_normal(np.shape(p)) for p in primals]

    def df(*xs):
        return mjcore.jvp(f, list(xs), tangents)[1]

    _, ddf = mjcore.jvp(df, primals, tangents)
    expected = _numerical_jvp(lambda *xs: np.asarray(df(*xs)), primals, tangents, eps=1e-5)
    np.testing.assert_allclose(np.asarray(ddf), expected, rtol=1e-4, atol=1e-5)


FLOAT_OUT_PARAMS = [p for p in DIFF_PARAMS if _float_output(p.values[0])]


@pytest.mark.parametrize("case", FLOAT_OUT_PARAMS)
def test_vjp_matches_jvp(case: PrimCase):
    """<ct, J t> == <J^T ct, t>: checks every transpose rule on the way."""
    rng = _rng(case, "vjp")
    args = case.make_args(rng, "float64")
    argnums = case.differentiable_argnums
    f = _partial(case, args, argnums)
    primals = [args[i] for i in argnums]
    check_vjp(f, primals, 1e-9, rng)


@pytest.mark.parametrize("case", SMOOTH_PARAMS)
def test_check_grads_second_order(case: PrimCase):
    rng = _rng(case, "grads")
    args = case.make_args(rng, "float64")
    argnums = case.differentiable_argnums
    f = _partial(case, args, argnums)
    check_grads(f, [args[i] for i in argnums], order=2, modes=("fwd", "rev"))


# --- vmap vs a Python loop ------------------------------------------------------------------

IN_AXES_CHOICES = [0, 1, -1, None]


def _batched_args(case: PrimCase, rng, dtype, axes, size):
    """Stack `size` independent samples along each argument's batch axis."""
    base = case.make_args(rng, dtype)
    batched, per_example = [], []
    for a, ax in zip(base, axes, strict=True):
        if ax is None:
            batched.append(a)
            per_example.append([a] * size)
        else:
            samples = [case.make_args(rng, dtype)[len(batched)] for _ in range(size)]
            stacked = (
                np.stack(samples, axis=ax % (a.ndim + 1))
                if size
                else np.zeros(np.insert(np.array(a.shape, int), ax % (a.ndim + 1), 0), a.dtype)
            )
            batched.append(stacked)
            per_example.append(samples)
    return batched, per_example


def _vmap_params():
    params = []
    for case in PRIMITIVE_CASES:
        n = len(case.shapes)
        batchable = case.batch_argnums if case.batch_argnums is not None else tuple(range(n))
        for choice in IN_AXES_CHOICES:
            axes = tuple(
                (choice if choice is None or case.shapes[i] or choice in (0, -1) else 0)
                if i in batchable
                else None
                for i in range(n)
            )
            if all(a is None for a in axes):
                continue
            params.append(pytest.param(case, axes, id=f"{case.name}-axes{axes}"))
        if n > 1:
            # only the first argument batched
            axes = tuple(0 if i == 0 else None for i in range(n))
            params.append(pytest.param(case, axes, id=f"{case.name}-axes{axes}"))
    return params


@pytest.mark.parametrize("case,axes", _vmap_params())
def test_vmap_matches_loop(case: PrimCase, axes):
    dtype = case.dtypes[-1]
    rng = _rng(case, f"vmap{axes}")
    size = 3
    batched, per_example = _batched_args(case, rng, dtype, axes, size)
    out = mjcore.vmap(case.fun, in_axes=axes)(*batched)
    expected = np.stack(
        [np.asarray(case.numpy_fun(*[p[i] for p in per_example])) for i in range(size)]
    )
    assert out.dtype == expected.dtype
    _assert_close(out, expected, expected.dtype, case.rtol)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in PRIMITIVE_CASES])
def test_vmap_empty_batch(case: PrimCase):
    dtype = case.dtypes[-1]
    axes = tuple(0 for _ in case.shapes)
    batched, _ = _batched_args(case, _rng(case, "empty"), dtype, axes, 0)
    out = mjcore.vmap(case.fun, in_axes=axes)(*batched)
    single = case.fun(*case.make_args(_rng(case), dtype))
    assert out.shape == (0, *single.shape)
    assert out.dtype == single.dtype


# --- nested transformations -----------------------------------------------------------------


@pytest.mark.parametrize("case", DIFF_PARAMS)
def test_jvp_of_vmap_and_vmap_of_jvp(case: PrimCase):
    rng = _rng(case, "nested")
    argnums = case.differentiable_argnums
    # The batch size and dtype of test_vmap_matches_loop's all-axes-0 row: the primal binds
    # here are its programs, found in the compile cache (an igamma-family compile is seconds).
    size = 3
    axes = tuple(0 for _ in case.shapes)
    batched, per_example = _batched_args(case, rng, "float64", axes, size)
    tangents = [rng.standard_normal(np.shape(batched[i])) for i in argnums]
    f = _partial(case, batched, argnums)

    def f_b(*xs):
        full = list(batched)
        for i, x in zip(argnums, xs, strict=True):
            full[i] = x
        return mjcore.vmap(case.fun)(*full)

    _, t1 = mjcore.jvp(f_b, [batched[i] for i in argnums], tangents)

    def per(*xs_and_ts):
        k = len(argnums)
        xs, ts = xs_and_ts[:k], xs_and_ts[k:]
        others = list(xs_and_ts[2 * k :])
        full = []
        it = iter(xs)
        oit = iter(others)
        for i in range(len(case.shapes)):
            full.append(next(it) if i in argnums else next(oit))
        g = _partial(case, full, argnums)
        return mjcore.jvp(g, list(xs), list(ts[:k]))[1]

    others = [batched[i] for i in range(len(case.shapes)) if i not in argnums]
    t2 = mjcore.vmap(per)(*[batched[i] for i in argnums], *tangents, *others)
    del f
    np.testing.assert_allclose(np.asarray(t1), np.asarray(t2), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in PRIMITIVE_CASES])
def test_vmap_of_vmap(case: PrimCase):
    dtype = case.dtypes[-1]
    rng = _rng(case, "vv")
    args = [
        np.stack(
            [
                np.stack(
                    case.make_args(rng, dtype)[i : i + 1] * 1 + [case.make_args(rng, dtype)[i]]
                )
                for _ in range(2)
            ]
        )
        for i in range(len(case.shapes))
    ]
    out = mjcore.vmap(mjcore.vmap(case.fun))(*args)
    expected = np.stack(
        [
            np.stack([np.asarray(case.numpy_fun(*[a[i, j] for a in args])) for j in range(2)])
            for i in range(2)
        ]
    )
    _assert_close(out, expected, expected.dtype, case.rtol)


# --- completeness ---------------------------------------------------------------------------


def _all_primitives() -> dict[str, Primitive]:
    prims: dict[str, Primitive] = {}
    for info in pkgutil.iter_modules(lax.__path__):
        module = importlib.import_module(f"mjcore.lax.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Primitive):
                prims[value.name] = value
    return prims


def _primitives_in_cases() -> set[str]:
    names = set()
    for case in PRIMITIVE_CASES:
        args = case.make_args(_rng(case), case.dtypes[0])
        closed = mjcore.make_jaxpr(case.fun)(*args)
        names.update(e.primitive.name for e in closed.jaxpr.eqns)
    return names


def _tangent_primitives() -> set[str]:
    """The primitives of the cases' tangent programs (`linearize`'s linear jaxprs): linear in
    their tangent operands, so reverse mode transposes them. Inferred, not listed by hand."""
    names: set[str] = set()

    def collect(jaxpr) -> None:
        for eqn in jaxpr.eqns:
            names.add(eqn.primitive.name)
            for value in eqn.params.values():
                inner = getattr(value, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    collect(inner)

    for case in PRIMITIVE_CASES:
        if "float64" not in case.dtypes or not case.differentiable_argnums:
            continue
        args = case.make_args(_rng(case, "linear"), "float64")
        primals = [args[i] for i in case.differentiable_argnums]
        f = _partial(case, args, case.differentiable_argnums)
        _, f_jvp = mjcore.linearize(f, *primals)
        collect(mjcore.make_jaxpr(f_jvp)(*primals).jaxpr)
    return names


def test_every_primitive_has_every_rule_and_a_row():
    prims = _all_primitives()
    covered = _primitives_in_cases()
    missing_rules = [
        f"{name}.{rule}"
        for name, p in prims.items()
        for rule in ("abstract_eval_rule", "lowering_rule", "jvp_rule", "batching_rule")
        if getattr(p, rule) is None
    ]
    assert not missing_rules
    # A primitive in a tangent program is linear there and needs a transpose (the vjp test
    # exercises it); which ones those are is read off the programs, not kept in a list.
    linear = _tangent_primitives()
    assert {"mul", "broadcast_in_dim", "transpose"} <= linear, sorted(linear)
    internal = {"add_any"}  # cotangent accumulation: no case binds it, and it is linear
    untransposable = sorted(
        name for name in linear | internal if name in prims and prims[name].transpose_rule is None
    )
    assert not untransposable
    # Collectives need a named axis in scope: tests/test_collectives.py has their table and
    # its own completeness check.
    collectives = {n for n, p in prims.items() if isinstance(p, AxisPrimitive)}
    assert sorted(set(prims) - covered - internal - collectives) == []
