"""`lax.Precision` and the `precision=`/`preferred_element_type=` keywords of the products,
against JAX (x64): accepted and rejected values, result dtypes and values, under jit, vmap
and grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjcore
import mjnp
from mjcore import lax

jax.config.update("jax_enable_x64", True)

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 5))
V = RNG.standard_normal(4)
I8 = RNG.integers(-100, 100, (3, 4)).astype(np.int8)

GOOD = [
    None,
    "default",
    "high",
    "highest",
    "fastest",
    "float32",
    "tensorfloat32",
    "bfloat16",
    "bfloat16_3x",
    ("high", "highest"),
    ["default", "float32"],
]
BAD = ["medium", 3, ("high",), ("high", "high", "high"), ("high", 2), 1.5]


@pytest.mark.parametrize("name", ["DEFAULT", "HIGH", "HIGHEST"])
def test_precision_enum_matches_jax(name):
    ours, theirs = lax.Precision[name], jax.lax.Precision[name]
    assert ours.value == theirs.value
    assert repr(ours) == repr(theirs) == f"Precision.{name}"
    assert str(ours) == str(theirs) == name
    assert lax.Precision(theirs.value) is ours


@pytest.mark.parametrize("spelling", [s for s in GOOD if isinstance(s, str)])
def test_precision_strings_match_jax(spelling):
    assert lax.Precision(spelling).name == jax.lax.Precision(spelling).name


def test_precision_bad_string_raises_value_error_like_jax():
    with pytest.raises(ValueError):
        jax.lax.Precision("medium")
    with pytest.raises(ValueError):
        lax.Precision("medium")


@pytest.mark.parametrize("precision", GOOD + [lax.Precision.HIGH, (lax.Precision.HIGHEST,) * 2])
def test_lax_dot_accepts_what_jax_accepts(precision):
    jax_precision = precision
    if isinstance(precision, lax.Precision):
        jax_precision = jax.lax.Precision[precision.name]
    elif isinstance(precision, tuple) and isinstance(precision[0], lax.Precision):
        jax_precision = tuple(jax.lax.Precision[p.name] for p in precision)
    want = jax.lax.dot(A, B, precision=jax_precision)
    np.testing.assert_allclose(lax.dot(A, B, precision=precision), want, rtol=1e-14)
    got = lax.dot_general(A, B, (((1,), (0,)), ((), ())), precision=precision)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    np.testing.assert_allclose(mjnp.dot(A, B, precision=precision), want, rtol=1e-14)
    np.testing.assert_allclose(mjnp.matmul(A, B, precision=precision), want, rtol=1e-14)


@pytest.mark.parametrize("precision", BAD, ids=repr)
def test_bad_precision_raises_value_error_like_jax(precision):
    with pytest.raises(ValueError, match="Precision argument must be one of"):
        jax.lax.dot(A, B, precision=precision)
    for call in (
        lambda: lax.dot(A, B, precision=precision),
        lambda: lax.dot_general(A, B, (((1,), (0,)), ((), ())), precision=precision),
        lambda: lax.batch_matmul(A[None], B[None], precision=precision),
        lambda: mjnp.dot(A, B, precision=precision),
        lambda: mjnp.matmul(A, B, precision=precision),
        lambda: mjnp.einsum("ij,jk->ik", A, B, precision=precision),
        lambda: mjnp.inner(A, A, precision=precision),
        lambda: mjnp.vdot(V, V, precision=precision),
        lambda: mjnp.tensordot(A, B, 1, precision=precision),
        lambda: lax.conv_general_dilated(
            np.ones((1, 1, 4)), np.ones((1, 1, 2)), (1,), "VALID", precision=precision
        ),
    ):
        with pytest.raises(ValueError, match="Precision argument must be one of"):
            call()


@pytest.mark.parametrize(
    "shapes",
    [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5))],
    ids=str,
)
def test_lax_dot_shapes_match_jax(shapes):
    x, y = (RNG.standard_normal(s) for s in shapes)
    np.testing.assert_allclose(lax.dot(x, y), jax.lax.dot(x, y), rtol=1e-13)


@pytest.mark.parametrize("shapes", [((2, 3, 4), (4, 5)), ((3, 4), (4, 5, 6)), ((3,), (4,))])
def test_lax_dot_rejects_what_jax_rejects(shapes):
    x, y = (np.ones(s) for s in shapes)
    with pytest.raises(ValueError):
        jax.lax.dot(x, y)
    with pytest.raises(ValueError, match="lax.dot: dimension_numbers must be specified"):
        lax.dot(x, y)


CASES = [
    ("dot", (A, B), {}),
    ("matmul", (A, B), {}),
    ("inner", (A, A), {}),
    ("vdot", (V, V), {}),
    ("tensordot", (A, B), {"axes": 1}),
    ("einsum", ("ij,jk->ik", A, B), {}),
    ("einsum", ("ij,jk,kl->il", A, B, B.T), {}),
    ("dot", (I8, I8.T), {}),
    ("matmul", (I8, I8.T), {}),
    ("einsum", ("ij,kj->ik", I8, I8), {}),
    ("dot", (2.0, A), {}),
]


def _preferred_cases():
    for name, args, kwargs in CASES:
        ints = args[-1].dtype.kind == "i"
        # An integer preferred_element_type is only for integer operands (JAX rejects it).
        for preferred in (np.float32, np.float64) + ((np.int32, np.int64) if ints else ()):
            label = f"{name}-{len(args)}-{args[-1].dtype}-{np.dtype(preferred).name}"
            yield pytest.param(name, args, kwargs, preferred, id=label)


@pytest.mark.parametrize(("name", "args", "kwargs", "preferred"), list(_preferred_cases()))
def test_preferred_element_type_matches_jax(name, args, kwargs, preferred):
    want = getattr(jnp, name)(*args, **kwargs, preferred_element_type=preferred)
    got = getattr(mjnp, name)(*args, **kwargs, preferred_element_type=preferred)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if preferred == np.float32 else 1e-13)
    static = [a for a in args if isinstance(a, str)]
    arrays = [a for a in args if not isinstance(a, str)]
    fun = getattr(mjnp, name)
    jitted = mjcore.jit(lambda *a: fun(*static, *a, **kwargs, preferred_element_type=preferred))
    got = jitted(*arrays)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if preferred == np.float32 else 1e-13)


def test_precision_under_grad_and_vmap_matches_jax():
    def ours(a, b):
        return mjnp.sum(mjnp.tanh(mjnp.matmul(a, b, precision=lax.Precision.HIGHEST)))

    def theirs(a, b):
        return jnp.sum(jnp.tanh(jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)))

    for argnums in (0, 1):
        np.testing.assert_allclose(
            mjcore.grad(ours, argnums)(A, B), jax.grad(theirs, argnums)(A, B), rtol=1e-12
        )
    batched = RNG.standard_normal((2, 3, 4))
    got = mjcore.vmap(lambda a: lax.dot(a, B, precision="high"))(batched)
    want = jax.vmap(lambda a: jax.lax.dot(a, B, precision="high"))(batched)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    got = mjcore.vmap(lambda a: mjnp.einsum("ij,jk->ik", a, B, precision="high"))(batched)
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_conv_accepts_precision_like_jax():
    x, w = RNG.standard_normal((1, 2, 6)), RNG.standard_normal((3, 2, 2))
    for precision in ("highest", lax.Precision.DEFAULT, ("high", "default")):
        got = lax.conv_general_dilated(x, w, (1,), "SAME", precision=precision)
        jp = jax.lax.Precision.DEFAULT if precision is lax.Precision.DEFAULT else precision
        want = jax.lax.conv_general_dilated(x, w, (1,), "SAME", precision=jp)
        np.testing.assert_allclose(got, want, rtol=1e-13)


# --- what reaches XLA ----------------------------------------------------------------------


def _precisions(text: str) -> list[tuple[str, ...]]:
    """Per dot_general of a module's text (ours generic, JAX's pretty-printed), the names of
    its precision config; none given is XLA's DEFAULT for both operands."""
    import re

    names = [
        tuple(re.findall(r"\b(DEFAULT|HIGHEST|HIGH)\b", line))
        for line in text.splitlines()
        if "dot_general" in line
    ]
    return [n or ("DEFAULT", "DEFAULT") for n in names]


@pytest.mark.parametrize(
    "precision, expected",
    [
        (None, [("DEFAULT", "DEFAULT")]),
        ("highest", [("HIGHEST", "HIGHEST")]),
        ("tensorfloat32", [("HIGH", "HIGH")]),
        (("default", "highest"), [("DEFAULT", "HIGHEST")]),
    ],
)
def test_precision_reaches_xla_as_jaxs_does(precision, expected):
    """On GPUs, XLA's default runs float32 products at TF32; `precision=` is what asks for
    more, so it must reach the module (CPU results are the same either way)."""
    a = A.astype(np.float32)
    b = B.astype(np.float32)
    mine = mjcore.jit(lambda x, y: mjnp.matmul(x, y, precision=precision)).lower(a, b)
    theirs = jax.jit(lambda x, y: jnp.matmul(x, y, precision=precision)).lower(a, b)
    assert _precisions(mine.as_text()) == expected
    assert _precisions(theirs.as_text()) == expected


def test_precision_is_kept_by_grad_and_vmap():
    f = lambda x: mjnp.sum(mjnp.dot(x, x.T, precision="highest"))  # noqa: E731
    jaxpr = str(mjcore.make_jaxpr(mjcore.grad(f))(A))
    assert jaxpr.count("dot_general") == 3
    assert jaxpr.count("precision=(Precision.HIGHEST, Precision.HIGHEST)") == 3
    batched = mjcore.make_jaxpr(mjcore.vmap(lambda x: mjnp.vdot(x, x, precision="highest")))
    assert "Precision.HIGHEST" in str(batched(A))
    np.testing.assert_allclose(
        np.asarray(mjcore.grad(f)(A)), np.asarray(jax.grad(lambda x: jnp.sum(x @ x.T))(A))
    )


def test_default_matmul_precision_flag_and_context_manager():
    a = A.astype(np.float32)
    assert mjcore.config.jax_default_matmul_precision is None
    with mjcore.default_matmul_precision("float32"):
        text = mjcore.jit(lambda x: x @ x.T).lower(a).as_text()
        assert _precisions(text) == [("HIGHEST", "HIGHEST")]
        # an explicit precision= wins over the flag, as in JAX
        text = mjcore.jit(lambda x: mjnp.matmul(x, x.T, precision="default")).lower(a).as_text()
        assert _precisions(text) == [("DEFAULT", "DEFAULT")]
    assert mjcore.config.jax_default_matmul_precision is None
    text = mjcore.jit(lambda x: x @ x.T).lower(a).as_text()
    assert _precisions(text) == [("DEFAULT", "DEFAULT")] and "precision_config" not in text
    with pytest.raises(ValueError, match="Precision argument must be one of"):
        mjcore.config.update("jax_default_matmul_precision", "fp8")
    assert mjcore.config.jax_default_matmul_precision is None


def _conv_precisions(text: str) -> list[tuple[str, ...]]:
    import re

    names = [
        tuple(re.findall(r"\b(DEFAULT|HIGHEST|HIGH)\b", line))
        for line in text.splitlines()
        if "convolution" in line and "=" in line
    ]
    return [n or ("DEFAULT", "DEFAULT") for n in names]


@pytest.mark.parametrize("precision", [None, "highest", ("high", "default")])
def test_convolution_precision_reaches_xla_and_is_kept_by_grad(precision):
    x = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 2, 2)).astype(np.float32)
    mine = mjcore.jit(lambda x, w: lax.conv(x, w, (1, 1), "SAME", precision=precision))
    theirs = jax.jit(lambda x, w: jax.lax.conv(x, w, (1, 1), "SAME", precision=precision))
    assert _conv_precisions(mine.lower(x, w).as_text()) == _conv_precisions(
        theirs.lower(x, w).as_text()
    )
    loss = lambda w: mjnp.sum(lax.conv(x, w, (1, 1), "SAME", precision=precision))  # noqa: E731
    jaxpr = str(mjcore.make_jaxpr(mjcore.grad(loss))(w))
    kept = "precision=None" if precision is None else "precision=(Precision.HIGH"
    assert jaxpr.count("conv_general_dilated") == 2 and jaxpr.count(kept) == 2
    want = jax.grad(lambda w: jnp.sum(jax.lax.conv(x, w, (1, 1), "SAME")))(w)
    np.testing.assert_allclose(np.asarray(mjcore.grad(loss)(w)), np.asarray(want), rtol=1e-5)
