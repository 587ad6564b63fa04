"""mjcore.nn.dot_product_attention against JAX's `jax.nn.dot_product_attention` (x64) as the
oracle: values and dtypes for multi-head, grouped-query and multi-query attention with bias,
masks, causal and local windows and sequence lengths, batched and unbatched; the residual;
gradients; jit and vmap; and the errors for bad input."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import numpy as onp
import pytest

import mjcore
import mjcore.nn as nn
import mjnp

jax.config.update("jax_platforms", "cpu")
jax.config.update("jax_enable_x64", True)

# JAX runs the softmax in float32 for every input dtype; ours keeps float64 in float64, so
# the float64 comparison with JAX is at float32's precision (and against NumPy, below, tight).
RTOL = {"float16": 2e-3, "float32": 2e-6, "float64": 2e-6}


class Case(NamedTuple):
    id: str
    q_shape: tuple[int, ...]
    kv_shape: tuple[int, ...]
    kwargs: dict[str, Any]
    bias_shape: tuple[int, ...] | None = None
    mask_shape: tuple[int, ...] | None = None


CASES = [
    Case("mha", (2, 5, 4, 8), (2, 6, 4, 8), {}),
    Case("gqa", (2, 5, 4, 8), (2, 6, 2, 8), {}),
    Case("mqa-scale", (2, 5, 4, 8), (2, 6, 1, 8), {"scale": 0.3}),
    Case("unbatched-causal", (5, 4, 8), (5, 2, 8), {"is_causal": True}),
    Case("window", (2, 6, 2, 4), (2, 6, 2, 4), {"local_window_size": (1, 2)}),
    Case(
        "window-int-causal", (2, 6, 2, 4), (2, 6, 1, 4), {"local_window_size": 1, "is_causal": True}
    ),
    Case("bias-per-head", (2, 5, 4, 8), (2, 6, 2, 8), {}, bias_shape=(2, 4, 5, 6)),
    Case("bias-2d-mask-shared", (2, 5, 4, 8), (2, 6, 2, 8), {}, (5, 6), (2, 1, 5, 6)),
    Case("mask-per-head-bcast", (2, 5, 4, 8), (2, 6, 2, 8), {}, (1, 4, 1, 6), (1, 4, 5, 1)),
    Case(
        "q-kv-seqlen",
        (2, 5, 4, 8),
        (2, 6, 2, 8),
        {"query_seq_lengths": [3, 5], "key_value_seq_lengths": [2, 6]},
    ),
    Case(
        "kv-seqlen-causal-bias",
        (2, 5, 2, 8),
        (2, 5, 2, 8),
        {"key_value_seq_lengths": [4, 1], "is_causal": True},
        (2, 2, 5, 5),
    ),
    Case("fully-masked-rows", (1, 3, 1, 4), (1, 3, 1, 4), {}, None, (1, 1, 3, 3)),
]
CASE_IDS = [c.id for c in CASES]


def _inputs(case: Case, dtype: str, seed: int = 0) -> tuple[list[Any], dict[str, Any]]:
    rng = onp.random.default_rng(seed)
    arrays = [
        rng.normal(size=case.q_shape).astype(dtype),
        rng.normal(size=case.kv_shape).astype(dtype),
        rng.normal(size=case.kv_shape).astype(dtype),
    ]
    kwargs = {
        k: onp.asarray(v, onp.int32) if k.endswith("seq_lengths") else v
        for k, v in case.kwargs.items()
    }
    if case.bias_shape is not None:
        kwargs["bias"] = rng.normal(size=case.bias_shape).astype(dtype)
    if case.mask_shape is not None:
        mask = rng.random(case.mask_shape) > 0.4
        if case.id == "fully-masked-rows":
            mask[..., 1, :] = False
        kwargs["mask"] = mask
    return arrays, kwargs


def _split(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Array keyword arguments (traced under jit) and static ones."""
    arrays = {k: v for k, v in kwargs.items() if isinstance(v, onp.ndarray)}
    return arrays, {k: v for k, v in kwargs.items() if k not in arrays}


def _jax_fn(static: dict[str, Any]) -> Any:
    return jax.jit(lambda q, k, v, kw: jax.nn.dot_product_attention(q, k, v, **kw, **static))


def assert_matches(actual: Any, expected: Any) -> None:
    actual, expected = onp.asarray(actual), onp.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    tol = RTOL[str(actual.dtype)]
    onp.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_values_match_jax_under_jit(case: Case):
    (q, k, v), kwargs = _inputs(case, "float32")
    arrays, static = _split(kwargs)
    mine = mjcore.jit(lambda q, k, v, kw: nn.dot_product_attention(q, k, v, **kw, **static))
    assert_matches(mine(q, k, v, arrays), _jax_fn(static)(q, k, v, arrays))


@pytest.mark.parametrize("dtype", ["float16", "float64"])
@pytest.mark.parametrize("case", [CASES[1], CASES[7], CASES[9]], ids=lambda c: c.id)
def test_values_eagerly_and_dtypes(case: Case, dtype: str):
    (q, k, v), kwargs = _inputs(case, dtype)
    # JAX's float16 logits ask for an F16_F16_F32 dot, which its CPU backend refuses under
    # jit; eagerly it falls back to the default precision.
    expected = jax.nn.dot_product_attention(q, k, v, **kwargs)
    assert_matches(nn.dot_product_attention(q, k, v, **kwargs), expected)


def test_residual_is_the_logsumexp_without_gradient():
    case = CASES[10]
    (q, k, v), kwargs = _inputs(case, "float32")
    arrays, static = _split(kwargs)

    def mine(q):
        out, lse = nn.dot_product_attention(q, k, v, return_residual=True, **kwargs)
        return lse.sum()

    def theirs(q):
        return jax.nn.dot_product_attention(q, k, v, return_residual=True, **kwargs)

    out, lse = nn.dot_product_attention(q, k, v, return_residual=True, **kwargs)
    out_j, lse_j = jax.jit(theirs)(q)
    assert_matches(out, out_j)
    assert_matches(lse, lse_j)
    assert not onp.asarray(mjcore.jit(mjcore.grad(mine))(q)).any()
    # Unbatched: the residual is (T, N).
    _, lse = nn.dot_product_attention(q[0], k[0], v[0], return_residual=True)
    assert lse.shape == (5, 2)


@pytest.mark.parametrize("case", [CASES[1], CASES[3], CASES[8], CASES[10]], ids=lambda c: c.id)
def test_gradients_match_jax(case: Case):
    """Gradients in query, key, value and (when there is one) bias. The float32 softmax limits
    the agreement to float32's precision even for float64 inputs."""
    (q, k, v), kwargs = _inputs(case, "float64")
    arrays, static = _split(kwargs)
    diff = {"bias": arrays.pop("bias")} if "bias" in arrays else {}
    weights = onp.random.default_rng(1).normal(size=q.shape)

    def loss(attention):
        def f(q, k, v, diff, arrays):
            return (attention(q, k, v, **diff, **arrays, **static) * weights).sum()

        return f

    argnums = (0, 1, 2, 3)
    mine = mjcore.jit(mjcore.grad(loss(nn.dot_product_attention), argnums))
    theirs = jax.jit(jax.grad(loss(jax.nn.dot_product_attention), argnums))
    got, expected = mine(q, k, v, diff, arrays), theirs(q, k, v, diff, arrays)
    got, expected = jax.tree.leaves(got), jax.tree.leaves(expected)
    assert len(got) == len(expected) == 3 + len(diff)
    for g, g_jax in zip(got, expected, strict=True):
        onp.testing.assert_allclose(onp.asarray(g), onp.asarray(g_jax), rtol=1e-5, atol=1e-6)


def test_jit_matches_eager_and_vmap_matches_a_loop():
    (q, k, v), kwargs = _inputs(CASES[7], "float32")
    eager = nn.dot_product_attention(q, k, v, **kwargs)
    jitted = mjcore.jit(lambda q, k, v: nn.dot_product_attention(q, k, v, **kwargs))(q, k, v)
    # XLA fuses the whole program under jit, so float32 rounding may differ in the last bit.
    onp.testing.assert_allclose(onp.asarray(jitted), onp.asarray(eager), rtol=2e-6, atol=2e-6)
    # vmap over an extra leading axis of the unbatched form.
    (q, k, v), _ = _inputs(CASES[3], "float32")
    qs = onp.stack([q, 2 * q, -q])
    batched = mjcore.vmap(lambda q: nn.dot_product_attention(q, k, v, is_causal=True))(qs)
    for i in range(3):
        expected = nn.dot_product_attention(qs[i], k, v, is_causal=True)
        onp.testing.assert_allclose(onp.asarray(batched[i]), onp.asarray(expected), rtol=1e-6)


def test_float64_keeps_float64_precision():
    rng = onp.random.default_rng(3)
    q, k, v = (rng.normal(size=(2, 5, 3, 4)) for _ in range(3))
    logits = onp.einsum("btnh,bsnh->bnts", q, k) / onp.sqrt(4.0)
    probs = onp.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    expected = onp.einsum("bnts,bsnh->btnh", probs, v)
    got = nn.dot_product_attention(*(mjnp.asarray(a) for a in (q, k, v)))
    assert got.dtype == onp.float64
    onp.testing.assert_allclose(onp.asarray(got), expected, rtol=1e-12, atol=1e-13)


def test_implementation_option():
    (q, k, v), _ = _inputs(CASES[0], "float32")
    base = onp.asarray(nn.dot_product_attention(q, k, v))
    onp.testing.assert_array_equal(
        onp.asarray(nn.dot_product_attention(q, k, v, implementation="xla")), base
    )
    with pytest.raises(NotImplementedError, match="dot_product_attention: implementation='cudnn'"):
        nn.dot_product_attention(q, k, v, implementation="cudnn")
    with pytest.raises(ValueError, match="unsupported implementation 'tpu'"):
        nn.dot_product_attention(q, k, v, implementation="tpu")


def _qkv(q_shape, k_shape, v_shape=None, dtype="float32"):
    return (onp.ones(q_shape, dtype), onp.ones(k_shape, dtype), onp.ones(v_shape or k_shape, dtype))


ERRORS = [
    (
        lambda: nn.dot_product_attention(*_qkv((2, 5, 4, 8), (2, 6, 4, 8), (2, 6, 4, 7))),
        ValueError,
        r"value must have key's shape and dtype \(2, 6, 4, 8\).*got \(2, 6, 4, 7\)",
    ),
    (
        lambda: nn.dot_product_attention(*_qkv((2, 5, 4, 8), (2, 6, 4, 4))),
        ValueError,
        r"dot_product_attention: query must have shape.*got shape \(2, 5, 4, 8\)",
    ),
    (
        lambda: nn.dot_product_attention(*_qkv((3, 5, 4, 8), (2, 6, 4, 8))),
        ValueError,
        r"key's B = 2",
    ),
    (
        lambda: nn.dot_product_attention(*_qkv((2, 5, 3, 8), (2, 6, 2, 8))),
        ValueError,
        "multiple of the key/value heads, got 3 vs 2",
    ),
    (
        lambda: nn.dot_product_attention(*_qkv((1, 2, 5, 4, 8), (1, 2, 6, 4, 8))),
        ValueError,
        r"query must have at most 4 dimensions, got shape \(1, 2, 5, 4, 8\)",
    ),
    (
        lambda: nn.dot_product_attention(
            onp.ones((2, 5, 4, 8), "float32"), *_qkv((1,), (2, 6, 4, 8), dtype="float64")[1:]
        ),
        ValueError,
        "key's dtype float64",
    ),
    (
        lambda: nn.dot_product_attention(
            *_qkv((2, 5, 4, 8), (2, 6, 4, 8)), bias=onp.ones((2, 3, 5, 6))
        ),
        ValueError,
        r"bias of shape \(2, 3, 5, 6\) does not broadcast to .*\(2, 4, 5, 6\)",
    ),
    (
        lambda: nn.dot_product_attention(*_qkv((2, 5, 4, 8), (2, 6, 4, 8)), mask=onp.ones((5, 6))),
        ValueError,
        "mask must have dtype bool, got float64",
    ),
    (
        lambda: nn.dot_product_attention(
            *_qkv((2, 5, 4, 8), (2, 6, 4, 8)), mask=onp.ones((5, 5), bool)
        ),
        ValueError,
        r"mask of shape \(1, 1, 5, 5\) does not broadcast",
    ),
    (
        lambda: nn.dot_product_attention(
            *_qkv((2, 5, 4, 8), (2, 6, 4, 8)), query_seq_lengths=onp.array([1, 2, 3])
        ),
        ValueError,
        r"query_seq_lengths must have shape \(B,\) = \(2,\), got shape \(3,\)",
    ),
    (
        lambda: nn.dot_product_attention(
            *_qkv((2, 5, 4, 8), (2, 6, 4, 8)), key_value_seq_lengths=onp.array([1.0, 2.0])
        ),
        ValueError,
        "key_value_seq_lengths must have an integer dtype, got float64",
    ),
    (
        lambda: nn.dot_product_attention(*_qkv((2, 5, 4, 8), (2, 6, 4, 8)), local_window_size="x"),
        TypeError,
        "local_window_size must be an int or a pair of ints",
    ),
    (
        lambda: nn.dot_product_attention(*_qkv((2, 5, 4, 8), (2, 6, 4, 8), dtype="int32")),
        TypeError,
        "requires floating-point inputs, got int32",
    ),
    (
        lambda: nn.dot_product_attention([[[1.0]]], *_qkv((1,), (1, 1, 1))[1:]),
        TypeError,
        "dot_product_attention: expected an array",
    ),
]


@pytest.mark.parametrize("call,exc,match", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors_name_the_function_and_shapes(call: Any, exc: type, match: str):
    with pytest.raises(exc, match=match):
        call()
    with pytest.raises(exc, match="mjcore.nn.dot_product_attention"):
        call()
