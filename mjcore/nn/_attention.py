"""Scaled dot-product attention, as JAX's `nn.dot_product_attention` with its XLA
implementation: two `dot_general`s around a masked softmax, for multi-head, grouped-query and
multi-query attention.

The query heads are split into `K` groups of `G = N // K` heads that share one key/value head,
and both contractions batch over (batch, group); JAX vmaps its core over `G` instead, which is
the same computation.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import mjnp
from mjcore import dtypes, lax
from mjcore.array import Array
from mjcore.nn._arrays import asarray
from mjcore.nn._normalization import logsumexp, softmax

ArrayLike = Any
_FNAME = "mjcore.nn.dot_product_attention"
_FLOAT32 = np.dtype("float32")


def _ensure_4d(name: str, x: ArrayLike) -> Array:
    """`x` with leading axes of size 1 added up to 4-d, as JAX takes unbatched inputs."""
    x = asarray("dot_product_attention", x)
    if x.ndim > 4:
        raise ValueError(f"{_FNAME}: {name} must have at most 4 dimensions, got shape {x.shape}")
    return lax.expand_dims(x, tuple(range(4 - x.ndim))) if x.ndim < 4 else x


def _check_seq_lengths(name: str, lengths: ArrayLike | None, batch: int) -> Array | None:
    if lengths is None:
        return None
    lengths = asarray("dot_product_attention", lengths)
    # NB: JAX requires int32; any integer dtype is accepted here, since this project's default
    # integer is int64.
    if lengths.dtype.kind not in "iu":
        raise ValueError(f"{_FNAME}: {name} must have an integer dtype, got {lengths.dtype}")
    if lengths.shape != (batch,):
        raise ValueError(
            f"{_FNAME}: {name} must have shape (B,) = ({batch},), got shape {lengths.shape}"
        )
    return lengths


def _check_logits_operand(name: str, x: Array, batch: int, heads: int, t: int, s: int) -> None:
    """`x` (a 4-d bias or mask) must broadcast to the logits' `(B, N, T, S)`, with 1 or `N`
    heads (a head axis of size 1 is shared by every query head)."""
    expected = (batch, heads, t, s)
    if any(d not in (1, e) for d, e in zip(x.shape, expected, strict=True)):
        raise ValueError(
            f"{_FNAME}: {name} of shape {x.shape} does not broadcast to the logits' shape "
            f"(B, N, T, S) = {expected}"
        )


def _window(local_window_size: int | tuple[int, int] | None) -> tuple[int, int] | None:
    if local_window_size is None:
        return None
    items = (
        (local_window_size, local_window_size)
        if not isinstance(local_window_size, tuple | list)
        else tuple(local_window_size)
    )
    try:
        left, right = (operator.index(w) for w in items)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"{_FNAME}: local_window_size must be an int or a pair of ints, got "
            f"{local_window_size!r}"
        ) from err
    return left, right


def _grouped(x: Array | None, k: int, g: int) -> Array | None:
    """A `(B, N, T, S)` bias or mask as `(B, K, G, T, S)`, or `(B, 1, 1, T, S)` if shared."""
    if x is None:
        return None
    b, n, t, s = x.shape
    return lax.reshape(x, (b, 1, 1, t, s) if n == 1 else (b, k, g, t, s))


def _large_negative(dtype: np.dtype) -> Array:
    # Capped at float32's range: the masked logits go through a float32 softmax and must stay
    # finite there.
    value = -0.7 * min(float(dtypes.finfo(dtype).max), float(dtypes.finfo(_FLOAT32).max))
    return mjnp.asarray(value, dtype)


def _combined_mask(
    mask: Array | None,
    is_causal: bool,
    window: tuple[int, int] | None,
    q_seqlen: Array | None,
    kv_seqlen: Array | None,
    t: int,
    s: int,
) -> Array | None:
    """The positions that take part, broadcastable to `(B, K, G, T, S)`, or None for all."""
    q_pos = lax.broadcasted_iota(np.dtype("int64"), (t, s), 0)
    k_pos = lax.broadcasted_iota(np.dtype("int64"), (t, s), 1)
    parts = [] if mask is None else [mask]
    if is_causal:
        parts.append(q_pos >= k_pos)
    if window is not None:
        left, right = window
        parts.append((q_pos <= k_pos + left) & (q_pos >= k_pos - right))
    if q_seqlen is not None:
        parts.append(q_pos < q_seqlen[:, None, None, None, None])
    if kv_seqlen is not None:
        parts.append(k_pos < kv_seqlen[:, None, None, None, None])
    if not parts:
        return None
    combined = parts[0]
    for part in parts[1:]:
        combined = combined & part
    return combined


def dot_product_attention(
    query: ArrayLike,
    key: ArrayLike,
    value: ArrayLike,
    bias: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    query_seq_lengths: ArrayLike | None = None,
    key_value_seq_lengths: ArrayLike | None = None,
    local_window_size: int | tuple[int, int] | None = None,
    implementation: str | None = None,
    return_residual: bool = False,
) -> Array | tuple[Array, Array]:
    """`softmax(scale * Q @ K.T + bias, masked) @ V` for each head, as JAX's
    `nn.dot_product_attention`.

    Shapes use B (batch), T (query length), S (key/value length), N (query heads),
    K (key/value heads, dividing N) and H (head size). Inputs may be unbatched (3-d); bias and
    mask get leading axes of size 1 up to 4-d.

    Args:
      query: `(B, T, N, H)` or `(T, N, H)`.
      key, value: `(B, S, K, H)` or `(S, K, H)`, of the query's dtype. `K < N` is
        grouped-query attention (multi-query for `K == 1`).
      bias: added to the logits; broadcastable to `(B, N, T, S)`.
      mask: a bool array broadcastable to `(B, N, T, S)`; True marks the pairs that attend.
      scale: multiplies the logits (default `1 / sqrt(H)`).
      is_causal: query position `t` attends only to key positions `s <= t`.
      query_seq_lengths, key_value_seq_lengths: integer `(B,)` arrays; positions at or past
        the length are padding. Padded query positions give zero outputs.
      local_window_size: `(left, right)` (or one int for both): query `t` attends to keys in
        `[t - left, t + right]`.
      implementation: None or `"xla"`.
      return_residual: also return the logsumexp of the masked logits, `(B, T, N)` or
        `(T, N)`, with no gradient.

    Returns:
      The attention output, of the query's shape and dtype (and the residual, if asked).

    The logits accumulate and the softmax runs in at least float32 (float64 inputs stay in
    float64, where JAX drops to float32); a masked-out logit becomes a large negative number rather
    than -inf, so a row with nothing to attend to averages all values uniformly.

    Raises:
      ValueError: for inconsistent shapes or dtypes, a non-bool mask, or an unknown
        `implementation`.
      NotImplementedError: for `implementation="cudnn"`.
    """
    if implementation == "cudnn":
        raise NotImplementedError(
            f"{_FNAME}: implementation='cudnn' needs cuDNN on an NVIDIA GPU, which mjcore does "
            "not support; use implementation=None or 'xla'"
        )
    if implementation not in (None, "xla"):
        raise ValueError(
            f"{_FNAME}: unsupported implementation {implementation!r}; expected None or 'xla'"
        )
    output_shape = asarray("dot_product_attention", query).shape
    q = _ensure_4d("query", query)
    k_arr = _ensure_4d("key", key)
    v = _ensure_4d("value", value)
    b, s, k, h = k_arr.shape
    if v.shape != k_arr.shape or v.dtype != k_arr.dtype:
        raise ValueError(
            f"{_FNAME}: value must have key's shape and dtype {k_arr.shape} {k_arr.dtype}, "
            f"got {v.shape} {v.dtype}"
        )
    if q.shape[0] != b or q.shape[3] != h or q.dtype != k_arr.dtype:
        raise ValueError(
            f"{_FNAME}: query must have shape (B, T, N, H) with key's B = {b} and H = {h} and "
            f"key's dtype {k_arr.dtype}, got shape {q.shape} and dtype {q.dtype} "
            f"(key shape {k_arr.shape})"
        )
    if dtypes.kind(q.dtype) != "f":
        raise TypeError(f"{_FNAME}: requires floating-point inputs, got {q.dtype}")
    t, n = q.shape[1], q.shape[2]
    if k == 0 or n % k != 0:
        raise ValueError(
            f"{_FNAME}: the number of query heads must be a multiple of the key/value heads, "
            f"got {n} vs {k} (query shape {q.shape}, key shape {k_arr.shape})"
        )
    g = n // k
    if bias is not None:
        bias = _ensure_4d("bias", bias)
        _check_logits_operand("bias", bias, b, n, t, s)
    if mask is not None:
        mask = _ensure_4d("mask", mask)
        if mask.dtype != np.bool_:
            raise ValueError(f"{_FNAME}: mask must have dtype bool, got {mask.dtype}")
        _check_logits_operand("mask", mask, b, n, t, s)
    q_seqlen = _check_seq_lengths("query_seq_lengths", query_seq_lengths, b)
    kv_seqlen = _check_seq_lengths("key_value_seq_lengths", key_value_seq_lengths, b)
    window = _window(local_window_size)
    scale = 1.0 / np.sqrt(h) if scale is None else scale

    logits_dtype = mjnp.promote_types(q.dtype, _FLOAT32)
    q = lax.reshape(q, (b, t, k, g, h))
    # (B, T, K, G, H) x (B, S, K, H) -> (B, K, T, G, S) -> (B, K, G, T, S)
    logits = lax.dot_general(
        q, k_arr, (((4,), (3,)), ((0, 2), (0, 2))), preferred_element_type=logits_dtype
    )
    logits = lax.transpose(logits, (0, 1, 3, 2, 4))
    logits = logits * mjnp.asarray(scale, logits_dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, k, g)).astype(logits_dtype)
    combined = _combined_mask(_grouped(mask, k, g), is_causal, window, q_seqlen, kv_seqlen, t, s)
    if combined is not None:
        logits = mjnp.where(combined, logits, _large_negative(logits_dtype))
    # NB: JAX casts the logits to float32 here even for float64 inputs; mjnp's default dtype
    # is float64, so float64 attention keeps float64's precision (and JAX's agrees with it to
    # float32's).
    probs = softmax(logits, axis=-1).astype(k_arr.dtype)
    # (B, K, G, T, S) x (B, S, K, H) -> (B, K, G, T, H) -> (B, T, K, G, H)
    encoded = lax.dot_general(probs, v, (((4,), (1,)), ((0, 1), (0, 2))))
    encoded = lax.reshape(lax.transpose(encoded, (0, 3, 1, 2, 4)), (b, t, n, h))
    if q_seqlen is not None:
        q_valid = lax.broadcasted_iota(np.dtype("int64"), (1, t), 1) < q_seqlen[:, None]
        encoded = encoded * q_valid[:, :, None, None].astype(encoded.dtype)
    out = lax.reshape(encoded, output_shape)
    if not return_residual:
        return out
    lse = logsumexp(logits, axis=-1).astype(k_arr.dtype)  # (B, K, G, T)
    lse = lax.reshape(lax.transpose(lse, (0, 3, 1, 2)), output_shape[:-1])
    return out, lax.stop_gradient(lse)
