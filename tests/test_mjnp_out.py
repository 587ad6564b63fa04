"""`out=` on every mjnp function whose NumPy counterpart takes it (ufuncs included), against
NumPy writing into an ndarray: the values and dtype written, `result is out`, the exception
types for casting and shape errors, and differentiation and `jit` through a rebound `out`."""

from __future__ import annotations

import inspect
import warnings
from typing import Any, NamedTuple

import numpy as np
import pytest

import mjcore
import mjnp
from mjcore.test_util import check_grads

_RNG = np.random.default_rng(0)
_A = np.array([[0.5, 1.5, 2.5], [3.5, 4.5, 5.25]])
_V = np.array([0.25, 0.75, 0.5])
_M = np.array([[2.0, 0.5, 0.25], [0.5, 3.0, 0.75], [0.25, 0.75, 4.0]])
_I = np.array([[3, 5, 12], [7, 6, 2]])


class OutCase(NamedTuple):
    name: str  # "sum", "linalg.multi_dot"
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def _resolve(module: Any, name: str) -> Any:
    for part in name.split("."):
        module = getattr(module, part)
    return module


# --- the table: NumPy functions with `out` in their signature (ufuncs get rows below) -------

_FUNCTION_CASES = [
    OutCase("all", (_A,), {"axis": 0}),
    OutCase("any", (_A,), {"axis": 1}),
    OutCase("amax", (_A,), {"axis": 0}),
    OutCase("amin", (_A,), {"axis": 0}),
    OutCase("max", (_A,), {"axis": 1}),
    OutCase("min", (_A,), {"axis": None}),
    OutCase("argmax", (_A,), {"axis": 0}),
    OutCase("argmin", (_A,), {"axis": 1}),
    OutCase("sum", (_A,), {"axis": 0}),
    OutCase("prod", (_A,), {"axis": 0}),
    OutCase("mean", (_A,), {"axis": 1}),
    OutCase("var", (_A,), {"axis": 0}),
    OutCase("std", (_A,), {"axis": 0}),
    OutCase("ptp", (_A,), {"axis": 1}),
    OutCase("median", (_A,), {"axis": 0}),
    OutCase("quantile", (_A, 0.3), {"axis": 0}),
    OutCase("percentile", (_A, 30.0), {"axis": 1}),
    OutCase("nansum", (_A,), {"axis": 0}),
    OutCase("nanprod", (_A,), {"axis": 0}),
    OutCase("nanmean", (_A,), {"axis": 0}),
    OutCase("nanvar", (_A,), {"axis": 0}),
    OutCase("nanstd", (_A,), {"axis": 1}),
    OutCase("nanmax", (_A,), {"axis": 0}),
    OutCase("nanmin", (_A,), {"axis": 0}),
    OutCase("nanargmax", (_A,), {"axis": 0}),
    OutCase("nanargmin", (_A,), {"axis": 0}),
    OutCase("nanmedian", (_A,), {"axis": 0}),
    OutCase("nanquantile", (_A, 0.7), {"axis": 0}),
    OutCase("nanpercentile", (_A, 70.0), {"axis": 0}),
    OutCase("cumsum", (_A,), {"axis": 0}),
    OutCase("cumprod", (_A,), {"axis": 1}),
    OutCase("nancumsum", (_A,), {"axis": 0}),
    OutCase("nancumprod", (_A,), {"axis": 0}),
    OutCase("cumulative_sum", (_A,), {"axis": 0}),
    OutCase("cumulative_prod", (_A,), {"axis": 1}),
    OutCase("round", (_A,), {}),
    OutCase("around", (_A * 1.37,), {"decimals": 1}),
    OutCase("fix", (_A * -1.3,), {}),
    OutCase("clip", (_A, 1.0, 4.0), {}),
    OutCase("isposinf", (np.array([1.0, np.inf, -np.inf]),), {}),
    OutCase("isneginf", (np.array([1.0, np.inf, -np.inf]),), {}),
    OutCase("take", (_V, [0, 2]), {}),
    OutCase("choose", ([0, 1, 0], [_V, 2 * _V]), {}),
    OutCase("compress", ([True, False, True], _V), {}),
    OutCase("trace", (_M,), {}),
    OutCase("concatenate", ([_V, _V],), {}),
    OutCase("concat", ([_A, _A],), {"axis": 1}),
    OutCase("stack", ([_V, _V],), {}),
    OutCase("dot", (_A, _V), {}),
    OutCase("outer", (_V, _V), {}),
    OutCase("einsum", ("ij,j->i", _A, _V), {}),
    OutCase("matmul", (_A, _M), {}),
    OutCase("vecdot", (_A, _V), {}),
    OutCase("matvec", (_A, _V), {}),
    OutCase("vecmat", (_V[:2], _A), {}),
    # NB: NumPy rejects any out when the last array is 1-D (it writes a 2-D temporary).
    OutCase("linalg.multi_dot", ([_A, _M, _M],), {}),
    *(OutCase(f"fft.{n}", (_A,), {}) for n in ("fft", "ifft", "rfft", "irfft", "fftn", "ifftn")),
    *(OutCase(f"fft.{n}", (_A,), {}) for n in ("fft2", "rfftn", "irfftn", "rfft2")),
]
# NB: NumPy 2's hfft, ifft2 and irfft2 ignore out= and its ihfft writes the unconjugated
# transform there; mjnp writes their results (test_ffts_numpy_does_not_write_out_for).
_NUMPY_OUT_QUIRKS = {"fft.hfft", "fft.ihfft", "fft.ifft2", "fft.irfft2"}


def _ufunc_args(ufunc: np.ufunc) -> tuple[Any, ...] | None:
    """Inputs for a ufunc: floats in (0.2, 0.8) when it has a float loop, else small ints."""
    floats = tuple(_RNG.uniform(0.2, 0.8, (2, 3)) for _ in range(ufunc.nin))
    ints = tuple(_RNG.integers(1, 9, (2, 3)) for _ in range(ufunc.nin))
    for args in (floats, ints, (floats[0], *ints[1:])):
        try:
            with np.errstate(all="ignore"):
                ufunc(*args)
        except TypeError:
            continue
        return args
    return None


# Ufuncs with no input mjnp can represent: isnat takes only datetimes, which mjnp has no
# dtype for (tests/test_mjnp_utilities_extra.py checks its TypeError for every mjnp dtype).
_NO_MJNP_INPUT = {"isnat"}


def _ufunc_cases() -> list[OutCase]:
    names = [n for n in mjnp.__all__ if isinstance(getattr(np, n, None), np.ufunc)]
    # matmul and friends are in the table above (core dimensions)
    skip = {"matmul", "vecdot", "matvec", "vecmat"} | _NO_MJNP_INPUT
    return [OutCase(n, _ufunc_args(getattr(np, n)), {}) for n in sorted(names) if n not in skip]


CASES = _FUNCTION_CASES + _ufunc_cases()
_IDS = [c.name for c in CASES]


def test_every_function_with_out_has_a_row():
    """The table covers each public mjnp name whose NumPy function takes `out`."""
    expected = set()
    namespaces = (("", mjnp, np), ("linalg.", mjnp.linalg, np.linalg), ("fft.", mjnp.fft, np.fft))
    for prefix, mj_module, np_module in namespaces:
        for name in mj_module.__all__:
            np_fun = getattr(np_module, name, None)
            if isinstance(np_fun, np.ufunc):
                expected.add(prefix + name)
                continue
            try:
                params = inspect.signature(np_fun).parameters
            except (TypeError, ValueError):
                continue
            if "out" in params:
                expected.add(prefix + name)
    assert expected - set(_IDS) == _NUMPY_OUT_QUIRKS | _NO_MJNP_INPUT


# --- running one case ------------------------------------------------------------------------


def _call(module: Any, case: OutCase, out: Any) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return _resolve(module, case.name)(*case.args, **case.kwargs, out=out)


def _results(module: Any, case: OutCase) -> tuple[np.ndarray, ...]:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        result = _resolve(module, case.name)(*case.args, **case.kwargs)
    results = result if isinstance(result, tuple) else (result,)
    return tuple(np.asarray(r) for r in results)


def _outs(results: tuple[np.ndarray, ...], dtype: Any, shape: Any = None) -> Any:
    """Out arrays (NumPy), one per result, of `dtype` (None: the result's) and `shape`."""
    outs = tuple(
        np.zeros(r.shape if shape is None else shape, r.dtype if dtype is None else dtype)
        for r in results
    )
    return outs if len(outs) > 1 else outs[0]


def _outcome(module: Any, case: OutCase, out: Any) -> tuple[str, Any]:
    """("ok", values written) or ("raises", the builtin exception class NumPy's derives from)."""
    try:
        result = _call(module, case, out)
    except (TypeError, ValueError) as err:
        if module is mjnp:  # an error about out=, not some other failure
            assert "out" in str(err) or "cast" in str(err), err
        return "raises", TypeError if isinstance(err, TypeError) else ValueError
    outs = out if isinstance(out, tuple) else (out,)
    results = result if isinstance(result, tuple) else (result,)
    assert all(r is o for r, o in zip(results, outs, strict=True)), "the result must be `out`"
    return "ok", tuple(np.asarray(o) for o in outs)


def _to_mjnp(out: Any) -> Any:
    return tuple(map(mjnp.asarray, out)) if isinstance(out, tuple) else mjnp.asarray(out)


@pytest.mark.parametrize("out_dtype", [None, "float32", "int64", "complex128", "bool"])
@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_out_matches_numpy(case, out_dtype):
    results = _results(np, case)
    expected = _outcome(np, case, _outs(results, out_dtype))
    got = _outcome(mjnp, case, _to_mjnp(_outs(results, out_dtype)))
    assert got[0] == expected[0], f"NumPy {expected}, mjnp {got}"
    if got[0] == "raises":
        assert got[1] is expected[1]
        return
    for g, e in zip(got[1], expected[1], strict=True):
        assert g.dtype == e.dtype and g.shape == e.shape
        rtol = 1e-3 if g.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("case", CASES, ids=_IDS)
def test_out_shape_mismatch_raises_like_numpy(case):
    results = _results(np, case)
    expected = _outcome(np, case, _outs(results, None, (7,)))
    got = _outcome(mjnp, case, _to_mjnp(_outs(results, None, (7,))))
    assert expected[0] == "raises"
    assert got == expected


# --- properties of the shared helper ---------------------------------------------------------


@pytest.mark.parametrize("name", sorted(_NUMPY_OUT_QUIRKS))
def test_ffts_numpy_does_not_write_out_for(name):
    expected = _resolve(np, name)(_A)
    out = mjnp.zeros(expected.shape, dtype=expected.dtype)
    assert _resolve(mjnp, name)(_A, out=out) is out
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match=f"mjnp.{name}: cannot cast"):
        _resolve(mjnp, name)(_A, out=mjnp.zeros(expected.shape, dtype=mjnp.bool))


def test_ufunc_out_broadcasts_to_a_larger_out_as_numpy():
    expected = np.add(_V, 1.0, out=np.zeros((2, 3)))
    out = mjnp.zeros((2, 3))
    assert mjnp.add(mjnp.asarray(_V), 1.0, out=out) is out
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_ndarray_out_is_written_in_place():
    host = np.zeros(3)
    assert mjnp.sin(_V, out=host) is host
    np.testing.assert_allclose(host, np.sin(_V))
    host = np.zeros(3, np.int64)
    assert mjnp.sum(_A * 2, axis=0, out=host) is host
    np.testing.assert_array_equal(host, np.sum(_A * 2, axis=0, out=np.zeros(3, np.int64)))


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"out": [0.0, 0.0, 0.0]}, TypeError, "out= must be an array"),
        ({"out": mjnp.zeros(3, dtype=mjnp.int64)}, TypeError, "casting rule 'same_kind'"),
        ({"out": mjnp.zeros(4)}, ValueError, r"out= has shape \(4,\)"),
        ({"out": (mjnp.zeros(3), mjnp.zeros(3))}, ValueError, "one entry per result"),
    ],
    ids=["list", "cast", "shape", "tuple"],
)
def test_out_errors_name_the_function(kwargs, exc, match):
    with pytest.raises(exc, match=f"mjnp.sin: .*{match}"):
        mjnp.sin(_V, **kwargs)


def test_multi_output_ufunc_needs_a_tuple():
    with pytest.raises(TypeError, match="mjnp.divmod: out= must be a tuple"):
        mjnp.divmod(_V, 0.3, out=mjnp.zeros(3))
    q = mjnp.zeros(3)
    quotient, remainder = mjnp.divmod(_V, 0.3, out=(q, None))
    assert quotient is q
    np.testing.assert_allclose(np.asarray(remainder), np.remainder(_V, 0.3))


# --- transformations through a rebound out ---------------------------------------------------


def _through_out(x: Any) -> Any:
    """A loss that writes intermediate results with `out=` into arrays traced from `x`."""
    buf = x * 0.0  # traced, so it can hold traced results
    mjnp.sin(x, out=buf)
    total = mjnp.zeros((), dtype=x.dtype) + x[0] * 0.0
    mjnp.sum(mjnp.multiply(buf, x), out=total)
    joined = mjnp.concatenate([x, x]) * 0.0
    mjnp.concatenate([buf, mjnp.cumsum(x)], out=joined)
    mat = mjnp.outer(x, x) * 0.0
    mjnp.matmul(mjnp.outer(x, buf), mjnp.outer(x, x), out=mat)
    return total + mjnp.sum(joined**2) + mjnp.mean(mjnp.clip(mat, 0.1, 0.4, out=mat))


def _plain(x: Any) -> Any:
    buf = mjnp.sin(x)
    total = mjnp.sum(mjnp.multiply(buf, x))
    joined = mjnp.concatenate([buf, mjnp.cumsum(x)])
    mat = mjnp.matmul(mjnp.outer(x, buf), mjnp.outer(x, x))
    return total + mjnp.sum(joined**2) + mjnp.mean(mjnp.clip(mat, 0.1, 0.4))


def test_grad_and_jit_through_out_match_the_plain_function():
    x = mjnp.asarray(_V)
    expected = np.asarray(mjcore.grad(_plain)(x))
    np.testing.assert_allclose(np.asarray(_through_out(x)), np.asarray(_plain(x)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(mjcore.grad(_through_out)(x)), expected, rtol=1e-12)
    jitted = mjcore.jit(mjcore.grad(_through_out))
    np.testing.assert_allclose(np.asarray(jitted(x)), expected, rtol=1e-12)
    np.testing.assert_allclose(
        np.asarray(mjcore.jit(_through_out)(x)), np.asarray(_plain(x)), rtol=1e-12
    )
    check_grads(_through_out, (x,), order=2, modes=("fwd", "rev"))


def test_concrete_out_filled_with_a_traced_result():
    def f(x):
        out = mjnp.zeros(3)  # a constant while run eagerly
        return mjnp.sum(mjnp.sin(x, out=out))

    # Eager grad traces the whole function then, as jit does, and `zeros` is traced too.
    np.testing.assert_allclose(np.asarray(mjcore.grad(f)(mjnp.asarray(_V))), np.cos(_V), rtol=1e-12)
    # Under vmap nothing can: the error names the fix.
    with pytest.raises(TypeError, match="mjnp.sin: out= is a .*cannot change its kind"):
        mjcore.vmap(mjcore.grad(f))(mjnp.asarray(np.stack([_V, _V])))
