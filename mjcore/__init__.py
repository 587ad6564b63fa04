"""mjcore: composable function transformations (jvp, vmap, jit, grad) over XLA.

The system of JAX's "Autodidax: JAX core from scratch", grown into a library.
"""

from mjcore import dispatch as _dispatch  # noqa: F401  (installs eager XLA execution)
from mjcore import lax, tree_util
from mjcore.ad import UndefinedPrimal, is_undefined_primal
from mjcore.api import (
    eval_closed_jaxpr,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    make_jaxpr,
    value_and_grad,
    vjp,
    vmap,
)
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
    "UndefinedPrimal",
    "UnexpectedTracerError",
    "device_put",
    "eval_closed_jaxpr",
    "eval_jaxpr",
    "grad",
    "hessian",
    "is_undefined_primal",
    "jacfwd",
    "jacrev",
    "jit",
    "jvp",
    "lax",
    "linearize",
    "make_jaxpr",
    "tree_util",
    "typecheck_jaxpr",
    "value_and_grad",
    "vjp",
    "vmap",
]
