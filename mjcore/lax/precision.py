"""`Precision`: JAX's matmul precision enum and the validation of `precision=` arguments.

On CPU, XLA computes every dot and convolution at the operands' full precision, so the value
changes nothing numerically; it is accepted and validated exactly as JAX does, so programs
written for accelerators run unchanged.
"""

from __future__ import annotations

import contextlib
import enum
import os
from collections.abc import Iterator
from typing import Any

from mjcore.config import config, retrace_all

# The string spellings JAX accepts, in JAX's order (its error message lists them).
_PRECISION_STRINGS: dict[str | None, str] = {
    "highest": "HIGHEST",
    "float32": "HIGHEST",
    "high": "HIGH",
    "bfloat16_3x": "HIGH",
    "tensorfloat32": "HIGH",
    "default": "DEFAULT",
    "bfloat16": "DEFAULT",
    "fastest": "DEFAULT",
    None: "DEFAULT",
}


class Precision(enum.Enum):
    """Precision of the operands of a dot product or convolution (JAX's `lax.Precision`).

    `DEFAULT` (aliases 'default', 'fastest', 'bfloat16'), `HIGH` ('high', 'tensorfloat32',
    'bfloat16_3x') and `HIGHEST` ('highest', 'float32'). Accelerators trade accuracy for speed
    at the lower settings; the CPU backend always computes at full precision.
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        name = _PRECISION_STRINGS.get(value) if isinstance(value, str | None) else None
        return None if name is None else cls[name]

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name


PrecisionLike = Any
CanonicalPrecision = tuple[Precision, Precision] | None


def canonicalize_precision(precision: PrecisionLike) -> CanonicalPrecision:
    """A `precision=` argument as a pair of `Precision`s (one per operand), or None.

    Accepts what JAX accepts except its `DotAlgorithm` presets: None, a `Precision`, one of
    its strings, or a pair of either. Anything else raises JAX's ValueError.
    """
    if precision is None:
        return None
    if isinstance(precision, Precision):
        return precision, precision
    if isinstance(precision, str) and precision in _PRECISION_STRINGS:
        return Precision(precision), Precision(precision)
    if isinstance(precision, list | tuple) and len(precision) == 2:
        if all(isinstance(p, Precision) for p in precision):
            return precision[0], precision[1]
        if all(isinstance(p, str) and p in _PRECISION_STRINGS for p in precision):
            return Precision(precision[0]), Precision(precision[1])
    raise ValueError(
        "Precision argument must be one of:\n"
        "- None,\n"
        f"- a string in {list(_PRECISION_STRINGS)},\n"
        "- a lax.Precision value,\n"
        "- a tuple of two lax.Precision values or strings;\n"
        f"but got {precision}."
    )


__all__ = ["Precision", "canonicalize_precision"]


def _validated(value: Any) -> Any:
    canonicalize_precision(value)  # JAX's ValueError for an unknown value
    return value


config.define(
    "jax_default_matmul_precision",
    os.environ.get("MJCORE_DEFAULT_MATMUL_PRECISION")
    or os.environ.get("JAX_DEFAULT_MATMUL_PRECISION")
    or None,
    "The precision of dot products and convolutions given no `precision=` ('default', "
    "'high'/'tensorfloat32', 'highest'/'float32', ...): what XLA computes float32 products at "
    "on accelerators (TF32 by default on GPUs); read when a product is traced.",
    _validated,
    lambda v: retrace_all(),
)


@contextlib.contextmanager
def default_matmul_precision(precision: Any) -> Iterator[None]:
    """Inside the block, products traced without `precision=` use `precision` (JAX's
    `jax.default_matmul_precision`): 'highest' for full float32 products on GPUs. Setting or
    restoring the flag drops traced programs (what is traced depends on it)."""
    saved = config.read("jax_default_matmul_precision")
    config.update("jax_default_matmul_precision", precision)
    try:
        yield
    finally:
        config.update("jax_default_matmul_precision", saved)
