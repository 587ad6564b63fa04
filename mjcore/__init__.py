"""mjcore: composable function transformations (jvp, vmap, jit, grad) over XLA.

The system of JAX's "Autodidax: JAX core from scratch", grown into a library.
"""

from mjcore import dispatch as _dispatch  # noqa: F401  (installs eager XLA execution)
from mjcore import lax, sharding, tree, tree_util
from mjcore import sharded_jit as _sharded_jit  # noqa: F401  (installs jit's mesh path)
from mjcore.ad import UndefinedPrimal, is_undefined_primal
from mjcore.api import (
    ShapeDtypeStruct,
    ensure_compile_time_eval,
    eval_closed_jaxpr,
    eval_shape,
    grad,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    make_jaxpr,
    named_call,
    typeof,
    value_and_grad,
    vjp,
    vmap,
)
from mjcore.array import Array
from mjcore.backend.lowering import lower_fun
from mjcore.callback import pure_callback
from mjcore.checkpoint import checkpoint, checkpoint_policies, remat
from mjcore.config import config
from mjcore.control_flow import cond, fori_loop, scan, switch, while_loop
from mjcore.core import Primitive, ShapedArray
from mjcore.custom_derivatives import closure_convert, custom_gradient, custom_jvp, custom_vjp
from mjcore.dispatch import (
    block_until_ready,
    default_backend,
    default_device,
    device_count,
    device_get,
    device_put,
    devices,
    local_device_count,
    local_devices,
    process_count,
    process_index,
)
from mjcore.errors import (
    ConcretizationTypeError,
    MissingRuleError,
    TracerArrayConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from mjcore.global_arrays import (
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)
from mjcore.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr, typecheck_jaxpr
from mjcore.jit import clear_caches, disable_jit, jit
from mjcore.lax.precision import default_matmul_precision
from mjcore.shard_map import pmap, shard_map
from mjcore.sharded import make_array_from_callback
from mjcore.sharding import NamedSharding, P, make_mesh

__all__ = [
    "Array",
    "ClosedJaxpr",
    "ConcretizationTypeError",
    "Jaxpr",
    "MissingRuleError",
    "NamedSharding",
    "P",
    "Primitive",
    "ShapeDtypeStruct",
    "ShapedArray",
    "TracerArrayConversionError",
    "TracerIntegerConversionError",
    "UndefinedPrimal",
    "UnexpectedTracerError",
    "checkpoint",
    "clear_caches",
    "closure_convert",
    "config",
    "default_matmul_precision",
    "checkpoint_policies",
    "cond",
    "custom_gradient",
    "custom_jvp",
    "custom_vjp",
    "block_until_ready",
    "debug",
    "default_backend",
    "default_device",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "disable_jit",
    "ensure_compile_time_eval",
    "eval_closed_jaxpr",
    "eval_jaxpr",
    "eval_shape",
    "fori_loop",
    "grad",
    "hessian",
    "is_undefined_primal",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jit",
    "jvp",
    "lax",
    "linear_transpose",
    "linearize",
    "local_device_count",
    "local_devices",
    "lower_fun",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "make_jaxpr",
    "make_mesh",
    "pmap",
    "shard_map",
    "named_call",
    "nn",
    "process_count",
    "process_index",
    "pure_callback",
    "random",
    "remat",
    "scan",
    "scipy",
    "sharding",
    "switch",
    "tree",
    "tree_util",
    "typecheck_jaxpr",
    "typeof",
    "value_and_grad",
    "vjp",
    "vmap",
    "while_loop",
]


# JAX API modules real programs import (issue 23), also loaded on first use.
_LAZY_JAX_API = (
    "example_libraries",
    "experimental",
    "flatten_util",
    "distributed",
    "multihost_utils",
)
__all__ += list(_LAZY_JAX_API)


def __getattr__(name: str) -> object:
    # `mjcore.random`, `mjcore.nn`, `mjcore.scipy` and `mjcore.debug` load on first use: not
    # every program needs them (and `nn` imports mjnp), and import time is a goal
    # (benchmarks/README.md).
    if name in ("random", "nn", "scipy", "debug") or name in _LAZY_JAX_API:
        import importlib

        return importlib.import_module(f"mjcore.{name}")
    raise AttributeError(f"module 'mjcore' has no attribute {name!r}")
