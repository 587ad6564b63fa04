"""Typed-FFI custom calls into the CPU kernels that jaxlib ships: LAPACK, and calls back into
Python on the host.

The only module that knows jaxlib's target names, their registration and their attribute
encoding. Lowering rules ask for `lapack_call(...)` or `python_callback(...)`; the LAPACK
targets are registered with XLA the first time one is emitted (jaxlib registers the Python
callback target itself).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mjcore.backend import client, compat
from mjcore.backend.hlo import FunctionBuilder, Value
from mjcore.core import ShapedArray

_lock = threading.Lock()
_registered = False
_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def _register_lapack() -> None:
    """Register every LAPACK FFI handler from `jaxlib.cpu._lapack` with XLA's CPU registry."""
    global _registered
    if _registered:
        return
    with _lock:
        if _registered:
            return
        for name, capsule in compat.lapack_registrations().items():
            compat.register_custom_call_target(name, capsule, "cpu")
        _registered = True


def lowering_platform() -> str:
    """'cuda' when programs are lowered for a CUDA device (the one `client.lowering_for`
    names, else the default device), else 'cpu': the platform whose kernels the custom calls
    below name."""
    target = client.target_platform()
    if target is not None:
        return target
    return "cuda" if client.device().platform == "gpu" else "cpu"


# The cuSOLVER kernels the CUDA plugin registers (jaxlib's `_solver` module), by the LAPACK
# routine they replace. They take the same operands, results and column-major layouts as the
# LAPACK kernels (as JAX lowers them); only names and attributes differ.
_CUSOLVER = {
    "getrf": "cusolver_getrf_ffi",
    "potrf": "cusolver_potrf_ffi",
    "syevd": "cusolver_syevd_ffi",
    "heevd": "cusolver_syevd_ffi",
    "geqrf": "cusolver_geqrf_ffi",
    "orgqr": "cusolver_orgqr_ffi",
    "ungqr": "cusolver_orgqr_ffi",
}


def solver_call(
    builder: FunctionBuilder,
    base: str,
    operands: Sequence[Value],
    result_avals: Sequence[ShapedArray],
    attrs: dict[str, str] | None = None,
    *,
    batch_ndim: int,
) -> list[Value]:
    """One LAPACK routine (`base`, e.g. 'getrf'): LAPACK's kernel on the CPU, cuSOLVER's on
    CUDA. `attrs` are LAPACK's (`uplo`, `mode`); the cuSOLVER ones are derived from them.

    Raises:
      NotImplementedError: for a routine without a cuSOLVER kernel here, on CUDA.
    """
    attrs = dict(attrs or {})
    if lowering_platform() != "cuda":
        target = lapack_target(base, operands[0].aval.dtype)
        return lapack_call(builder, target, operands, result_avals, attrs, batch_ndim=batch_ndim)
    if base not in _CUSOLVER:
        raise NotImplementedError(
            f"mjcore: LAPACK {base} has no GPU kernel in mjcore yet; run it on the CPU "
            "(x.to_device(mjcore.devices('cpu')[0]))"
        )
    gpu_attrs = {}
    if "uplo" in attrs:
        gpu_attrs["lower"] = "true" if attrs["uplo"] == char_attr("L") else "false"
    if base in ("syevd", "heevd"):
        gpu_attrs["algorithm"] = "0 : ui8"  # cuSOLVER's default (QR) algorithm, as JAX's
    config = ", ".join(f"{k} = {v}" for k, v in sorted(gpu_attrs.items()))
    return _ffi_call(builder, _CUSOLVER[base], operands, result_avals, config, batch_ndim, "")


def cusolver_gesvd(
    builder: FunctionBuilder,
    x: Value,
    result_avals: Sequence[ShapedArray],
    *,
    full_matrices: bool,
    compute_uv: bool,
) -> list[Value]:
    """cuSOLVER's gesvd for `x` (batch, m, n): `[a, s, u, vt, info]` as LAPACK's gesdd gives
    them (`result_avals` in that order). The kernel needs m >= n, so a wide matrix goes in
    transposed, as JAX lowers it: read row-major, its transpose is column-major, and the
    kernel's `u`/`vt` of the transpose are this matrix's `vt`/`u`."""
    *_, m, n = x.aval.shape
    transposed = m < n
    a, s, u, vt, info = result_avals
    config = (
        f"compute_uv = {str(compute_uv).lower()}, full_matrices = {str(full_matrices).lower()}, "
        f"transposed = {str(transposed).lower()}"
    )
    if not transposed:
        return _ffi_call(
            builder, "cusolver_gesvd_ffi", [x], result_avals, config, x.aval.ndim - 2, ""
        )
    a_out, s_out, vt_out, u_out, info_out = _ffi_call(
        builder, "cusolver_gesvd_ffi", [x], [a, s, vt, u, info], config, None, ""
    )
    return [a_out, s_out, u_out, vt_out, info_out]


def cusolver_geev(
    builder: FunctionBuilder, x: Value, result_avals: Sequence[ShapedArray], *, right: bool
) -> list[Value]:
    """cuSOLVER's geev (right eigenvectors only): `[a, w, vl, vr, info]`, `w` complex; for a
    real `x`, `vr` is real with conjugate pairs packed as LAPACK packs them."""
    config = f"left = false, right = {str(right).lower()}"
    return _ffi_call(builder, "cusolver_geev_ffi", [x], result_avals, config, x.aval.ndim - 2, "")


def lapack_target(base: str, dtype: np.dtype) -> str:
    """`lapack_dgetrf_ffi` for ("getrf", float64); `base` is the LAPACK routine sans prefix."""
    name = np.dtype(dtype).name
    if name not in _PREFIX:
        raise TypeError(f"LAPACK {base}: unsupported dtype {name}; use float32/64 or complex64/128")
    return f"lapack_{_PREFIX[name]}{base}_ffi"


def char_attr(c: str) -> str:
    """LAPACK's single-character options ('L', 'N', ...) as the ui8 attributes the kernels read."""
    return f"{ord(c)} : ui8"


def _layout(ndim: int, batch_ndim: int) -> str:
    """Column-major in the two trailing axes of a matrix, row-major otherwise (vectors and
    the per-matrix `info`), batch axes major: what the LAPACK kernels expect."""
    order = list(range(ndim - 1, -1, -1))
    if ndim - batch_ndim == 2:
        order = [ndim - 2, ndim - 1, *range(ndim - 3, -1, -1)]
    if not order:
        return "dense<> : tensor<0xindex>"
    return f"dense<[{', '.join(map(str, order))}]> : tensor<{ndim}xindex>"


def lapack_call(
    builder: FunctionBuilder,
    target: str,
    operands: Sequence[Value],
    result_avals: Sequence[ShapedArray],
    attrs: dict[str, str] | None = None,
    *,
    batch_ndim: int,
) -> list[Value]:
    """Emit one LAPACK FFI custom call over `batch_ndim` leading batch axes; matrices are
    passed column-major."""
    _register_lapack()
    config = ", ".join(f"{k} = {v}" for k, v in sorted((attrs or {}).items()))
    return _ffi_call(builder, target, operands, result_avals, config, batch_ndim, "")


def _ffi_call(
    builder: FunctionBuilder,
    target: str,
    operands: Sequence[Value],
    result_avals: Sequence[ShapedArray],
    config: str,
    batch_ndim: int | None,
    extra: str,
) -> list[Value]:
    """One typed-FFI `stablehlo.custom_call`; `batch_ndim` None: every axis is a batch axis
    (plain row-major layouts)."""
    operand_layouts = ", ".join(
        _layout(v.aval.ndim, v.aval.ndim if batch_ndim is None else batch_ndim) for v in operands
    )
    result_layouts = ", ".join(
        _layout(a.ndim, a.ndim if batch_ndim is None else batch_ndim) for a in result_avals
    )
    text = (
        f'call_target_name = "{target}", api_version = 4 : i32, {extra}'
        f"backend_config = {{{config}}}, "
        f"operand_layouts = [{operand_layouts}], result_layouts = [{result_layouts}]"
    )
    outs = builder.op("stablehlo.custom_call", list(operands), list(result_avals), text)
    return list(outs) if isinstance(outs, list) else [outs]


def python_callback(
    builder: FunctionBuilder,
    callback: Callable[..., Any],
    operands: Sequence[Value],
    result_avals: Sequence[ShapedArray],
    *,
    has_side_effect: bool,
) -> list[Value]:
    """Emit a call back into Python on the host, as JAX does.

    jaxlib's `xla_ffi_python_cpu_callback` handler (`xla_ffi_python_gpu_callback`, the CUDA
    plugin's, on a GPU: it copies the operands to the host and the results back) calls
    `callback` (registered with the module, see `ModuleBuilder.add_host_callback`, and named
    by its `index`) with one NumPy array per operand; it must return a tuple of NumPy arrays
    of exactly `result_avals`. A side-effecting call is never removed or merged by XLA, even
    without results.
    """
    index = builder.module.add_host_callback(callback)
    effect = "has_side_effect = true, " if has_side_effect else ""
    config = f"index = {index} : ui64"
    target = f"xla_ffi_python_{'gpu' if lowering_platform() == 'cuda' else 'cpu'}_callback"
    return _ffi_call(builder, target, operands, result_avals, config, None, effect)
