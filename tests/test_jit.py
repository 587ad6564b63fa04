"""jit: caching and retracing, composition with jvp/vmap, constants, AOT lowering, errors,
thread safety."""

from __future__ import annotations

import threading

import numpy as onp
import pytest

import mjcore
from mjcore import jit, jvp, lax, make_jaxpr, vmap

F32 = onp.float32


def _x(*shape, dtype=onp.float64):
    return mjcore.device_put(onp.arange(onp.prod(shape), dtype=dtype).reshape(shape) + 1)


# --- caching and retracing ------------------------------------------------------------------


def test_retrace_counting_shapes_dtypes_and_weak_types():
    f = jit(lambda x, y: lax.mul(x, y))
    f(_x(3), _x(3))
    f(_x(3), _x(3))
    assert (f.trace_count, f.compile_count) == (1, 1)
    f(_x(4), _x(4))  # new shape
    assert f.trace_count == 2
    f(_x(4, dtype=F32), _x(4, dtype=F32))  # new dtype
    assert f.trace_count == 3
    f(2.0, 3.0)  # weak scalars
    f(onp.float64(2.0), onp.float64(3.0))  # strong scalars: a different signature
    assert f.trace_count == 5
    f(5.0, 7.0)
    assert f.trace_count == 5


def test_static_argnums_and_argnames_retrace_per_value():
    def power(x, n):
        out = x
        for _ in range(n - 1):  # Python control flow on a static value
            out = lax.mul(out, x)
        return out

    f = jit(power, static_argnums=1)
    assert float(f(2.0, 3)) == 8.0
    assert float(f(3.0, 3)) == 27.0
    assert f.trace_count == 1
    assert float(f(2.0, 4)) == 16.0
    assert f.trace_count == 2
    g = jit(power, static_argnames="n")
    assert float(g(2.0, n=5)) == 32.0
    assert float(g(2.0, 5)) == 32.0


def test_non_hashable_static_argument_is_jaxs_value_error():
    f = jit(lambda x, shape: lax.reshape(x, shape), static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments.*list.*tuple"):
        f(_x(6), [2, 3])
    assert f(_x(6), (2, 3)).shape == (2, 3)


def test_cache_is_bounded_lru():
    f = jit(lambda x: lax.neg(x), cache_size=2)
    for n in (1, 2, 3):
        f(_x(n))
    assert f.cache_size() == 2
    f(_x(3))  # still cached
    assert f.trace_count == 3
    f(_x(1))  # evicted earlier: retrace
    assert f.trace_count == 4


def test_array_only_fast_path_matches_by_signature_not_by_array_avals_alone():
    # The all-Array call path is keyed by the arguments' avals; calls that mix in scalars,
    # pytrees or more arguments with the same Array avals must not reuse its entry.
    f = jit(lambda *args: lax.add(*args) if len(args) > 1 else lax.neg(args[0]))
    x = _x(3)
    onp.testing.assert_array_equal(onp.asarray(f(x)), -onp.asarray(x))
    onp.testing.assert_array_equal(onp.asarray(f(x)), -onp.asarray(x))
    onp.testing.assert_array_equal(onp.asarray(f(x, 2.0)), onp.asarray(x) + 2.0)
    onp.testing.assert_array_equal(onp.asarray(f(x, x)), 2 * onp.asarray(x))
    g = jit(lambda t: lax.mul(t[0], t[1]))
    onp.testing.assert_array_equal(onp.asarray(g((x, x))), onp.asarray(x) ** 2)
    assert (f.trace_count, g.trace_count) == (3, 1)
    # Under a transformation the cached entry is bound, not executed directly.
    y, y_dot = jvp(f, (x,), (_x(3),))
    onp.testing.assert_array_equal(onp.asarray(y_dot), -onp.asarray(_x(3)))
    # Multiple outputs come back as the function's pytree.
    h = jit(lambda a, b: {"s": lax.add(a, b), "d": (lax.sub(a, b), b)})
    for _ in range(2):
        out = h(x, x)
        assert sorted(out) == ["d", "s"] and isinstance(out["d"], tuple)
        onp.testing.assert_array_equal(onp.asarray(out["d"][0]), onp.zeros(3))


def test_outputs_are_device_arrays_and_pytrees():
    f = jit(lambda d: {"s": lax.add(d["a"], d["b"]), "t": (d["a"],)})
    out = f({"a": _x(2), "b": _x(2)})
    assert isinstance(out["s"], mjcore.Array)
    assert isinstance(out["t"][0], mjcore.Array)
    onp.testing.assert_array_equal(out["s"], [2.0, 4.0])


# --- composition ----------------------------------------------------------------------------


def test_jit_of_jit_is_an_inner_call_not_a_retrace():
    inner = jit(lambda x: lax.mul(x, 2.0))
    outer = jit(lambda x: lax.add(inner(x), 1.0))
    outer(_x(3))
    outer(_x(3))
    assert inner.trace_count == 1 and outer.trace_count == 1
    jaxpr = make_jaxpr(outer)(_x(3))
    assert str(jaxpr).count("pjit[") == 2
    onp.testing.assert_array_equal(outer(_x(3)), [3.0, 5.0, 7.0])


def test_make_jaxpr_of_jit_shows_the_call():
    def inner(x):
        return lax.add(x, 1.0)

    jaxpr = make_jaxpr(jit(inner))(_x(3))
    assert str(jaxpr) == (
        "{ lambda ; a:f64[3]. let\n"
        "    b:f64[3] = pjit[\n"
        "      jaxpr={ lambda ; c:f64[3]. let d:f64[3] = add c 1.0 in (d,) }\n"
        "      name=inner\n"
        "    ] a\n"
        "  in (b,) }"
    )


def _sin_like(x):
    return lax.add(lax.mul(lax.mul(x, x), x), lax.neg(x))


@pytest.mark.parametrize(
    "order",
    ["jit(jvp)", "jvp(jit)", "jit(vmap)", "vmap(jit)", "vmap(jvp(jit))", "jit(vmap(jvp))"],
)
def test_jvp_vmap_jit_in_all_orders(order):
    xs = onp.linspace(-1, 1, 6).reshape(3, 2)
    ts = onp.ones_like(xs)

    def jvp_of(f):
        return lambda x, t: jvp(f, (x,), (t,))[1]

    expected = 3 * xs**2 - 1
    fn = {
        "jit(jvp)": jit(jvp_of(_sin_like)),
        "jvp(jit)": jvp_of(jit(_sin_like)),
        "jit(vmap)": lambda x, t: jit(vmap(jvp_of(_sin_like)))(x, t),
        "vmap(jit)": vmap(jit(jvp_of(_sin_like))),
        "vmap(jvp(jit))": vmap(jvp_of(jit(_sin_like))),
        "jit(vmap(jvp))": jit(vmap(jvp_of(_sin_like))),
    }[order]
    onp.testing.assert_allclose(fn(xs, ts), expected, rtol=1e-14)


def test_jvp_and_vmap_of_jit_reuse_the_jaxpr():
    f = jit(_sin_like)
    for _ in range(3):
        jvp(f, (2.0,), (1.0,))
        vmap(f)(onp.arange(3.0))
    assert f.trace_count == 2  # one per signature (scalar, vector), none per transformation


def test_symbolic_zero_tangents_through_jit():
    f = jit(lambda x, y: lax.add(lax.mul(x, x), y))
    y, y_dot = jvp(lambda x: f(x, 3.0), (2.0,), (1.0,))
    assert (float(y), float(y_dot)) == (7.0, 4.0)


# --- constants ------------------------------------------------------------------------------


def test_large_constants_are_arguments_not_literals():
    big = onp.arange(1000.0)
    f = jit(lambda x: lax.add(x, big))
    text = f.lower(_x(1000)).as_text()
    assert 'dense<"0x' not in text and text.count("tensor<1000xf64>") >= 3
    assert "@main(%arg0_0: tensor<1000xf64>, %arg0_1: tensor<1000xf64>)" in text
    onp.testing.assert_array_equal(f(_x(1000)), big + onp.arange(1000.0) + 1)


def test_scalar_constants_are_literals():
    f = jit(lambda x: lax.mul(x, 2.5))
    text = f.lower(_x(3)).as_text()
    assert "stablehlo.constant" in text
    assert "@main(%arg0_0: tensor<3xf64>)" in text


def test_lower_and_compile():
    f = jit(lambda x: lax.add(x, x))
    lowered = f.lower(_x(2))
    assert "stablehlo.add" in lowered.as_text()
    compiled = lowered.compile()
    assert "stablehlo.add" in compiled.as_text()
    onp.testing.assert_array_equal(compiled(_x(2)), [2.0, 4.0])
    assert f.compile_count == 1


# --- errors ---------------------------------------------------------------------------------


def test_python_if_on_traced_value_names_the_argument():
    def f(x, threshold):
        if lax.gt(x, threshold):
            return x
        return lax.neg(x)

    with pytest.raises(mjcore.ConcretizationTypeError, match="argument 'x'") as info:
        jit(f)(1.0, 0.5)
    message = str(info.value)
    assert "static_argnums" in message and "mjcore.cond" in message
    assert isinstance(info.value, TypeError)


def test_float_of_tracer_under_jit():
    with pytest.raises(mjcore.ConcretizationTypeError, match=r"float\(\).*f64\[\]"):
        jit(lambda x: float(x))(1.0)


def test_numpy_conversion_of_tracer():
    with pytest.raises(mjcore.TracerArrayConversionError, match="mjnp"):
        jit(lambda x: onp.asarray(x))(_x(3))


def test_leaked_tracer_is_detected():
    leaked = []

    @jit
    def f(x):
        leaked.append(x)
        return x

    f(_x(2))
    with pytest.raises(mjcore.UnexpectedTracerError, match="jit\\(f\\)"):
        jit(lambda y: lax.add(y, leaked[0]))(_x(2))


def test_non_array_argument_suggests_static():
    with pytest.raises(TypeError, match="static_argnums"):
        jit(lambda x, s: x)(1.0, "hello")


def test_non_array_output():
    with pytest.raises(TypeError, match="returned a str"):
        jit(lambda x: "hello")(1.0)


# --- threads --------------------------------------------------------------------------------


def test_threads_get_correct_results_and_compile_once():
    f = jit(lambda x, y: lax.add(lax.mul(x, x), y))
    results: dict[int, onp.ndarray] = {}
    barrier = threading.Barrier(8)

    def worker(i):
        barrier.wait()
        results[i] = onp.asarray(f(_x(100), float(i)))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    base = onp.arange(100.0) + 1
    for i in range(8):
        onp.testing.assert_array_equal(results[i], base * base + i)
    assert f.trace_count == 1 and f.compile_count == 1


def test_tracing_in_one_thread_leaves_the_others_eager():
    from mjcore.array import Array

    inside, release = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def traced(x):
        inside.set()
        assert release.wait(10)
        return lax.mul(x, 2.0)

    worker = threading.Thread(target=lambda: seen.setdefault("out", jit(traced)(_x(3))))
    worker.start()
    assert inside.wait(10)
    # The worker is inside a trace: this thread still runs primitives and jitted calls eagerly.
    assert mjcore.core._state.eager
    eager = lax.sin(_x(3))
    assert type(eager) is Array
    onp.testing.assert_array_equal(onp.asarray(jit(lax.neg)(_x(3))), -onp.arange(1.0, 4.0))
    release.set()
    worker.join()
    onp.testing.assert_array_equal(onp.asarray(seen["out"]), 2 * onp.arange(1.0, 4.0))


def test_eager_again_after_a_transformation_raises():
    def boom(x):
        raise ValueError("inside")

    for transform in (jit, mjcore.grad, vmap, make_jaxpr):
        with pytest.raises(ValueError, match="inside"):
            transform(boom)(_x(3) if transform is not mjcore.grad else 1.0)
        assert mjcore.core._state.eager, transform
    with pytest.raises(ValueError, match="inside"):
        jvp(lambda x: jit(boom)(x), (_x(3),), (_x(3),))
    assert mjcore.core._state.eager
    assert type(lax.add(_x(3), 1.0)) is mjcore.array.Array
