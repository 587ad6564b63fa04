"""mjcore: composable function transformations (jvp, vmap, jit, grad) over XLA.

The system of JAX's "Autodidax: JAX core from scratch", grown into a library.
"""

from mjcore import dispatch as _dispatch  # noqa: F401  (installs eager XLA execution)
from mjcore import lax, tree_util
from mjcore.api import eval_closed_jaxpr, jvp, make_jaxpr, vmap
from mjcore.array import Array
from mjcore.core import Primitive, ShapedArray
from mjcore.dispatch import device_put
from mjcore.errors import (
    ConcretizationTypeError,
    MissingRuleError,
    TracerArrayConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from mjcore.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr, typecheck_jaxpr
from mjcore.jit import jit

__all__ = [
    "Array",
    "ClosedJaxpr",
    "ConcretizationTypeError",
    "Jaxpr",
    "MissingRuleError",
    "Primitive",
    "ShapedArray",
    "TracerArrayConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
    "device_put",
    "eval_closed_jaxpr",
    "eval_jaxpr",
    "jit",
    "jvp",
    "lax",
    "make_jaxpr",
    "tree_util",
    "typecheck_jaxpr",
    "vmap",
]
