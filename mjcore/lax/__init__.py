"""Primitive-level operations (like JAX's `lax`): one primitive per wrapper, strict dtypes."""

from mjcore.lax.arithmetic import (
    abs,
    add,
    ceil,
    div,
    floor,
    integer_pow,
    max,
    min,
    mul,
    neg,
    rem,
    round,
    sign,
    sub,
)
from mjcore.lax.base import (
    add_any,
    broadcast_in_dim,
    broadcast_to,
    convert_element_type,
    expand_dims,
    full,
    reshape,
    select_n,
    transpose,
    zeros_like,
)
from mjcore.lax.bitcast import bitcast_convert_type, nextafter
from mjcore.lax.bitwise import (
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    is_finite,
    population_count,
    shift_left,
    shift_right_arithmetic,
    shift_right_logical,
)
from mjcore.lax.comparison import eq, ge, gt, le, lt, ne
from mjcore.lax.complex import complex, conj, imag, real
from mjcore.lax.dot import dot_general
from mjcore.lax.reductions import (
    argmax,
    argmin,
    reduce_and,
    reduce_max,
    reduce_min,
    reduce_or,
    reduce_prod,
    reduce_sum,
)
from mjcore.lax.slicing import dynamic_slice, dynamic_update_slice, slice, slice_in_dim
from mjcore.lax.structural import broadcasted_iota, concatenate, iota, pad, rev, roll, squeeze
from mjcore.lax.transcendental import (
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    cbrt,
    cos,
    cosh,
    exp,
    exp2,
    expm1,
    hypot,
    log,
    log1p,
    logistic,
    pow,
    rsqrt,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
)

__all__ = [
    "abs",
    "acos",
    "acosh",
    "add",
    "add_any",
    "argmax",
    "argmin",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitcast_convert_type",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "broadcast_in_dim",
    "broadcast_to",
    "broadcasted_iota",
    "cbrt",
    "ceil",
    "complex",
    "concatenate",
    "conj",
    "convert_element_type",
    "cos",
    "cosh",
    "div",
    "dot_general",
    "dynamic_slice",
    "dynamic_update_slice",
    "eq",
    "exp",
    "exp2",
    "expand_dims",
    "expm1",
    "floor",
    "full",
    "ge",
    "gt",
    "hypot",
    "imag",
    "integer_pow",
    "iota",
    "is_finite",
    "le",
    "log",
    "log1p",
    "logistic",
    "lt",
    "max",
    "min",
    "mul",
    "ne",
    "neg",
    "nextafter",
    "pad",
    "population_count",
    "pow",
    "real",
    "reduce_and",
    "reduce_max",
    "reduce_min",
    "reduce_or",
    "reduce_prod",
    "reduce_sum",
    "rem",
    "reshape",
    "rev",
    "roll",
    "round",
    "rsqrt",
    "select_n",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
    "sign",
    "sin",
    "sinh",
    "slice",
    "slice_in_dim",
    "sqrt",
    "squeeze",
    "sub",
    "tan",
    "tanh",
    "transpose",
    "zeros_like",
]

from mjcore.lax.fft import fft  # noqa: E402  (appended families)
from mjcore.lax.linalg import (  # noqa: E402
    cholesky,
    eig,
    eigh,
    geqrf,
    lu,
    lu_pivots_to_permutation,
    qr,
    svd,
    symmetrize,
    triangular_solve,
)

__all__ += [
    "cholesky",
    "eig",
    "eigh",
    "fft",
    "geqrf",
    "lu",
    "lu_pivots_to_permutation",
    "qr",
    "svd",
    "symmetrize",
    "triangular_solve",
]

from mjcore.lax.sorting import cummax, cummin, cumprod, cumsum, sort  # noqa: E402  (appended family)

__all__ += ["cummax", "cummin", "cumprod", "cumsum", "sort"]

from mjcore.lax.gather import (  # noqa: E402  (appended family)
    GatherDimensionNumbers,
    ScatterDimensionNumbers,
    gather,
    scatter,
    scatter_add,
    scatter_max,
    scatter_min,
    scatter_mul,
)

__all__ += [
    "GatherDimensionNumbers",
    "ScatterDimensionNumbers",
    "gather",
    "scatter",
    "scatter_add",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
]

from mjcore.lax.special import (  # noqa: E402  (appended family)
    bessel_i0e,
    bessel_i1e,
    digamma,
    erf,
    erf_inv,
    erfc,
    igamma,
    igamma_grad_a,
    igammac,
    lgamma,
    polygamma,
    random_gamma_grad,
    zeta,
)

__all__ += [
    "bessel_i0e",
    "bessel_i1e",
    "digamma",
    "erf",
    "erf_inv",
    "erfc",
    "igamma",
    "igamma_grad_a",
    "igammac",
    "lgamma",
    "polygamma",
    "random_gamma_grad",
    "zeta",
]

from mjcore.lax.convolution import (  # noqa: E402  (appended family)
    ConvDimensionNumbers,
    conv,
    conv_dimension_numbers,
    conv_general_dilated,
    conv_transpose,
    conv_with_general_padding,
)

__all__ += [
    "ConvDimensionNumbers",
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_transpose",
    "conv_with_general_padding",
]

from mjcore.lax.windowed import reduce_window  # noqa: E402  (appended family)

__all__ += ["reduce_window"]

from mjcore.lax.prefix_scan import associative_scan  # noqa: E402  (appended family)

__all__ += ["associative_scan"]

from mjcore.lax.arithmetic import clamp, reciprocal, square  # noqa: E402  (appended)
from mjcore.lax.base import broadcast, full_like  # noqa: E402
from mjcore.lax.reductions import reduce_xor  # noqa: E402
from mjcore.lax.slicing import (  # noqa: E402
    dynamic_index_in_dim,
    dynamic_slice_in_dim,
    dynamic_update_index_in_dim,
    dynamic_update_slice_in_dim,
    index_in_dim,
)
from mjcore.lax.sorting import cumlogsumexp, sort_key_val, top_k  # noqa: E402
from mjcore.lax.stop_gradient import stop_gradient  # noqa: E402

__all__ += [
    "broadcast",
    "clamp",
    "cumlogsumexp",
    "dynamic_index_in_dim",
    "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice_in_dim",
    "full_like",
    "index_in_dim",
    "reciprocal",
    "reduce_xor",
    "sort_key_val",
    "square",
    "stop_gradient",
    "top_k",
]

from mjcore.lax.arithmetic import mulhi  # noqa: E402  (composed of arithmetic and bitwise)
from mjcore.lax.base import broadcast_to_rank, collapse, empty, select  # noqa: E402  (appended)
from mjcore.lax.bitcast import reduce_precision  # noqa: E402
from mjcore.lax.bitwise import clz  # noqa: E402
from mjcore.lax.dot import batch_matmul  # noqa: E402
from mjcore.lax.gather import scatter_sub  # noqa: E402
from mjcore.lax.optimization_barrier import optimization_barrier  # noqa: E402
from mjcore.lax.reductions import reduce  # noqa: E402
from mjcore.lax.structural import split, tile  # noqa: E402

__all__ += [
    "batch_matmul",
    "broadcast_to_rank",
    "clz",
    "collapse",
    "empty",
    "mulhi",
    "optimization_barrier",
    "reduce",
    "reduce_precision",
    "scatter_sub",
    "select",
    "split",
    "tile",
]

# Control flow, as JAX's `lax` has it: the same function objects as `mjcore.cond` etc. Imported
# last because mjcore.control_flow is built from the primitives above.
from mjcore.control_flow import (  # noqa: E402
    cond,
    custom_linear_solve,
    custom_root,
    fori_loop,
    map,  # noqa: A004  (the lax name, as in JAX)
    scan,
    switch,
    while_loop,
)

__all__ += [
    "cond",
    "custom_linear_solve",
    "custom_root",
    "fori_loop",
    "map",
    "scan",
    "switch",
    "while_loop",
]

from mjcore.lax.host import host_coverage  # noqa: E402  (appended: host rules' coverage)

__all__ += ["host_coverage"]

# JAX API pieces real programs import (issue 23).
from mjcore.lax.convolution import (  # noqa: E402
    conv_general_shape_tuple,
    conv_transpose_shape_tuple,
    padtype_to_pads,
)
from mjcore.lax.dot import dot  # noqa: E402
from mjcore.lax.precision import Precision  # noqa: E402
from mjcore.lax.windowed import reduce_window_shape_tuple  # noqa: E402

__all__ += [
    "Precision",
    "conv_general_shape_tuple",
    "conv_transpose_shape_tuple",
    "dot",
    "padtype_to_pads",
    "reduce_window_shape_tuple",
]

# Collectives over named axes (issue 22).
from mjcore.lax.parallel import (  # noqa: E402
    all_gather,
    all_to_all,
    axis_index,
    axis_size,
    pmax,
    pmean,
    pmin,
    ppermute,
    psum,
    psum_scatter,
)

__all__ += [
    "all_gather",
    "all_to_all",
    "axis_index",
    "axis_size",
    "pmax",
    "pmean",
    "pmin",
    "ppermute",
    "psum",
    "psum_scatter",
]

# Sharding (issue 22).
from mjcore.lax.sharding import with_sharding_constraint  # noqa: E402

__all__ += ["with_sharding_constraint"]
