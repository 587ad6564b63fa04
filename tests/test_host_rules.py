"""Host rules (a primitive's NumPy implementation) against the primitive's XLA executable.

Every row of the primitive table (tests/test_primitives.py) is traced to a jaxpr; each of its
equations whose primitive has a host rule runs both ways on the same host inputs: the shape and
dtype must be exactly abstract_eval's, NaNs in the same places, and the values bit for bit
equal for exact operations (within a few ulp for transcendental ones and sums). A second table
pins the corners where XLA defines what NumPy does not (integer division by zero, shifts past
the width, float-to-integer overflow, ...), and a completeness test keeps the primitives
without a host rule an explicit, reasoned list.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
import pytest

import mjcore
from mjcore import core, dispatch
from mjcore.array import wrap_buffer
from mjcore.core import Primitive
from mjcore.jaxpr import Literal
from mjcore.lax import arithmetic as arith
from mjcore.lax import base as lax_base
from mjcore.lax import bitcast, bitwise, linalg, reductions, sorting, structural, transcendental
from mjcore.lax.host import host_coverage
from tests.test_primitives import EAGER_PARAMS, _rng

lax_fft = importlib.import_module("mjcore.lax.fft")  # `mjcore.lax.fft` is also the function
lax_dot = importlib.import_module("mjcore.lax.dot")
gather = importlib.import_module("mjcore.lax.gather")

# --- why a primitive has no host rule (dispatch falls back to its XLA executable) -----------

NO_HOST_RULE = {
    # NumPy has no such function, and scipy.special is not a runtime dependency.
    "bessel_i0e": "special function NumPy lacks",
    "bessel_i1e": "special function NumPy lacks",
    "digamma": "special function NumPy lacks",
    "erf": "special function NumPy lacks",
    "erf_inv": "special function NumPy lacks",
    "erfc": "special function NumPy lacks",
    "igamma": "special function NumPy lacks",
    "igamma_grad_a": "special function NumPy lacks",
    "igammac": "special function NumPy lacks",
    "lgamma": "special function NumPy lacks",
    "polygamma": "special function NumPy lacks",
    "zeta": "special function NumPy lacks",
    # numpy.linalg has no LAPACK-equivalent routine with these semantics.
    "triangular_solve": "numpy.linalg has no triangular solve (trsm)",
    "lu": "numpy.linalg has no LU factorisation (getrf)",
    # Decompositions whose factors are unique only up to signs/phases and order: NumPy's
    # driver may choose other ones than the lowering's, so results could differ from jit's.
    # (Measured: NumPy's float32 and complex64 eigh flip some eigenvector signs against the
    # lowering's syevd/heevd; float64 agreed bit for bit.)
    "eigh": "eigenvector signs/phases may differ from the lowering's driver",
    "eig": "eigenvector normalisation and order may differ from the lowering's driver",
    "svd": "singular vector signs/phases may differ from the lowering's driver",
    # No NumPy equivalent worth writing: XLA's convolution is fast.
    "conv_general_dilated": "convolution left to XLA",
    # Carries a user jaxpr as its combiner.
    "reduce": "general reduction with a jaxpr combiner",
    # Collectives run only inside shard_map/pmap programs (or batch away under a named vmap):
    # they never reach eager dispatch.
    "all_gather": "collective: only inside a mapped program",
    "all_to_all": "collective: only inside a mapped program",
    "axis_index": "collective: only inside a mapped program",
    "pmax": "collective: only inside a mapped program",
    "pmin": "collective: only inside a mapped program",
    "ppermute": "collective: only inside a mapped program",
    "psum": "collective: only inside a mapped program",
    "psum_scatter": "collective: only inside a mapped program",
    # Lays an array out over devices (`mjcore.sharded`), which is not a host computation.
    "sharding_constraint": "device layout, not a computation",
}

# Equal values, but NumPy picks the sign of a zero among equal operands by argument order,
# where XLA's max/min always give +0.0/-0.0.
SIGNED_ZERO_FREE = {
    "max",
    "min",
    "clamp",
    "reduce_max",
    "reduce_min",
    "cummax",
    "cummin",
    "scatter_max",
    "scatter_min",
    "reduce_window_max",
    "reduce_window_min",
}

# Rounded differently from the lowering (other libm, summation order, algorithms): a few ulp
# for elementwise functions, and relative to the magnitudes involved for sums.
ULP_PRIMS = {
    "exp",
    "exp2",
    "log",
    "log1p",
    "expm1",
    "rsqrt",
    "cbrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "logistic",
    "pow",
}
SUM_PRIMS = {
    "dot_general",
    "reduce_sum",
    "reduce_prod",
    "cumsum",
    "cumprod",
    "cumlogsumexp",
    "fft",
    "cholesky",
    "qr",
    "geqrf",
    "scatter_add",
    "scatter_mul",
    "reduce_window_sum",
}
# Complex arithmetic: XLA's multiplication, division and modulus are rounded differently.
COMPLEX_ULP_PRIMS = {"mul", "div", "abs", "integer_pow", "sqrt", "sign"}


# --- running a primitive both ways ---------------------------------------------------------


def run_xla(prim: Primitive, args: list[np.ndarray], params: dict[str, Any]) -> list[np.ndarray]:
    """The primitive's compiled executable on host inputs (never the host rule)."""
    bufs, avals = [], []
    for a in args:
        buf, aval = dispatch.to_buffer(np.asarray(a))
        bufs.append(buf)
        avals.append(aval)
    program, avals_out = dispatch.compiled_primitive(prim, tuple(avals), params)
    outs = program.run(bufs)
    return [np.asarray(wrap_buffer(b, a)) for b, a in zip(outs, avals_out, strict=True)]


def run_host(prim: Primitive, args: list[np.ndarray], params: dict[str, Any]) -> list[Any]:
    out = prim.host_rule(*args, **params)
    return list(out) if prim.multiple_results else [out]


def _ulp_tolerance(prim_name: str, dtype: np.dtype) -> tuple[float, float] | None:
    """(rtol, atol scale) for an inexact comparison, None for bit-for-bit."""
    if dtype.kind not in "fc":
        return None
    eps = float(np.finfo(dtype).eps)
    if prim_name in SUM_PRIMS:
        return 256 * eps, 256 * eps
    if prim_name == "log1p" and dtype == np.float64:
        # XLA's float64 log1p is off by up to 128 ulp near x = -0.41 (measured against long
        # double; NumPy's is within 1 ulp): the host rule is the accurate one.
        return 256 * eps, 256 * eps
    if prim_name in ULP_PRIMS or (dtype.kind == "c" and prim_name in COMPLEX_ULP_PRIMS):
        return 8 * eps, 8 * eps
    return None


def assert_host_matches(
    prim: Primitive, args: list[Any], params: dict[str, Any]
) -> list[np.ndarray]:
    """The host rule's results against the executable's; returns the executable's."""
    args = [np.asarray(a) for a in args]
    avals_out = prim.abstract_eval(*(core.get_aval(a) for a in args), **params)
    expected = run_xla(prim, args, params)
    copies = [a.copy() for a in args]
    got = run_host(prim, args, params)
    for a, c in zip(args, copies, strict=True):
        assert np.array_equal(a, c, equal_nan=True), f"{prim}: host rule wrote an input"
    assert len(got) == len(expected)
    for g, e, aval in zip(got, expected, avals_out, strict=True):
        assert type(g) is np.ndarray, f"{prim}: host rule returned {type(g).__name__}"
        assert g.shape == aval.shape == e.shape, (prim, g.shape, aval.shape, e.shape)
        assert g.dtype == aval.dtype == e.dtype, (prim, g.dtype, aval.dtype, e.dtype)
        assert_values_match(prim.name, g, e)
    return expected


def assert_values_match(name: str, got: np.ndarray, expected: np.ndarray) -> None:
    dtype = expected.dtype
    if dtype.kind not in "fc":
        np.testing.assert_array_equal(got, expected, err_msg=name)
        return
    parts = (
        [(got, expected)]
        if dtype.kind == "f"
        else [
            (got.real, expected.real),
            (got.imag, expected.imag),
        ]
    )
    tol = _ulp_tolerance(name, dtype)
    for g, e in parts:
        np.testing.assert_array_equal(np.isnan(g), np.isnan(e), err_msg=f"{name}: NaN positions")
        finite = np.isfinite(e)
        np.testing.assert_array_equal(g[~finite], e[~finite], err_msg=f"{name}: infinities")
        if tol is None:
            np.testing.assert_array_equal(g, e, err_msg=name)
            if name not in SIGNED_ZERO_FREE:
                np.testing.assert_array_equal(
                    np.signbit(g), np.signbit(e), err_msg=f"{name}: signs of zeros"
                )
        else:
            rtol, atol = tol
            scale = max(1.0, float(np.max(np.abs(e[finite]), initial=0.0)))
            np.testing.assert_allclose(
                g[finite], e[finite], rtol=rtol, atol=atol * scale, err_msg=name
            )


# --- the primitive table --------------------------------------------------------------------


def _host_values(closed, args):
    """Walk the jaxpr of a table row: check every equation that has a host rule against XLA
    on the same inputs, and carry XLA's (or, for higher-order equations, bind's) values on."""
    env = {}

    def read(x):
        if type(x) is Literal:
            return np.asarray(x.val, x.aval.dtype)
        return env[x]

    for v, c in zip(closed.jaxpr.constvars, closed.consts, strict=True):
        env[v] = np.asarray(c)
    for v, a in zip(closed.jaxpr.invars, args, strict=True):
        env[v] = np.asarray(a)
    checked = []
    for eqn in closed.jaxpr.eqns:
        ins = [read(x) for x in eqn.inputs]
        if eqn.primitive.host_rule is not None:
            outs = assert_host_matches(eqn.primitive, ins, eqn.params)
            checked.append(eqn.primitive.name)
        else:
            outs = [np.asarray(o) for o in core.bind(eqn.primitive, ins, eqn.params)]
        for v, o in zip(eqn.out_binders, outs, strict=True):
            env[v] = o
    return checked


@pytest.mark.parametrize("case,dtype", EAGER_PARAMS)
def test_host_rule_matches_xla_on_table(case, dtype):
    args = case.make_args(_rng(case, dtype), dtype)
    closed = mjcore.make_jaxpr(case.fun)(*args)
    _host_values(closed, args)


# --- corners XLA defines ---------------------------------------------------------------------

I32 = np.iinfo(np.int32)
NAN, INF = np.nan, np.inf


def _f(*xs, dtype=np.float64):
    with np.errstate(over="ignore"):  # 1e39 as float32 is inf on purpose
        return np.array(xs).astype(dtype)


CORNERS = [
    # integer division and remainder: truncation, by zero, INT_MIN / -1
    (
        arith.div_p,
        [
            np.array([7, -7, 7, -7, 0, I32.min, I32.min, 5, -5], np.int32),
            np.array([2, 2, -2, -2, 0, -1, 0, 0, 3], np.int32),
        ],
        {},
    ),
    (
        arith.rem_p,
        [
            np.array([7, -7, 7, -7, 0, I32.min, I32.min, 5, -5], np.int32),
            np.array([2, 2, -2, -2, 0, -1, 0, 0, 3], np.int32),
        ],
        {},
    ),
    (arith.div_p, [np.array([7, 0, 255], np.uint8), np.array([2, 0, 0], np.uint8)], {}),
    (arith.rem_p, [np.array([7, 0, 255], np.uint8), np.array([2, 0, 0], np.uint8)], {}),
    (arith.div_p, [np.array([-128, 5], np.int8), np.array([-1, 0], np.int8)], {}),
    (arith.div_p, [_f(1.0, -1.0, 0.0, NAN), _f(0.0, 0.0, 0.0, 1.0)], {}),
    (arith.rem_p, [_f(5.5, -5.5, 1.0, INF, -0.0), _f(2.0, 2.0, 0.0, 1.0, 1.0)], {}),
    # wrapping
    (arith.add_p, [np.array([I32.max], np.int32), np.array([1], np.int32)], {}),
    (arith.mul_p, [np.array([2**62], np.int64), np.array([4], np.int64)], {}),
    (arith.neg_p, [np.array([I32.min, 0], np.int32)], {}),
    (arith.abs_p, [np.array([I32.min, -3], np.int32)], {}),
    (arith.add_p, [np.array([True, True, False]), np.array([True, False, False])], {}),
    (lax_base.add_any_p, [_f(1.0, -0.0), _f(2.0, 0.0)], {}),
    # sign, max/min, rounding
    (arith.sign_p, [_f(NAN, -0.0, 0.0, -INF, 3.0)], {}),
    (arith.sign_p, [np.array([NAN + 0j, complex(INF, 1), 0j, 3 + 4j, complex(0, -2)])], {}),
    (arith.sign_p, [np.array([0, 3, 255], np.uint8)], {}),
    (arith.max_p, [_f(NAN, 1.0, INF, -INF), _f(1.0, NAN, 2.0, 0.0)], {}),
    (arith.min_p, [_f(NAN, 1.0, INF, -INF), _f(1.0, NAN, 2.0, 0.0)], {}),
    (arith.max_p, [np.array([True, False]), np.array([False, False])], {}),
    (
        arith.round_p,
        [_f(0.5, 1.5, 2.5, -0.5, -2.5, -0.3, 0.49999999999999994, INF, NAN, -0.0)],
        {"rounding_method": 0},
    ),
    (
        arith.round_p,
        [_f(0.5, 1.5, 2.5, -0.5, -2.5, -0.3, 0.49999999999999994, INF, NAN, -0.0)],
        {"rounding_method": 1},
    ),
    (arith.round_p, [_f(0.5, 2.5, -3.5, 1e30, dtype=np.float32)], {"rounding_method": 0}),
    (arith.floor_p, [_f(-0.5, 0.5, -0.0, INF, NAN)], {}),
    (arith.clamp_p, [np.array(0.0), _f(NAN, -1.0, 5.0, 0.5), np.array(1.0)], {}),
    (arith.clamp_p, [np.array(2.0), _f(0.5, 3.0), np.array(1.0)], {}),
    (arith.clamp_p, [np.array(NAN), _f(0.5, 3.0), np.array(1.0)], {}),
    (
        arith.clamp_p,
        [np.array(3, np.int32), np.arange(6, dtype=np.int32), np.array(1, np.int32)],
        {},
    ),
    # powers
    (arith.integer_pow_p, [np.array([3, -2, 0, 7], np.int32)], {"y": 31}),
    (arith.integer_pow_p, [np.array([1, -1, 2, 0, 5], np.int32)], {"y": -1}),
    (arith.integer_pow_p, [_f(1.5, -2.0, 0.0, NAN)], {"y": -3}),
    (arith.integer_pow_p, [_f(1.5, -2.0, 0.0, NAN)], {"y": 0}),
    (arith.integer_pow_p, [np.array([1 + 2j, -0.5j])], {"y": 5}),
    (
        transcendental.pow_p,
        [
            np.array([0, 1, -1, -1, 2, -2, 0, 3], np.int32),
            np.array([-1, -5, -5, -4, -1, -2, 0, 3], np.int32),
        ],
        {},
    ),
    (transcendental.pow_p, [np.array([2, 3, 0], np.uint8), np.array([3, 6, 0], np.uint8)], {}),
    (
        transcendental.pow_p,
        [_f(2.0, -8.0, 0.0, -0.0, INF, NAN, 1.0), _f(0.5, 3.0, -1.0, -1.0, -2.0, 0.0, NAN)],
        {},
    ),
    # shifts past the width, and by negative amounts
    (
        bitwise.shift_left_p,
        [
            np.array([1, 1, 1, 1, -8, -8, 3], np.int32),
            np.array([0, 31, 32, -1, 1, 33, 100], np.int32),
        ],
        {},
    ),
    (
        bitwise.shift_right_arithmetic_p,
        [
            np.array([1, 1, 1, 1, -8, -8, 3], np.int32),
            np.array([0, 31, 32, -1, 1, 33, 100], np.int32),
        ],
        {},
    ),
    (
        bitwise.shift_right_logical_p,
        [
            np.array([1, 1, 1, 1, -8, -8, 3], np.int32),
            np.array([0, 31, 32, -1, 1, 33, 100], np.int32),
        ],
        {},
    ),
    (
        bitwise.shift_left_p,
        [np.array([1, 128, 200, 7], np.uint8), np.array([8, 7, 9, 255], np.uint8)],
        {},
    ),
    (
        bitwise.shift_right_arithmetic_p,
        [np.array([1, 128, 200, 7], np.uint8), np.array([8, 7, 9, 255], np.uint8)],
        {},
    ),
    (
        bitwise.shift_right_logical_p,
        [np.array([1, 128, 200, 7], np.uint8), np.array([8, 7, 9, 255], np.uint8)],
        {},
    ),
    (
        bitwise.shift_right_arithmetic_p,
        [np.array([-(2**63), 5], np.int64), np.array([63, 64], np.int64)],
        {},
    ),
    (bitwise.shift_left_p, [np.array([1, 1], np.int64), np.array([63, 64], np.int64)], {}),
    # bit counting
    (bitwise.clz_p, [np.array([0, 1, -1, 2**30, I32.max], np.int32)], {}),
    (bitwise.clz_p, [np.array([0, 1, 255, 16], np.uint8)], {}),
    (bitwise.clz_p, [np.array([0, 1, -1, 2**40], np.int64)], {}),
    (bitwise.clz_p, [np.array([0, 1, 2**63 + 5], np.uint64)], {}),
    (bitwise.population_count_p, [np.array([0, 1, -1, 7, I32.min], np.int32)], {}),
    (bitwise.population_count_p, [np.array([-1, 3], np.int8)], {}),
    (bitwise.population_count_p, [np.array([2**64 - 1, 6], np.uint64)], {}),
    (bitwise.bitwise_not_p, [np.array([True, False])], {}),
    (bitwise.bitwise_not_p, [np.array([0, 255], np.uint8)], {}),
    (bitwise.is_finite_p, [_f(NAN, INF, -INF, 0.0, 1e308)], {}),
    # next float and precision
    (
        bitcast.nextafter_p,
        [_f(0.0, 1.0, NAN, -0.0, INF, 1.0), _f(1.0, 0.0, 1.0, 0.0, 0.0, NAN)],
        {},
    ),
    (
        bitcast.nextafter_p,
        [_f(0.0, 1.0, -1.0, dtype=np.float32), _f(-1.0, 2.0, 0.0, dtype=np.float32)],
        {},
    ),
    (
        bitcast.reduce_precision_p,
        [_f(NAN, -NAN, 1e39, 1.0000001, 3e-39, -1e-45, INF, 65519.0, 65520.0, dtype=np.float32)],
        {"exponent_bits": 8, "mantissa_bits": 7},
    ),
    (
        bitcast.reduce_precision_p,
        [_f(NAN, 1e39, 1.5, -2.5, 65520.0, 6e-5, 3e-8, dtype=np.float32)],
        {"exponent_bits": 5, "mantissa_bits": 10},
    ),
    (
        bitcast.reduce_precision_p,
        [_f(NAN, 1e300, 1.5, -2.5, 0.1, 1e-300)],
        {"exponent_bits": 5, "mantissa_bits": 0},
    ),
    (
        bitcast.reduce_precision_p,
        [_f(NAN, 1e300, 1.5, 0.1)],
        {"exponent_bits": 11, "mantissa_bits": 52},
    ),
    (bitcast.bitcast_convert_type_p, [_f(1.0, -0.0, NAN)], {"new_dtype": np.dtype(np.int64)}),
    (
        bitcast.bitcast_convert_type_p,
        [np.array([-1, 1], np.int32)],
        {"new_dtype": np.dtype(np.float32)},
    ),
    # transcendental corners, warnings aside
    (transcendental.logistic_p, [_f(-1000.0, 1000.0, 0.0, NAN, -INF)], {}),
    (transcendental.rsqrt_p, [_f(0.0, -0.0, 4.0, INF)], {}),
    (
        transcendental.rsqrt_p,
        [
            np.array(
                [
                    complex(a, b)
                    for a in (0.0, -0.0, 1.0, -INF, INF, NAN)
                    for b in (0.0, -INF, INF, 2.0)
                ]
            )
        ],
        {},
    ),
    (transcendental.log_p, [_f(0.0, -1.0, INF, 1.0)], {}),
    (
        transcendental.atan2_p,
        [_f(0.0, -0.0, 0.0, -0.0, 1.0, INF), _f(0.0, 0.0, -0.0, -0.0, 0.0, INF)],
        {},
    ),
    (transcendental.sqrt_p, [_f(-0.0, -1.0, INF, 2.0)], {}),
    (transcendental.exp_p, [np.array([complex(0, INF), complex(-INF, 1), complex(1, 1)])], {}),
    # selection and structure
    (
        lax_base.select_n_p,
        [np.array([0, 1, 2, 5, -1], np.int32), *[np.full(5, k, np.float32) for k in range(3)]],
        {},
    ),
    (lax_base.select_n_p, [np.array(True), _f(1.0, 2.0), _f(3.0, 4.0)], {}),
    (lax_base.select_n_p, [np.array(2, np.int32), _f(1.0), _f(2.0), _f(3.0)], {}),
    (
        structural.pad_p,
        [np.arange(12.0).reshape(3, 4), np.array(-1.0)],
        {"padding_config": ((-1, 2, 1), (3, -2, 0))},
    ),
    (
        structural.pad_p,
        [np.arange(5, dtype=np.int32), np.array(9, np.int32)],
        {"padding_config": ((-4, -3, 2),)},
    ),
    (
        structural.pad_p,
        [np.zeros((0, 2)), np.array(7.0)],
        {"padding_config": ((1, 1, 3), (0, 0, 2))},
    ),
    (structural.iota_p, [], {"dtype": np.dtype(np.float32), "shape": (2, 3), "dimension": 1}),
    (structural.rev_p, [np.arange(6).reshape(2, 3)], {"dimensions": (0, 1)}),
    (structural.squeeze_p, [np.zeros((1, 3, 1))], {"dimensions": (0, 2)}),
    (lax_base.expand_dims_p, [np.arange(3.0)], {"dimensions": (0, 2)}),
    # reductions of nothing, and with NaNs
    (reductions.reduce_max_p, [np.zeros((0, 3))], {"axes": (0,)}),
    (reductions.reduce_min_p, [np.zeros((0, 3), np.int8)], {"axes": (0,)}),
    (reductions.reduce_and_p, [np.zeros((2, 0), np.uint16)], {"axes": (1,)}),
    (reductions.reduce_sum_p, [_f(-0.0, -0.0)], {"axes": (0,)}),
    (reductions.reduce_sum_p, [np.array([[100, 100], [100, 100]], np.int8)], {"axes": (0, 1)}),
    (reductions.reduce_prod_p, [np.array([2**40, 2**40], np.int64)], {"axes": (0,)}),
    (reductions.reduce_max_p, [_f(1.0, NAN, 3.0)], {"axes": (0,)}),
    (reductions.reduce_xor_p, [np.array([[True, True, False]])], {"axes": (1,)}),
    (reductions.argmax_p, [_f(1.0, NAN, NAN, 5.0)], {"axis": 0, "index_dtype": np.dtype(np.int32)}),
    (
        reductions.argmin_p,
        [np.array([[3, 1, 1], [0, 0, 2]], np.uint8)],
        {"axis": 1, "index_dtype": np.dtype(np.int64)},
    ),
    (
        reductions.argmax_p,
        [np.array([False, True, True])],
        {"axis": 0, "index_dtype": np.dtype(np.int32)},
    ),
    # cumulative and sorting
    (
        sorting.cumsum_p,
        [np.arange(12, dtype=np.int8).reshape(3, 4) * 30],
        {"axis": 1, "reverse": True},
    ),
    (sorting.cummax_p, [_f(1.0, NAN, 3.0, 0.0)], {"axis": 0, "reverse": False}),
    (sorting.cummin_p, [np.array([True, False, True])], {"axis": 0, "reverse": True}),
    (sorting.cumlogsumexp_p, [_f(-INF, 0.0, 1.0, INF)], {"axis": 0, "reverse": False}),
    (
        sorting.sort_p,
        [_f(3.0, NAN, -0.0, 1.0, -INF, 0.0, NAN, 2.0)],
        {"dimension": 0, "is_stable": True, "num_keys": 1},
    ),
    (
        sorting.sort_p,
        [
            np.array([2, 1, 2, 1, 0], np.int32),
            _f(5.0, 4.0, 3.0, 2.0, 1.0),
            np.arange(5, dtype=np.int32),
        ],
        {"dimension": 0, "is_stable": True, "num_keys": 2},
    ),
    (
        sorting.sort_p,
        [np.array([[1 + 1j, NAN, 1 - 1j, complex(0, NAN), -1j]]), np.arange(5).reshape(1, 5)],
        {"dimension": 1, "is_stable": True, "num_keys": 1},
    ),
    (
        sorting.sort_p,
        [np.array([[3, 1], [2, 5], [1, 0]], np.uint8)],
        {"dimension": 0, "is_stable": False, "num_keys": 1},
    ),
    # fft: every type; float32 stays single precision
    (
        lax_fft.fft_p,
        [np.arange(8.0, dtype=np.float32).reshape(2, 4)],
        {"fft_type": "RFFT", "fft_lengths": (4,)},
    ),
    (
        lax_fft.fft_p,
        [(np.arange(6) + 1j).astype(np.complex64).reshape(2, 3)],
        {"fft_type": "IRFFT", "fft_lengths": (2, 4)},
    ),
    (
        lax_fft.fft_p,
        [(np.arange(12) - 2j).reshape(3, 4)],
        {"fft_type": "FFT", "fft_lengths": (3, 4)},
    ),
    (
        lax_fft.fft_p,
        [(np.arange(8) * 1j).reshape(2, 2, 2)],
        {"fft_type": "IFFT", "fft_lengths": (2, 2, 2)},
    ),
    (lax_fft.fft_p, [np.zeros((0, 4))], {"fft_type": "RFFT", "fft_lengths": (4,)}),
    # linalg
    (linalg.cholesky_p, [np.array([[[4.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]])], {}),
    (linalg.cholesky_p, [np.array([[4.0, 99.0], [2.0, 3.0]], np.float32)], {}),
    (linalg.qr_p, [np.arange(12.0).reshape(4, 3) ** 1.5], {"full_matrices": True}),
    (linalg.qr_p, [np.arange(12.0).reshape(2, 3, 2) - 4], {"full_matrices": False}),
    (linalg.qr_p, [np.zeros((3, 0))], {"full_matrices": True}),
]


def _dot(lhs, rhs, dn, pref=None):
    return (
        lax_dot.dot_general_p,
        [lhs, rhs],
        {"dimension_numbers": dn, "preferred_element_type": pref},
    )


_R = np.random.default_rng(0)
CORNERS += [
    _dot(
        _R.standard_normal((2, 3, 4)), _R.standard_normal((4, 2, 5)), (((2,), (0,)), ((0,), (1,)))
    ),
    _dot(
        np.array([[True, False], [False, False]]),
        np.array([[True, True], [False, True]]),
        (((1,), (0,)), ((), ())),
    ),
    _dot(
        np.array([[100, 100]], np.int8),
        np.array([[100], [100]], np.int8),
        (((1,), (0,)), ((), ())),
        np.dtype(np.int32),
    ),
    _dot(
        np.array([[100, 100]], np.int8), np.array([[100], [100]], np.int8), (((1,), (0,)), ((), ()))
    ),
    _dot(
        _R.standard_normal((3,)).astype(np.float32),
        _R.standard_normal((3,)).astype(np.float32),
        (((0,), (0,)), ((), ())),
        np.dtype(np.float64),
    ),
    _dot(np.zeros((2, 0)), np.zeros((0, 3)), (((1,), (0,)), ((), ()))),
    _dot(
        _R.standard_normal((2, 3)) + 1j, _R.standard_normal((4, 3)) - 2j, (((1,), (1,)), ((), ()))
    ),
]


def _convert(x, dtype):
    return (
        lax_base.convert_element_type_p,
        [x],
        {"new_dtype": np.dtype(dtype), "weak_type": False},
    )


_EDGES = _f(
    NAN,
    INF,
    -INF,
    1e20,
    -1e20,
    3.7,
    -3.7,
    255.5,
    256.0,
    -1.0,
    2.0**31,
    -(2.0**31) - 1000,
    2.0**63,
    -(2.0**63),
    -0.5,
    127.9,
)
for _src in (np.float64, np.float32, np.float16):
    for _dst in ("int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "bool"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            CORNERS.append(_convert(_EDGES.astype(_src), _dst))
CORNERS += [
    _convert(np.array([300, -1, 70000], np.int32), "uint8"),
    _convert(np.array([2**63 - 1, 2**62 + 1], np.int64), "float32"),
    _convert(np.array([2**64 - 1], np.uint64), "float32"),
    _convert(np.array([1e300, -1e300, 1e-300, NAN]), "float32"),
    _convert(np.array([1e300, 1e-8, 65520.0]), "float16"),
    _convert(np.array([1.5 + 2j, NAN + 0j, -3.9 - 1j]), "float64"),
    _convert(np.array([1.5 + 2j, -3.9 - 1j, 1e20 + 0j]), "int32"),
    _convert(np.array([0j, 1j, -0.0 + 0j]), "bool"),
    _convert(np.array([True, False]), "float32"),
    _convert(np.array([True, False]), "complex64"),
    _convert(np.array([1.5, -2.5]), "complex64"),
    _convert(np.array([-1, 5], np.int8), "uint64"),
]


def _gnums(*fields):
    return gather.GatherDimensionNumbers(*fields)


def _snums(*fields):
    return gather.ScatterDimensionNumbers(*fields)


_OP = np.arange(20.0).reshape(4, 5)
CORNERS += [
    # rows, clamped starts (negative, past the end), uint and int8 indices
    (
        gather.gather_p,
        [_OP, np.array([[0], [3], [-2], [9]], np.int32)],
        {"dimension_numbers": _gnums((1,), (0,), (0,)), "slice_sizes": (1, 5)},
    ),
    (
        gather.gather_p,
        [_OP, np.array([[1, 2], [3, 4], [0, 9]], np.int8)],
        {"dimension_numbers": _gnums((1, 2), (), (0, 1)), "slice_sizes": (2, 2)},
    ),
    (
        gather.gather_p,
        [_OP, np.array([[[2**63 + 3]]], np.uint64)],
        {"dimension_numbers": _gnums((0, 3), (), (1,)), "slice_sizes": (4, 2)},
    ),
    (
        gather.gather_p,
        [_OP, np.array([[4, 1], [0, 0]], np.int32)],
        {"dimension_numbers": _gnums((), (0, 1), (1, 0)), "slice_sizes": (1, 1)},
    ),
    # one element per index vector on every axis in order (`x[rows, cols]`): clamped, a 2-d
    # batch, a single vector, uint64 past int64, a 1-d operand
    (
        gather.gather_p,
        [_OP, np.array([[[4, 1], [-1, 7]], [[2, 3], [9, -6]]], np.int32)],
        {"dimension_numbers": _gnums((), (0, 1), (0, 1)), "slice_sizes": (1, 1)},
    ),
    (
        gather.gather_p,
        [_OP, np.array([3, 2], np.int64)],
        {"dimension_numbers": _gnums((), (0, 1), (0, 1)), "slice_sizes": (1, 1)},
    ),
    (
        gather.gather_p,
        [_OP, np.array([[2**63 + 3, 1], [1, 2]], np.uint64)],
        {"dimension_numbers": _gnums((), (0, 1), (0, 1)), "slice_sizes": (1, 1)},
    ),
    (
        gather.gather_p,
        [np.arange(6.0), np.array([[5], [-3], [8], [0]], np.int16)],
        {"dimension_numbers": _gnums((), (0,), (0,)), "slice_sizes": (1,)},
    ),
    # whole slices along one axis (np.take), the batch axes before, between or after
    (
        gather.gather_p,
        [_OP, np.array([[[1], [7]], [[-1], [0]], [[4], [2]]], np.int32)],
        {"dimension_numbers": _gnums((0,), (1,), (1,)), "slice_sizes": (4, 1)},
    ),
    (
        gather.gather_p,
        [np.arange(24.0).reshape(2, 3, 4), np.array([[2], [0]], np.int64)],
        {"dimension_numbers": _gnums((0, 2), (1,), (1,)), "slice_sizes": (2, 1, 4)},
    ),
    (
        gather.gather_p,
        [np.arange(24.0).reshape(2, 3, 4), np.array([[[2]], [[0]]], np.int64)],
        {"dimension_numbers": _gnums((0, 1), (1,), (1,)), "slice_sizes": (2, 1, 4)},
    ),
    # offset axes before the batch axis, and batching dims
    (
        gather.gather_p,
        [np.arange(24).reshape(2, 3, 4), np.array([[1], [3]], np.int32)],
        {"dimension_numbers": _gnums((1,), (2,), (2,), (0,), (0,)), "slice_sizes": (1, 3, 1)},
    ),
    (
        gather.gather_p,
        [np.arange(24).reshape(2, 3, 4), np.array([[1], [2]], np.int32)],
        {"dimension_numbers": _gnums((0, 2), (1,), (1,)), "slice_sizes": (2, 1, 4)},
    ),
    # scatter: duplicates combine, windows that do not fit are dropped
    (
        gather.scatter_add_p,
        [_OP, np.array([[1], [1], [-1], [4]], np.int32), np.ones((4, 5))],
        {"dimension_numbers": _snums((1,), (0,), (0,))},
    ),
    (
        gather.scatter_mul_p,
        [
            np.arange(1, 6, dtype=np.int32),
            np.array([[1], [1], [5]], np.int32),
            np.array([3, 4, 5], np.int32),
        ],
        {"dimension_numbers": _snums((), (0,), (0,))},
    ),
    (
        gather.scatter_min_p,
        [_f(1.0, 2.0, 3.0), np.array([[0], [0], [2]], np.int32), _f(NAN, 0.5, -1.0)],
        {"dimension_numbers": _snums((), (0,), (0,))},
    ),
    (
        gather.scatter_max_p,
        [np.array([False, False]), np.array([[0], [1]], np.int32), np.array([True, False])],
        {"dimension_numbers": _snums((), (0,), (0,))},
    ),
    (
        gather.scatter_p,
        [_OP, np.array([[0, 1], [2, 3], [3, 4]], np.int32), np.full((3, 2, 2), -1.0)],
        {"dimension_numbers": _snums((1, 2), (), (0, 1))},
    ),
    (
        gather.scatter_p,
        [np.zeros(4, np.int32), np.array([[1], [1], [1]], np.int32), np.array([5, 6, 7], np.int32)],
        {"dimension_numbers": _snums((), (0,), (0,))},
    ),
    # point updates: index vectors in another axis order, or starting only some axes
    (
        gather.scatter_add_p,
        [
            np.zeros((3, 4)),
            np.array([[1, 2], [3, 0], [3, 0], [9, 0], [0, -1]], np.int32),
            _f(1, 2, 3, 4, 5),
        ],
        {"dimension_numbers": _snums((), (0, 1), (1, 0))},
    ),
    (
        gather.scatter_p,
        [
            np.zeros((3, 4), np.int32),
            np.array([[1], [3], [5]], np.int32),
            np.array([7, 8, 9], np.int32),
        ],
        {"dimension_numbers": _snums((), (0, 1), (1,))},
    ),
    (
        gather.scatter_add_p,
        [np.zeros((2, 3)), np.array([[2], [0]], np.int32), np.array([10.0, 20.0])],
        {"dimension_numbers": _snums((), (1,), (1,), (0,), (0,))},
    ),
    (
        gather.scatter_add_p,
        [np.zeros((3, 4)), np.array([[0], [2]], np.int32), np.ones((4, 2))],
        {"dimension_numbers": _snums((0,), (0,), (0,))},
    ),
]

windowed = importlib.import_module("mjcore.lax.windowed")


def _window(prim, x, dims, strides, padding, base, wdil):
    params = {
        "window_dimensions": dims,
        "window_strides": strides,
        "padding": padding,
        "base_dilation": base,
        "window_dilation": wdil,
    }
    return (prim, [x], params)


_W = np.arange(30.0).reshape(5, 6) ** 1.3
CORNERS += [
    _window(windowed.reduce_window_sum_p, _W, (2, 3), (1, 2), ((1, 0), (2, -1)), (1, 1), (1, 1)),
    _window(windowed.reduce_window_sum_p, _W, (2, 2), (2, 1), ((0, 0), (0, 0)), (2, 1), (1, 2)),
    _window(
        windowed.reduce_window_max_p,
        _W.astype(np.float32),
        (3, 2),
        (1, 1),
        ((1, 1), (0, 0)),
        (1, 2),
        (2, 1),
    ),
    _window(
        windowed.reduce_window_max_p, _f(1.0, NAN, 2.0, 3.0), (2,), (1,), ((0, 0),), (1,), (1,)
    ),
    _window(
        windowed.reduce_window_min_p,
        np.array([True, False, True, True]),
        (2,),
        (2,),
        ((0, 1),),
        (1,),
        (1,),
    ),
    _window(
        windowed.reduce_window_sum_p, np.full(4, 100, np.int8), (3,), (1,), ((0, 0),), (1,), (1,)
    ),
    _window(windowed.reduce_window_sum_p, _f(1.0, 2.0), (5,), (1,), ((0, 0),), (1,), (1,)),
    _window(windowed.reduce_window_max_p, np.array(3.0), (), (), (), (), ()),
]


# Dynamic slices: starts clamp so the block fits.
from mjcore.lax import slicing  # noqa: E402  (beside its rows)

CORNERS += [
    (
        slicing.dynamic_slice_p,
        [_OP, np.array(-3, np.int32), np.array(4, np.int64)],
        {"slice_sizes": (2, 3)},
    ),
    (
        slicing.dynamic_slice_p,
        [_OP, np.array(200, np.uint8), np.array(1, np.int8)],
        {"slice_sizes": (4, 0)},
    ),
    (
        slicing.dynamic_update_slice_p,
        [_OP, -np.ones((2, 2)), np.array(3, np.int32), np.array(-1, np.int32)],
        {},
    ),
    (slicing.slice_p, [_OP], {"start_indices": (1, 0), "limit_indices": (4, 5), "strides": (2, 3)}),
    (slicing.slice_p, [_OP], {"start_indices": (1, 0), "limit_indices": (1, 5), "strides": None}),
]


def _corner_id(row) -> str:
    prim, args, params = row
    dts = ",".join(np.asarray(a).dtype.name for a in args)
    extra = ",".join(
        f"{k}={v}" for k, v in params.items() if k in ("new_dtype", "y", "rounding_method")
    )
    return f"{prim.name}-{dts}-{extra}" if extra else f"{prim.name}-{dts}"


@pytest.mark.parametrize("prim,args,params", CORNERS, ids=[_corner_id(r) for r in CORNERS])
def test_host_rule_matches_xla_at_corners(prim, args, params):
    with warnings.catch_warnings():
        # NumPy's own warnings (log(0), 0/0) are expected here: the values are what we check.
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_host_matches(prim, args, params)


# --- views and 0-d inputs -------------------------------------------------------------------


def _read_only(x):
    x = np.array(x)
    x.flags.writeable = False
    return x


def test_host_rules_accept_strided_read_only_and_0d_inputs():
    base = np.arange(24.0).reshape(4, 6) - 10.5
    strided = _read_only(base)[::2, ::-3]  # non-contiguous, read-only
    rows = [
        (transcendental.sin_p, [strided], {}),
        (arith.add_p, [strided, _read_only(2.0)], {}),
        (arith.round_p, [strided], {"rounding_method": 0}),
        (
            lax_base.convert_element_type_p,
            [strided],
            {"new_dtype": np.dtype(np.int8), "weak_type": False},
        ),
        (bitcast.bitcast_convert_type_p, [strided], {"new_dtype": np.dtype(np.uint64)}),
        (
            bitwise.shift_left_p,
            [_read_only(np.arange(8, dtype=np.int16))[::3], _read_only(np.int16(3))],
            {},
        ),
        (bitwise.clz_p, [_read_only(np.int32(5))], {}),
        (reductions.reduce_sum_p, [strided], {"axes": (0, 1)}),
        (reductions.argmax_p, [strided[0]], {"axis": 0, "index_dtype": np.dtype(np.int32)}),
        (lax_base.reshape_p, [strided], {"new_sizes": (4,)}),
        (lax_base.transpose_p, [strided], {"permutation": (1, 0)}),
        (
            lax_base.broadcast_in_dim_p,
            [strided[:, :1]],
            {"shape": (3, 2, 5), "broadcast_dimensions": (1, 2)},
        ),
        (structural.squeeze_p, [strided[:1]], {"dimensions": (0,)}),
        (
            lax_dot.dot_general_p,
            [strided, strided],
            {"dimension_numbers": (((0,), (0,)), ((), ())), "preferred_element_type": None},
        ),
        (arith.integer_pow_p, [_read_only(3.0)], {"y": 2}),
        (lax_base.select_n_p, [_read_only(np.int32(1)), _read_only(1.0), _read_only(2.0)], {}),
        (sorting.sort_p, [strided], {"dimension": 1, "is_stable": True, "num_keys": 1}),
        (sorting.cumsum_p, [strided], {"axis": 1, "reverse": True}),
        (
            gather.scatter_add_p,
            [strided, np.array([[1]], np.int32), np.ones((1, 2))],
            {"dimension_numbers": _snums((1,), (0,), (0,))},
        ),
    ]
    for prim, args, params in rows:
        assert_host_matches(prim, args, params)


def test_view_rules_return_views():
    x = np.arange(24.0).reshape(2, 3, 4)
    views = [
        lax_base.reshape_p.host_rule(x, new_sizes=(6, 4)),
        lax_base.transpose_p.host_rule(x, permutation=(2, 0, 1)),
        lax_base.expand_dims_p.host_rule(x, dimensions=(0,)),
        lax_base.broadcast_in_dim_p.host_rule(
            x, shape=(5, 2, 3, 4), broadcast_dimensions=(1, 2, 3)
        ),
        structural.rev_p.host_rule(x, dimensions=(1,)),
        slicing.slice_p.host_rule(
            x, start_indices=(0, 1, 0), limit_indices=(2, 3, 4), strides=None
        ),
        slicing.dynamic_slice_p.host_rule(
            x, np.array(0), np.array(1), np.array(2), slice_sizes=(1, 2, 2)
        ),
        structural.squeeze_p.host_rule(x[:1], dimensions=(0,)),
    ]
    for v in views:
        assert np.shares_memory(v, x)


def test_warnings_are_numpys():
    # Eager mjnp gives NumPy's RuntimeWarnings: rules leave them on where NumPy warns ...
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        transcendental.log_p.host_rule(np.array([0.0]))
    with pytest.warns(RuntimeWarning, match="invalid value"):
        transcendental.sqrt_p.host_rule(np.array([-1.0]))
    with np.errstate(divide="ignore"):  # ... and honour np.errstate
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            transcendental.log_p.host_rule(np.array([0.0]))
    # ... float-to-integer casts warn as NumPy's cast does, though they saturate as XLA ...
    with pytest.warns(RuntimeWarning, match="^invalid value encountered in cast$"):
        lax_base.convert_element_type_p.host_rule(
            np.array([np.nan, 1e30]), new_dtype=np.dtype(np.int32), weak_type=False
        )
    # ... and never warn where the primitive is defined without a NumPy warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        arith.div_p.host_rule(np.array([1, -128], np.int8), np.array([0, -1], np.int8))
        arith.rem_p.host_rule(np.array([1], np.int32), np.array([0], np.int32))
        arith.round_p.host_rule(np.array([np.inf]), rounding_method=0)
        transcendental.logistic_p.host_rule(np.array([-1000.0]))
        transcendental.rsqrt_p.host_rule(np.array([0.0]))
        bitwise.shift_left_p.host_rule(np.array([1], np.int32), np.array([40], np.int32))


def test_host_rules_keep_subnormals_as_numpy_does():
    # NB: XLA's CPU executables flush subnormal inputs and results to zero; NumPy keeps them,
    # and so do the host rules (eager mjnp is NumPy's). jit differs from eager here.
    tiny = np.array([5e-324, 1e-310])
    np.testing.assert_array_equal(arith.mul_p.host_rule(tiny, np.array(1.0)), tiny)
    np.testing.assert_array_equal(transcendental.sqrt_p.host_rule(tiny), np.sqrt(tiny))
    assert not run_xla(arith.mul_p, [tiny, np.ones(2)], {})[0].any()


# --- completeness ---------------------------------------------------------------------------


def test_every_primitive_without_a_host_rule_is_listed_with_a_reason():
    have, lack = host_coverage()
    assert sorted(NO_HOST_RULE) == lack, (
        "a mjcore.lax primitive has no host rule and no reason in NO_HOST_RULE: "
        f"{sorted(set(lack) - set(NO_HOST_RULE))}; listed but has one: "
        f"{sorted(set(NO_HOST_RULE) - set(lack))}"
    )
    assert not set(have) & set(NO_HOST_RULE)


def test_every_host_rule_is_exercised():
    seen = {row[0].name for row in CORNERS}
    for param in EAGER_PARAMS:
        case, dtype = param.values
        args = case.make_args(_rng(case, dtype), dtype)
        closed = mjcore.make_jaxpr(case.fun)(*args)
        seen |= {e.primitive.name for e in closed.jaxpr.eqns}
    have, _ = host_coverage()
    untested = sorted(set(have) - seen)
    assert not untested, f"host rules no test row reaches: {untested}"
