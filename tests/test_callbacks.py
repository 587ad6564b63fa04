"""Host callbacks: `pure_callback`, `debug.callback` and `debug.print`, eagerly, under `jit` and
under every transformation, with JAX (x64) as the oracle for values and for what is printed."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mjcore
import mjnp

jax.config.update("jax_enable_x64", True)

X = onp.arange(3.0)
SDS = mjcore.ShapeDtypeStruct((3,), onp.float64)
JSDS = jax.ShapeDtypeStruct((3,), onp.float64)


def _close(a: Any, b: Any) -> None:
    onp.testing.assert_allclose(onp.asarray(a), onp.asarray(b), rtol=1e-12, atol=1e-14)


# --- pure_callback: values ------------------------------------------------------------------


def _pure_programs(core: Any, np_: Any, sds: Any) -> dict[str, Any]:
    """The same programs in mjcore (core=mjcore, np_=mjnp) and in JAX."""
    s0 = type(sds)((), onp.float64)
    return {
        "sin": lambda x: core.pure_callback(onp.sin, sds, x),
        "kwargs": lambda x: core.pure_callback(lambda a, b: a * b, sds, x, b=2.0),
        "pytree": lambda x: core.pure_callback(
            lambda d: (d["a"] + 1, d["a"].sum()), (sds, s0), {"a": x}
        ),
        "in_program": lambda x: np_.cos(core.pure_callback(onp.exp, sds, np_.sin(x))) * 2,
        "scalar_result": lambda x: core.pure_callback(lambda a: a.sum(), s0, x),
    }


@pytest.mark.parametrize("name", sorted(_pure_programs(mjcore, mjnp, SDS)))
@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_pure_callback_values(name: str, jitted: bool) -> None:
    f = _pure_programs(mjcore, mjnp, SDS)[name]
    g = _pure_programs(jax, jnp, JSDS)[name]
    if jitted:
        f, g = mjcore.jit(f), jax.jit(g)
    ours, theirs = f(mjnp.asarray(X)), g(X)
    for a, b in zip(
        jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs), strict=True
    ):
        assert type(a) is mjcore.Array
        _close(a, b)


def test_pure_callback_receives_numpy() -> None:
    seen = []

    def cb(x):
        seen.append(type(x))
        return x

    mjcore.pure_callback(cb, SDS, mjnp.asarray(X))
    mjcore.jit(lambda x: mjcore.pure_callback(cb, SDS, x))(X)
    assert seen == [onp.ndarray, onp.ndarray]


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda x: x[:2], r"pure_callback: result 0 .* float64\[2\].* float64\[3\]"),
        (lambda x: x.astype(onp.float32), r"pure_callback: result 0 .* float32\[3\].* float64"),
        (lambda x: (x, x), r"pure_callback: .*structure"),
    ],
    ids=["shape", "dtype", "structure"],
)
def test_pure_callback_wrong_result(jitted: bool, bad: Any, match: str) -> None:
    f = lambda x: mjcore.pure_callback(bad, SDS, x)  # noqa: E731
    with pytest.raises(RuntimeError, match=match):
        (mjcore.jit(f) if jitted else f)(mjnp.asarray(X))


def test_pure_callback_bad_vmap_method() -> None:
    with pytest.raises(ValueError, match="vmap_method"):
        mjcore.pure_callback(onp.sin, SDS, X, vmap_method="bogus")


def test_pure_callback_make_jaxpr() -> None:
    jaxpr = mjcore.make_jaxpr(lambda x: mjcore.pure_callback(onp.sin, SDS, x))(X)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["pure_callback"]
    assert "pure_callback" in str(jaxpr)
    mjcore.typecheck_jaxpr(jaxpr.jaxpr)


# --- pure_callback: vmap --------------------------------------------------------------------


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize(
    "method, calls, shapes",
    [
        ("sequential", 4, [((3,), (3,))] * 4),
        ("sequential_unrolled", 4, [((3,), (3,))] * 4),
        ("expand_dims", 1, [((4, 3), (1, 3))]),
        ("broadcast_all", 1, [((4, 3), (4, 3))]),
    ],
)
def test_pure_callback_vmap(jitted: bool, method: str, calls: int, shapes: list) -> None:
    seen: list[tuple[tuple[int, ...], tuple[int, ...]]] = []

    def cb(a, b):
        seen.append((a.shape, b.shape))
        return a * 2 + b

    xs = onp.arange(12.0).reshape(3, 4)  # batched along axis 1
    f = mjcore.vmap(
        lambda x, y: mjcore.pure_callback(cb, SDS, x, y, vmap_method=method), in_axes=(1, None)
    )
    out = (mjcore.jit(f) if jitted else f)(xs, X)
    _close(out, onp.stack([cb(xs[:, i], X) for i in range(4)]))
    assert seen[:calls] == shapes and len(seen) == calls + 4


def test_pure_callback_vmap_nested_and_empty() -> None:
    xs = onp.arange(12.0).reshape(2, 2, 3)
    f = lambda x: mjcore.pure_callback(onp.sin, SDS, x, vmap_method="sequential")  # noqa: E731
    _close(mjcore.vmap(mjcore.vmap(f))(xs), onp.sin(xs))
    assert mjcore.vmap(f)(onp.zeros((0, 3))).shape == (0, 3)


def test_pure_callback_vmap_needs_method() -> None:
    with pytest.raises(NotImplementedError, match="vmap_method"):
        mjcore.vmap(lambda x: mjcore.pure_callback(onp.sin, SDS, x))(onp.ones((2, 3)))


# --- pure_callback: derivatives -------------------------------------------------------------


@pytest.mark.parametrize(
    "transform",
    [
        lambda f: mjcore.grad(lambda x: f(x).sum())(mjnp.asarray(X)),
        lambda f: mjcore.jvp(f, (X,), (X,)),
        lambda f: mjcore.jit(mjcore.grad(lambda x: f(x).sum()))(X),
    ],
    ids=["grad", "jvp", "jit_grad"],
)
def test_pure_callback_no_derivatives(transform: Any) -> None:
    f = lambda x: mjcore.pure_callback(onp.sin, SDS, x)  # noqa: E731
    with pytest.raises(ValueError, match="pure_callback.*custom_jvp"):
        transform(f)


def _sin_cb(core: Any) -> Any:
    @core.custom_jvp
    def sin(x):
        return core.pure_callback(onp.sin, x, x, vmap_method="expand_dims")

    @sin.defjvp
    def sin_jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        return sin(x), core.pure_callback(onp.cos, x, x, vmap_method="expand_dims") * x_dot

    return sin


@pytest.mark.parametrize(
    "transform",
    [
        lambda core, f: core.grad(lambda x: f(x).sum()),
        lambda core, f: core.jit(core.grad(lambda x: (f(x) ** 2).sum())),
        lambda core, f: core.vmap(core.grad(f)),
        lambda core, f: core.jacfwd(f),
    ],
    ids=["grad", "jit_grad", "vmap_grad", "jacfwd"],
)
def test_pure_callback_in_custom_jvp(transform: Any) -> None:
    ours = transform(mjcore, _sin_cb(mjcore))(X)
    _close(ours, transform(jax, _sin_cb(jax))(X))


# --- which callback runs --------------------------------------------------------------------


def test_same_structure_different_callbacks() -> None:
    calls: list[str] = []

    def make(tag: str, k: float) -> Any:
        def cb(a):
            calls.append(tag)
            return a + k

        return mjcore.jit(lambda x: mjcore.pure_callback(cb, SDS, x))

    f, g = make("f", 1.0), make("g", 2.0)
    _close(f(X), X + 1)
    _close(g(X), X + 2)
    assert calls == ["f", "g"]
    # Eager control flow caches compiled programs by their text: the callbacks tell them apart.
    body = lambda tag, k: lambda c, _: (make(tag, k)(c), None)  # noqa: E731
    out1 = mjcore.lax.scan(body("s1", 1.0), mjnp.asarray(X), None, length=2)[0]
    out2 = mjcore.lax.scan(body("s2", 10.0), mjnp.asarray(X), None, length=2)[0]
    _close(out1, X + 2)
    _close(out2, X + 20)
    assert calls[2:] == ["s1", "s1", "s2", "s2"]


def test_callback_error_under_jit_is_the_callbacks() -> None:
    def bad(x):
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        mjcore.jit(lambda x: (mjcore.debug.callback(bad, x), x * 2)[1])(X)
    # Later programs are not blamed for it.
    _close(mjcore.jit(lambda x: mjcore.pure_callback(onp.sin, SDS, x))(X), onp.sin(X))


def test_callbacks_on_jit_fast_paths() -> None:
    # Repeat calls take jit's cached fast paths (one or several outputs); each call still runs
    # the callback once and raises the callback's own error.
    calls: list[int] = []

    def fail(x):
        calls.append(1)
        raise KeyError("boom")

    one = mjcore.jit(lambda x: mjcore.pure_callback(fail, SDS, x))
    two = mjcore.jit(lambda x: (mjcore.pure_callback(fail, SDS, x), x))
    for f in (one, two, one, two):
        with pytest.raises(KeyError, match="boom"):
            f(mjnp.asarray(X))
    assert len(calls) == 4
    seen: list[Any] = []
    grad_f = mjcore.grad(lambda x: (mjcore.debug.callback(seen.append, x), mjnp.sum(x * x))[1])
    for _ in range(3):
        _close(grad_f(mjnp.asarray(X)), 2 * X)
    assert len(seen) == 3


# --- debug.print and debug.callback: what is printed, vs JAX ----------------------------------


def _show(core: Any, np_: Any) -> Any:
    def f(x):
        core.debug.print("x={x} y={}", x * 2, x=x)
        return np_.sin(x)

    return f


class PrintCase(NamedTuple):
    name: str
    run: Any  # run(core, np_, f, x): one program that prints
    ordered: bool = True  # JAX prints in a fixed order (else compare sorted lines)


def _cond(core, np_, f, x):
    g = core.jit(lambda x: core.lax.cond(x[0] > 0, f, lambda x: x, x))
    g(x)
    g(x + 1)


PRINT_CASES = [
    PrintCase("eager", lambda core, np_, f, x: f(x)),
    PrintCase("jit_twice", lambda core, np_, f, x: [core.jit(f)(x + i) for i in range(2)]),
    PrintCase("vmap", lambda core, np_, f, x: core.vmap(f)(x.reshape(3, 1))),
    PrintCase("vmap_axis1", lambda core, np_, f, x: core.vmap(f, in_axes=1)(x.reshape(1, 3))),
    PrintCase("jit_vmap", lambda core, np_, f, x: core.jit(core.vmap(f))(x), ordered=False),
    PrintCase("jvp", lambda core, np_, f, x: core.jvp(f, (x,), (x,))),
    PrintCase("grad", lambda core, np_, f, x: core.grad(lambda x: f(x).sum())(x)),
    PrintCase("jit_grad", lambda core, np_, f, x: core.jit(core.grad(lambda x: f(x).sum()))(x)),
    PrintCase("grad_jit", lambda core, np_, f, x: core.grad(lambda x: core.jit(f)(x).sum())(x)),
    PrintCase(
        "grad_checkpoint",
        lambda core, np_, f, x: core.grad(lambda x: core.checkpoint(f)(x).sum())(x),
    ),
    PrintCase(
        "grad_checkpoint_jit",
        lambda core, np_, f, x: core.grad(lambda x: core.checkpoint(core.jit(f))(x).sum())(x),
    ),
    PrintCase("linearize", lambda core, np_, f, x: core.linearize(f, x)[1](x)),
    PrintCase("vjp", lambda core, np_, f, x: core.vjp(f, x)[1](x)),
    PrintCase(
        "jit_scan",
        lambda core, np_, f, x: core.jit(
            lambda x: core.lax.scan(lambda c, _: (f(c), None), x, None, length=2)
        )(x),
    ),
    PrintCase(
        "eager_scan",
        lambda core, np_, f, x: core.lax.scan(lambda c, _: (f(c), None), x, None, length=2),
    ),
    PrintCase("jit_cond", _cond),
    PrintCase(
        "jit_fori",
        lambda core, np_, f, x: core.jit(lambda x: core.lax.fori_loop(0, 2, lambda i, c: f(c), x))(
            x
        ),
    ),
    PrintCase(
        "grad_scan",
        lambda core, np_, f, x: core.grad(
            lambda x: core.lax.scan(lambda c, _: (f(c), None), x, None, length=2)[0].sum()
        )(x),
    ),
    PrintCase(
        "vmap_while",
        lambda core, np_, f, x: core.vmap(
            lambda v: core.lax.while_loop(
                lambda c: c < 2, lambda c: (core.debug.print("w={}", c), c + 1)[1], v
            )
        )(np_.array([0, 1])),
        ordered=False,
    ),
    PrintCase(
        "vmap_cond_batched_predicate",
        lambda core, np_, f, x: core.vmap(
            lambda v: core.lax.cond(
                v > 0,
                lambda v: (core.debug.print("T{}", v), v)[1],
                lambda v: (core.debug.print("F{}", v), v)[1],
                v,
            )
        )(x),
        ordered=False,
    ),
    PrintCase(
        "scalars_and_no_args",
        lambda core, np_, f, x: core.jit(
            lambda i: [core.debug.print("hi"), core.debug.print("{} {} {i}", 1.5, x[1], i=i)]
        )(3),
        ordered=False,
    ),
    PrintCase(
        "debug_callback_vmap",
        lambda core, np_, f, x: core.vmap(
            lambda v, w: core.debug.callback(lambda a, b=None: print("cb", a, b), v, b=w),
            in_axes=(0, None),
        )(x, 7),
    ),
]


@pytest.mark.parametrize("case", PRINT_CASES, ids=[c.name for c in PRINT_CASES])
def test_debug_print_like_jax(case: PrintCase, capsys: pytest.CaptureFixture[str]) -> None:
    case.run(mjcore, mjnp, _show(mjcore, mjnp), mjnp.asarray(X))
    ours = capsys.readouterr().out.splitlines()
    case.run(jax, jnp, _show(jax, jnp), jnp.asarray(X))
    jax.effects_barrier()
    theirs = capsys.readouterr().out.splitlines()
    assert ours, "nothing was printed"
    if case.ordered:
        assert ours == theirs
    else:
        assert sorted(ours) == sorted(theirs)


def test_debug_print_runs_each_call_not_at_trace(capsys: pytest.CaptureFixture[str]) -> None:
    f = mjcore.jit(lambda x: (mjcore.debug.print("v={}", x), x + 1)[1])
    for i in range(3):
        f(float(i))
    assert capsys.readouterr().out.splitlines() == ["v=0.0", "v=1.0", "v=2.0"]
    assert f.trace_count == 1


def test_debug_print_survives_dce(capsys: pytest.CaptureFixture[str]) -> None:
    # Nothing reads the print's (absent) results, and under grad the forward jaxpr is
    # dead-code eliminated: the print must stay, once.
    f = mjcore.jit(lambda x: (mjcore.debug.print("seen {}", x), mjnp.sin(x))[1])
    mjcore.grad(lambda x: mjcore.jit(f)(x) * 2)(0.5)
    mjcore.jit(mjcore.value_and_grad(lambda x: mjcore.jit(f)(x)))(0.25)
    assert capsys.readouterr().out.splitlines() == ["seen 0.5", "seen 0.25"]


def test_debug_callback_returns_none_and_copies() -> None:
    kept: list[onp.ndarray] = []
    out = mjcore.jit(lambda x: mjcore.debug.callback(kept.append, x))(X)
    assert out is None
    mjcore.jit(lambda x: mjcore.debug.callback(kept.append, x * 0))(X)
    _close(kept[0], X)  # the value outlives the program's buffers
    _close(kept[1], 0 * X)


def test_debug_callback_make_jaxpr() -> None:
    jaxpr = mjcore.make_jaxpr(lambda x: mjcore.debug.print("{}", x))(X)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["debug_callback"]
    assert jaxpr.jaxpr.outs == []


def test_debug_is_lazy_attribute() -> None:
    import mjcore.debug

    assert mjcore.debug.print is mjcore.__getattr__("debug").print
    assert "debug" in mjcore.__all__ and "pure_callback" in mjcore.__all__
