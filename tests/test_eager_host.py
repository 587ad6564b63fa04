"""The eager host path (docs/eager.md): on CPU, small eager calls run the primitives' NumPy
host rules, without compiling, and equal NumPy bit for bit; large ones run XLA."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as onp
import pytest

import mjcore
import mjnp as np
from mjcore import dispatch
from mjcore.array import Array
from mjcore.eager_fusion import uses_host


def _values(dtype):
    """A 6x7 array with NaN, infinities, signed zeros, tiny and large values (floats), or
    extreme values (integers)."""
    rng = onp.random.default_rng(0)
    if onp.dtype(dtype).kind == "f":
        x = rng.standard_normal((6, 7)).astype(dtype) * 3
        x.flat[:8] = [onp.nan, onp.inf, -onp.inf, 0.0, -0.0, 1e-30, 700.0, -700.0]
        return x
    info = onp.iinfo(dtype)
    x = rng.integers(-50, 50, (6, 7)).astype(dtype)
    x.flat[:2] = [info.min, info.max]
    return x


def _same(got, want):
    """Bit for bit: dtype, shape, values, NaN positions and signs of zeros."""
    got = onp.asarray(got)
    want = onp.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert onp.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
    if want.dtype.kind == "f":
        assert onp.array_equal(onp.signbit(got), onp.signbit(want))


# (name, function of (module, x)): mjnp functions whose primitives have host rules
_CASES = [
    ("sin", lambda m, x: m.sin(x)),
    ("exp", lambda m, x: m.exp(x)),
    ("tanh", lambda m, x: m.tanh(x)),
    ("floor", lambda m, x: m.floor(x)),
    ("negative", lambda m, x: m.negative(x)),
    ("add", lambda m, x: m.add(x, x)),
    ("subtract", lambda m, x: m.subtract(x, x[::-1])),
    ("multiply", lambda m, x: m.multiply(x, x)),
    ("maximum", lambda m, x: m.maximum(x, x[::-1])),
    ("minimum", lambda m, x: m.minimum(x, x[::-1])),
    ("sum_axis0", lambda m, x: m.sum(x, axis=0)),
    ("max_axis1", lambda m, x: m.max(x, axis=1)),
    ("where", lambda m, x: m.where(x > 0, x, 0)),
    ("concatenate", lambda m, x: m.concatenate([x, x])),
    ("transpose", lambda m, x: x.T),
    ("reshape", lambda m, x: x.reshape(7, 6)),
    ("slice", lambda m, x: x[1:, ::2]),
    ("row", lambda m, x: x[0]),
    ("column", lambda m, x: x[:, 2]),
    ("stack", lambda m, x: m.stack([x, x[::-1]], axis=1)),
    ("stack_last", lambda m, x: m.stack([x, x], axis=-1)),
    ("roll", lambda m, x: m.roll(x, 3, axis=1)),
    ("roll_back", lambda m, x: m.roll(x, -8, axis=0)),
    ("reshape_function", lambda m, x: m.reshape(x, (7, -1))),
    ("astype", lambda m, x: x.astype(m.float32)),
    ("matmul", lambda m, x: x @ x.T),
    ("concatenate_axis1", lambda m, x: m.concatenate((x, x[::-1], x), axis=-1)),
    ("stack_views", lambda m, x: m.stack([x.T, x.T[::-1]], axis=2)),
    ("fancy_index", lambda m, x: x[m.asarray([0, 5, 2, 5]), m.asarray([1, 1, 6, -7])]),
    ("fancy_slice", lambda m, x: x[1:, m.asarray([0, 3])]),
    ("fancy_mask", lambda m, x: x[:, m.asarray([True, False] * 3 + [True])]),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
@pytest.mark.parametrize("name,fun", _CASES, ids=[c[0] for c in _CASES])
def test_host_results_equal_numpy_bit_for_bit(name, fun, dtype):
    if dtype == "int32" and name in ("sin", "exp", "tanh", "floor"):
        pytest.skip("a float function: integers are promoted first, covered by float64")
    x = _values(dtype)
    with onp.errstate(all="ignore"):
        want = fun(onp, x)
    for _ in range(2):  # the first call traces, the second replays the trace
        got = fun(np, np.asarray(x))
        assert type(got) is Array and got._dbuf is None, "not computed on the host"
        _same(got, want)


def test_fused_functions_replay_on_the_host_without_compiling():
    x = np.asarray(_values("float64"))
    compiles = np.sin.__wrapped_fused__.compile_count, np.add.__wrapped_fused__.compile_count
    executables = len(dispatch._executables)
    for shape in [(3,), (4, 5), (2, 3, 4), (17,), (1, 1)]:
        y = np.asarray(onp.linspace(-3, 3, int(onp.prod(shape))).reshape(shape))
        _same(np.sin(y), onp.sin(onp.asarray(y)))
        assert uses_host(np.sin, y)
        _same(y * 2.5, onp.asarray(y) * 2.5)
        assert uses_host(np.multiply, y, 2.5)
        _same(np.add(y, y), 2 * onp.asarray(y))
    _same(np.sum(x, axis=1), onp.sum(onp.asarray(x), axis=1))
    assert (
        np.sin.__wrapped_fused__.compile_count,
        np.add.__wrapped_fused__.compile_count,
    ) == compiles
    assert len(dispatch._executables) <= executables  # nothing compiled op by op either


def test_large_calls_run_xla():
    x = onp.linspace(-10, 10, 1 << 20)
    got = np.sin(np.asarray(x))
    assert got._dbuf is not None and not uses_host(np.sin, np.asarray(x))
    onp.testing.assert_allclose(onp.asarray(got), onp.sin(x), rtol=1e-13, atol=1e-15)
    # views are host operations at any size, also of device buffers
    view = np.asarray(x).reshape(1024, 1024).T
    assert view._dbuf is None
    _same(view, x.reshape(1024, 1024).T)


# (id, f(xp, x, y), dtype, whether the host runs it at 2^20 elements): the per-primitive and
# per-dtype limits of `dispatch.host_limit`, measured (docs/eager.md)
LARGE_CASES = [
    ("add", lambda xp, x, y: x + y, "float32", True),
    ("less", lambda xp, x, y: x < y, "float64", True),
    ("max", lambda xp, x, y: xp.max(x), "float32", True),
    ("sin", lambda xp, x, y: xp.sin(x), "float32", False),  # the fast kernel (test_fast_trig)
    ("exp", lambda xp, x, y: xp.exp(x), "float64", True),
    ("log", lambda xp, x, y: xp.log(y), "float32", True),
    ("tanh", lambda xp, x, y: xp.tanh(x), "float64", False),
    ("sin", lambda xp, x, y: xp.sin(x), "float64", False),
    ("sum", lambda xp, x, y: xp.sum(x), "float32", False),
    ("where", lambda xp, x, y: xp.where(x < y, x, y), "float64", False),
]


@pytest.mark.parametrize(
    ("name", "f", "dtype", "host"), LARGE_CASES, ids=[f"{c[0]}-{c[2]}" for c in LARGE_CASES]
)
def test_large_calls_choose_host_or_xla_per_primitive_and_dtype(name, f, dtype, host):
    rng = onp.random.default_rng(1)
    x = rng.standard_normal(1 << 20).astype(dtype)
    y = onp.abs(x[::-1]) + onp.asarray(0.5, dtype)
    got = f(np, np.asarray(x), np.asarray(y))
    want = f(onp, x, y)
    assert (got._dbuf is None) == host
    if host:
        _same(got, want)  # NumPy's own loop: bit for bit
    else:
        rtol = 1e-5 if dtype == "float32" else 1e-13
        onp.testing.assert_allclose(onp.asarray(got), want, rtol=rtol, atol=0)
        assert onp.asarray(got).dtype == onp.asarray(want).dtype


def test_host_values_feed_compiled_programs_and_donation():
    x = onp.arange(12.0).reshape(3, 4)
    y = np.asarray(x) * 2.0  # on the host
    assert y._dbuf is None
    f = mjcore.jit(lambda a: np.cos(a) + 1.0)
    _same(f(y), onp.cos(x * 2.0) + 1.0)
    _same(mjcore.grad(lambda a: np.sum(np.sin(a)))(y), onp.cos(x * 2.0))
    # strided host views (transposed, reversed, stepped, broadcast) go to the device intact
    xa = np.asarray(x)
    views = [(xa.T, x.T), (xa[::-1], x[::-1]), (xa[:, ::2], x[:, ::2])]
    views.append((np.broadcast_to(xa[0], (5, 4)), onp.broadcast_to(x[0], (5, 4))))
    for view, want in views:
        assert view._dbuf is None
        _same(f(view), onp.cos(want) + 1.0)
    z = np.asarray(x) + 1.0
    out = mjcore.jit(lambda a: a * 3.0, donate_argnums=0)(z)
    _same(out, (x + 1.0) * 3.0)
    assert z.is_deleted()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        onp.asarray(z)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.sin(z)


def test_host_results_are_read_only_values():
    a = np.asarray(onp.arange(6.0))
    b = np.exp(a)
    host = onp.asarray(b)
    with pytest.raises(ValueError, match="read-only"):
        host[0] = 1.0
    c = b[1:]  # a view of b's host value
    assert not onp.asarray(c).flags.writeable
    # an mjnp array made from a NumPy array does not follow later writes to it
    x = onp.ones(3)
    y = np.add(np.asarray(x), 1.0)
    x[:] = 5.0
    _same(y, onp.full(3, 2.0))


def test_floating_point_errors_warn_as_numpy():
    # The host rules run under NumPy's error state, so they warn as NumPy (docs/errors.md;
    # tests/test_errstate.py has the table).
    x = np.asarray(onp.array([1000.0, -1000.0, onp.nan]))
    with pytest.warns(RuntimeWarning, match="^overflow encountered in exp$"):
        got = np.exp(x)
    with pytest.warns(RuntimeWarning, match="^invalid value encountered in multiply$"):
        got = got * 0.0  # inf * 0
    with onp.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        np.exp(x) * 0.0  # and nothing under errstate(all='ignore')
    assert got._dbuf is None
    with onp.errstate(all="ignore"):
        _same(got, onp.exp(onp.array([1000.0, -1000.0, onp.nan])) * 0.0)


def test_eager_calls_on_new_shapes_keep_memory_bounded():
    """Every eager call on a new shape used to compile (and keep) executables: memory grew
    without bound. Small calls now compile nothing and every cache is bounded."""
    script = textwrap.dedent(
        """
        import numpy as onp
        import mjnp as np

        def rss_mib():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * 4096 / 2**20

        def calls(n0, n1):
            for n in range(n0, n1):
                x = np.asarray(onp.linspace(-1.0, 1.0, 2 * n).reshape(2, n))
                y = np.sin(x) + x * 2.0
                np.sum(y, axis=0)
                y.T.reshape(-1)[1:]

        calls(1, 300)  # warm: every cache at its bound
        before = rss_mib()
        calls(300, 2300)
        print(rss_mib() - before)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True
    )
    growth = float(proc.stdout.split()[-1])
    assert growth < 40, f"RSS grew by {growth:.0f} MiB over 2,000 calls on new shapes"


def test_view_fast_paths_match_numpy_and_keep_mjnp_errors():
    xn = onp.arange(24.0).reshape(4, 6)
    x = np.asarray(xn)
    for idx in [
        *(0, -1, (1, 2), (slice(None), 2), (Ellipsis, None, 1), (), slice(None, None, -2)),
        *(slice(1, 100), (slice(-2, None), None, Ellipsis), (-4, slice(None, None, 3))),
    ]:
        got = x[idx]
        assert got._dbuf is None  # NumPy's view, no dispatch
        _same(got, xn[idx])
        assert got.weak_type == x.weak_type
    rows, cols = onp.array([3, -1, 0, 2]), onp.array([[5], [0]])
    mask = xn > 10.0
    for idx in [
        (rows,),
        (rows, cols),
        (slice(1, 3), rows[:2]),
        (Ellipsis, rows),
        (mask,),
        (mask[:, 0], slice(None)),
        (None, rows, 1),
    ]:  # NumPy's advanced indexing on the host: a copy
        for entries in (idx, tuple(np.asarray(e) if type(e) is onp.ndarray else e for e in idx)):
            got = x[entries if len(entries) > 1 else entries[0]]
            assert got._dbuf is None
            _same(got, xn[idx if len(idx) > 1 else idx[0]])
    with pytest.raises(IndexError, match="mjnp"):
        x[np.asarray(onp.array([0, 4]))]
    with pytest.raises(IndexError, match="mjnp"):
        x[onp.array([1.0])]
    for bad in (4, -5, (0, 6), (slice(None), slice(None), 0)):  # NumPy raises: mjnp's error
        with pytest.raises(IndexError, match="mjnp"):
            x[bad]
        with pytest.raises(IndexError):
            xn[bad]
    with pytest.raises(ValueError):
        x[::0]
    _same(x.reshape(3, 8), xn.reshape(3, 8))
    _same(x.reshape((2, -1)), xn.reshape((2, -1)))
    _same(x.T, xn.T)
    w = np.asarray(2.0) * x  # weak type kept by views
    assert w.T.weak_type == w.weak_type and w[0].weak_type == w.weak_type
    # what NumPy rejects takes the general path, which raises mjnp's errors
    with pytest.raises(IndexError, match="mjnp"):
        x[4]
    with pytest.raises(ValueError, match="reshape"):
        x.reshape(5, 5)
    # a transformation sees the primitives
    assert "transpose" in str(mjcore.make_jaxpr(lambda a: a.T)(x))
    assert "slice" in str(mjcore.make_jaxpr(lambda a: a[1:])(x))


def test_joins_past_the_host_limit_run_xla():
    # the host fast paths of concatenate and stack keep the primitive's size limit
    x = onp.linspace(-1, 1, 1 << 18).reshape(512, 512)
    for fun in (lambda m, a: m.concatenate([a, a], axis=1), lambda m, a: m.stack([a, a])):
        got = fun(np, np.asarray(x))
        assert got._dbuf is not None
        _same(got, fun(onp, x))


def test_host_casts_warn_as_numpy_and_are_exact():
    # `astype` to a float dtype runs NumPy's cast on the host, with NumPy's overflow warning
    x = onp.array([1e300, -1e300, 1.0, -0.0, onp.nan, 2.0**60 + 1])
    for src, dst in [("float64", "float32"), ("int64", "float32"), ("bool", "float64")]:
        for _ in range(2):
            got = np.asarray(x.astype(src) if src != "int64" else onp.arange(-3, 3) * 2**40)
            want_in = onp.asarray(got)
            with warnings.catch_warnings(record=True) as got_warnings:
                warnings.simplefilter("always")
                got = got.astype(dst)
            with warnings.catch_warnings(record=True) as want_warnings:
                warnings.simplefilter("always")
                want = want_in.astype(dst)
            assert [str(w.message) for w in got_warnings] == [str(w.message) for w in want_warnings]
            assert type(got) is Array and got._dbuf is None
            _same(got, want)
