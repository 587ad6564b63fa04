"""mjnp: a NumPy 2 compatible array namespace on mjcore (`import mjnp as np`).

Every function is a composition of `mjcore.lax` primitives, so all of them work under
`mjcore.jvp`, `mjcore.vmap`, `mjcore.jit` and the other transformations. One module per
category of NumPy's reference (creation, elementwise, reductions, ...); each public name is
re-exported here and listed in `__all__`.
"""

from mjcore.core import install_array_surface as _install_array_surface

# One import per module (sorted); each module's docstring says which chapter of NumPy's
# reference it holds. Submodules import what they need from their siblings directly.
from mjnp import _ufunc, emath, exceptions, fft, linalg, random
from mjnp._array_api_info import (
    __array_api_version__,
    __array_namespace_info__,
)
from mjnp._array_surface import SURFACE as _SURFACE
from mjnp._bessel import i0
from mjnp._bit_packing import bitwise_count, packbits, unpackbits
from mjnp._calculus import gradient, trapezoid
from mjnp._creation import (
    arange,
    array,
    asanyarray,
    asarray,
    asarray_chkfinite,
    ascontiguousarray,
    asfortranarray,
    empty,
    empty_like,
    eye,
    frombuffer,
    fromiter,
    fromstring,
    full,
    full_like,
    identity,
    linspace,
    ones,
    ones_like,
    require,
    zeros,
    zeros_like,
)
from mjnp._dtypes import (
    False_,
    ScalarType,
    True_,
    bfloat16,  # ml_dtypes' type, as jax.numpy.bfloat16
    bool,  # noqa: A004  (NumPy 2's name for bool_)
    bool_,
    byte,
    can_cast,
    cdouble,
    clongdouble,
    complex64,
    complex128,
    complexfloating,
    csingle,
    double,
    dtype,
    e,
    euler_gamma,
    finfo,
    float16,
    float32,
    float64,
    floating,
    generic,
    half,
    iinfo,
    inexact,
    inf,
    int8,
    int16,
    int32,
    int64,
    int_,
    intc,
    integer,
    intp,
    isdtype,
    issubdtype,
    little_endian,
    long,
    longdouble,
    longlong,
    nan,
    ndarray,
    newaxis,
    number,
    pi,
    promote_types,
    result_type,
    short,
    signedinteger,
    single,
    typecodes,
    ubyte,
    uint,
    uint8,
    uint16,
    uint32,
    uint64,
    uintc,
    uintp,
    ulong,
    ulonglong,
    unsignedinteger,
    ushort,
)
from mjnp._dtypes import dtype_classes as dtypes
from mjnp._elementwise import (
    abs,  # noqa: A004  (NumPy's name)
    absolute,
    acos,
    acosh,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    around,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    cbrt,
    ceil,
    clip,
    conj,
    conjugate,
    cos,
    cosh,
    deg2rad,
    degrees,
    divide,
    divmod,  # noqa: A004  (NumPy's name)
    equal,
    exp,
    exp2,
    expm1,
    fabs,
    fix,
    float_power,
    floor,
    floor_divide,
    fmax,
    fmin,
    fmod,
    greater,
    greater_equal,
    hypot,
    imag,
    invert,
    isfinite,
    isinf,
    isnan,
    left_shift,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    positive,
    pow,  # noqa: A004  (the Array API name)
    power,
    rad2deg,
    radians,
    real,
    reciprocal,
    remainder,
    right_shift,
    rint,
    round,  # noqa: A004  (NumPy's name)
    sign,
    signbit,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    true_divide,
    trunc,
    where,
)
from mjnp._floating_point import copysign, frexp, ldexp, modf, nextafter, spacing
from mjnp._histograms import (
    bincount,
    histogram,
    histogram2d,
    histogram_bin_edges,
    histogramdd,
)
from mjnp._index_tricks import (
    c_,
    diag_indices,
    diag_indices_from,
    index_exp,
    indices,
    ix_,
    mask_indices,
    mgrid,
    ndenumerate,
    ndindex,
    ogrid,
    r_,
    s_,
    tril_indices,
    tril_indices_from,
    triu_indices,
    triu_indices_from,
)
from mjnp._indexing import getitem as _getitem  # noqa: F401  (installed as __getitem__)
from mjnp._indexing_functions import (
    argwhere,
    choose,
    compress,
    diagonal,
    digitize,
    extract,
    fill_diagonal,
    flatnonzero,
    nonzero,
    piecewise,
    place,
    put,
    put_along_axis,
    putmask,
    ravel_multi_index,
    searchsorted,
    select,
    take,
    take_along_axis,
    trace,
    unravel_index,
)
from mjnp._interpolation import interp
from mjnp._io import (
    fromfile,
    fromregex,
    genfromtxt,
    load,
    loadtxt,
    save,
    savetxt,
    savez,
    savez_compressed,
)
from mjnp._joining import (
    append,
    array_split,
    atleast_2d,
    atleast_3d,
    block,
    broadcast_arrays,
    broadcast_shapes,
    column_stack,
    concat,
    concatenate,
    delete,
    dsplit,
    dstack,
    flip,
    fliplr,
    flipud,
    hsplit,
    hstack,
    insert,
    matrix_transpose,
    pad,
    repeat,
    resize,
    roll,
    rollaxis,
    rot90,
    row_stack,
    split,
    stack,
    tile,
    trim_zeros,
    unstack,
    vsplit,
    vstack,
)
from mjnp._logic import (
    allclose,
    array_equal,
    array_equiv,
    isclose,
    iscomplex,
    iscomplexobj,
    isnat,
    isneginf,
    isposinf,
    isreal,
    isrealobj,
    isscalar,
    iterable,
)
from mjnp._manipulation import (
    astype,
    atleast_1d,
    broadcast,
    broadcast_to,
    copy,
    expand_dims,
    moveaxis,
    ndim,
    permute_dims,
    ravel,
    reshape,
    shape,
    size,
    squeeze,
    swapaxes,
    transpose,
)
from mjnp._mathematical import (
    angle,
    gcd,
    heaviside,
    lcm,
    logaddexp,
    logaddexp2,
    nan_to_num,
    real_if_close,
    sinc,
    unwrap,
)
from mjnp._matrices import diag, diagflat, tri, tril, triu, vander
from mjnp._matrix_products import (
    cross,
    dot,
    einsum,
    einsum_path,
    inner,
    kron,
    matmul,
    matvec,
    outer,
    tensordot,
    vdot,
    vecdot,
    vecmat,
)
from mjnp._polynomials import (
    poly,
    poly1d,
    polyadd,
    polyder,
    polydiv,
    polyfit,
    polyint,
    polymul,
    polysub,
    polyval,
    roots,
)
from mjnp._printing import (
    array2string,
    array_repr,
    array_str,
    format_float_positional,
    format_float_scientific,
    get_printoptions,
    printoptions,
    set_printoptions,
)
from mjnp._protocols import from_dlpack
from mjnp._ranges import fromfunction, geomspace, logspace, meshgrid
from mjnp._reductions import (
    all,  # noqa: A004  (NumPy's name)
    amax,
    amin,
    any,  # noqa: A004  (NumPy's name)
    argmax,
    argmin,
    max,  # noqa: A004  (NumPy's name)
    mean,
    min,  # noqa: A004  (NumPy's name)
    prod,
    sum,  # noqa: A004  (NumPy's name)
)
from mjnp._sets import (
    intersect1d,
    isin,
    setdiff1d,
    setxor1d,
    union1d,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from mjnp._signal import convolve, correlate
from mjnp._sorting import (
    argpartition,
    argsort,
    lexsort,
    partition,
    sort,
    sort_complex,
)
from mjnp._statistics import (
    average,
    corrcoef,
    count_nonzero,
    cov,
    median,
    nanargmax,
    nanargmin,
    nanmax,
    nanmean,
    nanmedian,
    nanmin,
    nanpercentile,
    nanprod,
    nanquantile,
    nanstd,
    nansum,
    nanvar,
    percentile,
    ptp,
    quantile,
    std,
    var,
)
from mjnp._sums_products_differences import (
    cumprod,
    cumsum,
    cumulative_prod,
    cumulative_sum,
    diff,
    ediff1d,
    nancumprod,
    nancumsum,
)
from mjnp._utilities import (
    apply_along_axis,
    apply_over_axes,
    base_repr,
    binary_repr,
    common_type,
    copyto,
    errstate,
    getbufsize,
    geterr,
    geterrcall,
    info,
    isfortran,
    may_share_memory,
    min_scalar_type,
    mintypecode,
    setbufsize,
    seterr,
    seterrcall,
    shares_memory,
    show_config,
    show_runtime,
    typename,
    vectorize,
)
from mjnp._window import bartlett, blackman, hamming, hanning, kaiser

# Operators, methods and properties of Array and Tracer: installed once, here.
_install_array_surface(_SURFACE)

# NumPy's ufuncs as objects with reduce/accumulate/outer/at (_ufunc.py).
absolute = _ufunc.ufunc(absolute, "absolute")
add = _ufunc.ufunc(add, "add")
arccos = _ufunc.ufunc(arccos, "arccos")
arccosh = _ufunc.ufunc(arccosh, "arccosh")
arcsin = _ufunc.ufunc(arcsin, "arcsin")
arcsinh = _ufunc.ufunc(arcsinh, "arcsinh")
arctan = _ufunc.ufunc(arctan, "arctan")
arctan2 = _ufunc.ufunc(arctan2, "arctan2")
arctanh = _ufunc.ufunc(arctanh, "arctanh")
bitwise_and = _ufunc.ufunc(bitwise_and, "bitwise_and")
bitwise_count = _ufunc.ufunc(bitwise_count, "bitwise_count")
bitwise_or = _ufunc.ufunc(bitwise_or, "bitwise_or")
bitwise_xor = _ufunc.ufunc(bitwise_xor, "bitwise_xor")
cbrt = _ufunc.ufunc(cbrt, "cbrt")
ceil = _ufunc.ufunc(ceil, "ceil")
conjugate = _ufunc.ufunc(conjugate, "conjugate")
copysign = _ufunc.ufunc(copysign, "copysign")
cos = _ufunc.ufunc(cos, "cos")
cosh = _ufunc.ufunc(cosh, "cosh")
deg2rad = _ufunc.ufunc(deg2rad, "deg2rad")
degrees = _ufunc.ufunc(degrees, "degrees")
divide = _ufunc.ufunc(divide, "divide")
divmod = _ufunc.ufunc(divmod, "divmod")
equal = _ufunc.ufunc(equal, "equal")
exp = _ufunc.ufunc(exp, "exp")
exp2 = _ufunc.ufunc(exp2, "exp2")
expm1 = _ufunc.ufunc(expm1, "expm1")
fabs = _ufunc.ufunc(fabs, "fabs")
float_power = _ufunc.ufunc(float_power, "float_power")
floor = _ufunc.ufunc(floor, "floor")
floor_divide = _ufunc.ufunc(floor_divide, "floor_divide")
fmax = _ufunc.ufunc(fmax, "fmax")
fmin = _ufunc.ufunc(fmin, "fmin")
fmod = _ufunc.ufunc(fmod, "fmod")
frexp = _ufunc.ufunc(frexp, "frexp")
gcd = _ufunc.ufunc(gcd, "gcd")
greater = _ufunc.ufunc(greater, "greater")
greater_equal = _ufunc.ufunc(greater_equal, "greater_equal")
heaviside = _ufunc.ufunc(heaviside, "heaviside")
hypot = _ufunc.ufunc(hypot, "hypot")
invert = _ufunc.ufunc(invert, "invert")
isfinite = _ufunc.ufunc(isfinite, "isfinite")
isinf = _ufunc.ufunc(isinf, "isinf")
isnan = _ufunc.ufunc(isnan, "isnan")
isnat = _ufunc.ufunc(isnat, "isnat")
lcm = _ufunc.ufunc(lcm, "lcm")
ldexp = _ufunc.ufunc(ldexp, "ldexp")
left_shift = _ufunc.ufunc(left_shift, "left_shift")
less = _ufunc.ufunc(less, "less")
less_equal = _ufunc.ufunc(less_equal, "less_equal")
log = _ufunc.ufunc(log, "log")
log10 = _ufunc.ufunc(log10, "log10")
log1p = _ufunc.ufunc(log1p, "log1p")
log2 = _ufunc.ufunc(log2, "log2")
logaddexp = _ufunc.ufunc(logaddexp, "logaddexp")
logaddexp2 = _ufunc.ufunc(logaddexp2, "logaddexp2")
logical_and = _ufunc.ufunc(logical_and, "logical_and")
logical_not = _ufunc.ufunc(logical_not, "logical_not")
logical_or = _ufunc.ufunc(logical_or, "logical_or")
logical_xor = _ufunc.ufunc(logical_xor, "logical_xor")
matmul = _ufunc.ufunc(matmul, "matmul")
matvec = _ufunc.ufunc(matvec, "matvec")
maximum = _ufunc.ufunc(maximum, "maximum")
minimum = _ufunc.ufunc(minimum, "minimum")
modf = _ufunc.ufunc(modf, "modf")
multiply = _ufunc.ufunc(multiply, "multiply")
negative = _ufunc.ufunc(negative, "negative")
nextafter = _ufunc.ufunc(nextafter, "nextafter")
not_equal = _ufunc.ufunc(not_equal, "not_equal")
positive = _ufunc.ufunc(positive, "positive")
power = _ufunc.ufunc(power, "power")
rad2deg = _ufunc.ufunc(rad2deg, "rad2deg")
radians = _ufunc.ufunc(radians, "radians")
reciprocal = _ufunc.ufunc(reciprocal, "reciprocal")
remainder = _ufunc.ufunc(remainder, "remainder")
right_shift = _ufunc.ufunc(right_shift, "right_shift")
rint = _ufunc.ufunc(rint, "rint")
sign = _ufunc.ufunc(sign, "sign")
signbit = _ufunc.ufunc(signbit, "signbit")
sin = _ufunc.ufunc(sin, "sin")
sinh = _ufunc.ufunc(sinh, "sinh")
spacing = _ufunc.ufunc(spacing, "spacing")
sqrt = _ufunc.ufunc(sqrt, "sqrt")
square = _ufunc.ufunc(square, "square")
subtract = _ufunc.ufunc(subtract, "subtract")
tan = _ufunc.ufunc(tan, "tan")
tanh = _ufunc.ufunc(tanh, "tanh")
trunc = _ufunc.ufunc(trunc, "trunc")
vecdot = _ufunc.ufunc(vecdot, "vecdot")
vecmat = _ufunc.ufunc(vecmat, "vecmat")

# NumPy's aliases are the same objects (F811: each replaces the function imported above).
abs = absolute  # noqa: F811
acos = arccos  # noqa: F811
acosh = arccosh  # noqa: F811
asin = arcsin  # noqa: F811
asinh = arcsinh  # noqa: F811
atan = arctan  # noqa: F811
atan2 = arctan2  # noqa: F811
atanh = arctanh  # noqa: F811
bitwise_invert = invert  # noqa: F811
bitwise_left_shift = left_shift  # noqa: F811
bitwise_not = invert  # noqa: F811
bitwise_right_shift = right_shift  # noqa: F811
conj = conjugate  # noqa: F811
mod = remainder  # noqa: F811
pow = power  # noqa: F811
true_divide = divide  # noqa: F811

__all__ = [
    # creation
    "arange",
    "array",
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "identity",
    "linspace",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
    # data types
    "bfloat16",
    "bool",
    "bool_",
    "can_cast",
    "cdouble",
    "clongdouble",
    "complex64",
    "complex128",
    "complexfloating",
    "csingle",
    "double",
    "dtype",
    "dtypes",
    "e",
    "euler_gamma",
    "finfo",
    "float16",
    "float32",
    "float64",
    "floating",
    "generic",
    "half",
    "iinfo",
    "inexact",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "int_",
    "integer",
    "intp",
    "isdtype",
    "issubdtype",
    "nan",
    "newaxis",
    "number",
    "pi",
    "promote_types",
    "result_type",
    "signedinteger",
    "single",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintp",
    "unsignedinteger",
    # elementwise
    "abs",
    "absolute",
    "acos",
    "acosh",
    "add",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "around",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "cbrt",
    "ceil",
    "clip",
    "conj",
    "conjugate",
    "cos",
    "cosh",
    "deg2rad",
    "degrees",
    "divide",
    "divmod",
    "equal",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "fix",
    "float_power",
    "floor",
    "floor_divide",
    "fmax",
    "fmin",
    "fmod",
    "greater",
    "greater_equal",
    "hypot",
    "imag",
    "invert",
    "isfinite",
    "isinf",
    "isnan",
    "left_shift",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "log10",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "not_equal",
    "positive",
    "pow",
    "power",
    "rad2deg",
    "radians",
    "real",
    "reciprocal",
    "remainder",
    "right_shift",
    "rint",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "true_divide",
    "trunc",
    "where",
    # products (_matrix_products.py)
    "dot",
    "inner",
    "matmul",
    "outer",
    "vdot",
    "ndim",
    "shape",
    "size",
    # manipulation (_manipulation.py)
    "astype",
    "atleast_1d",
    "broadcast_to",
    "copy",
    "expand_dims",
    "moveaxis",
    "permute_dims",
    "ravel",
    "reshape",
    "squeeze",
    "swapaxes",
    "transpose",
    # reductions (_reductions.py)
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "max",
    "mean",
    "min",
    "prod",
    "sum",
]

__all__ += [
    "append",
    "array_split",
    "atleast_2d",
    "atleast_3d",
    "block",
    "broadcast",
    "broadcast_arrays",
    "broadcast_shapes",
    "column_stack",
    "concat",
    "concatenate",
    "delete",
    "dsplit",
    "dstack",
    "flip",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "insert",
    "matrix_transpose",
    "pad",
    "repeat",
    "resize",
    "roll",
    "rollaxis",
    "rot90",
    "row_stack",
    "split",
    "stack",
    "tile",
    "trim_zeros",
    "unstack",
    "vsplit",
    "vstack",
]

__all__ += [
    "asanyarray",
    "asarray_chkfinite",
    "ascontiguousarray",
    "bartlett",
    "blackman",
    "diag",
    "diag_indices",
    "diag_indices_from",
    "diagflat",
    "frombuffer",
    "fromfunction",
    "fromiter",
    "fromstring",
    "geomspace",
    "hamming",
    "hanning",
    "indices",
    "ix_",
    "kaiser",
    "logspace",
    "mask_indices",
    "meshgrid",
    "require",
    "tri",
    "tril",
    "tril_indices",
    "tril_indices_from",
    "triu",
    "triu_indices",
    "triu_indices_from",
    "vander",
]

__all__ += [
    "cross",
    "einsum",
    "einsum_path",
    "emath",
    "fft",
    "kron",
    "linalg",
    "matvec",
    "random",
    "tensordot",
    "vecdot",
    "vecmat",
]

__all__ += [
    "allclose",
    "angle",
    "array_equal",
    "array_equiv",
    "bitwise_count",
    "copysign",
    "frexp",
    "gcd",
    "heaviside",
    "i0",
    "isclose",
    "iscomplex",
    "iscomplexobj",
    "isneginf",
    "isposinf",
    "isreal",
    "isrealobj",
    "isscalar",
    "iterable",
    "lcm",
    "ldexp",
    "logaddexp",
    "logaddexp2",
    "modf",
    "nan_to_num",
    "nextafter",
    "packbits",
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyfit",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
    "real_if_close",
    "roots",
    "sinc",
    "spacing",
    "unpackbits",
    "unwrap",
]

__all__ += ["poly1d"]

__all__ += ["argpartition", "argsort", "lexsort", "partition", "sort", "sort_complex"]

__all__ += [
    "average",
    "corrcoef",
    "count_nonzero",
    "cov",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "ediff1d",
    "median",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmedian",
    "nanmin",
    "nanpercentile",
    "nanprod",
    "nanquantile",
    "nanstd",
    "nansum",
    "nanvar",
    "percentile",
    "ptp",
    "quantile",
    "std",
    "var",
]

__all__ += [
    "argwhere",
    "choose",
    "compress",
    "diagonal",
    "digitize",
    "extract",
    "fill_diagonal",
    "flatnonzero",
    "nonzero",
    "piecewise",
    "place",
    "put",
    "put_along_axis",
    "putmask",
    "ravel_multi_index",
    "searchsorted",
    "select",
    "take",
    "take_along_axis",
    "trace",
    "unravel_index",
]

__all__ += ["from_dlpack"]

__all__ += ["__array_api_version__", "__array_namespace_info__"]

__all__ += [
    "array2string",
    "array_repr",
    "array_str",
    "format_float_positional",
    "format_float_scientific",
    "get_printoptions",
    "printoptions",
    "set_printoptions",
]

__all__ += [
    "apply_along_axis",
    "apply_over_axes",
    "base_repr",
    "binary_repr",
    "common_type",
    "copyto",
    "errstate",
    "fromfile",
    "genfromtxt",
    "getbufsize",
    "geterr",
    "geterrcall",
    "info",
    "isfortran",
    "load",
    "loadtxt",
    "may_share_memory",
    "min_scalar_type",
    "mintypecode",
    "save",
    "savetxt",
    "savez",
    "savez_compressed",
    "setbufsize",
    "seterr",
    "seterrcall",
    "shares_memory",
    "show_config",
    "typename",
    "vectorize",
]

__all__ += [
    "intersect1d",
    "isin",
    "setdiff1d",
    "setxor1d",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]

__all__ += [
    "asfortranarray",
    "bincount",
    "convolve",
    "correlate",
    "fromregex",
    "gradient",
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
    "interp",
    "isnat",
    "show_runtime",
    "trapezoid",
]

__all__ += [
    "False_",
    "ScalarType",
    "True_",
    "byte",
    "c_",
    "exceptions",
    "index_exp",
    "intc",
    "little_endian",
    "long",
    "longdouble",
    "longlong",
    "mgrid",
    "ndarray",
    "ndenumerate",
    "ndindex",
    "ogrid",
    "r_",
    "s_",
    "short",
    "typecodes",
    "ubyte",
    "uintc",
    "ulong",
    "ulonglong",
    "ushort",
]
