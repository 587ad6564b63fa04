"""StableHLO emission as MLIR text (generic op syntax), so no MLIR bindings sit on import.

Lowering rules build ops through `FunctionBuilder.op`; values are `Value`s carrying their aval.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from mjcore import dtypes
from mjcore.core import ShapedArray


class Value:
    """An SSA value in the function being built, with its abstract value."""

    __slots__ = ("name", "aval")

    def __init__(self, name: str, aval: ShapedArray):
        self.name = name
        self.aval = aval

    def __repr__(self) -> str:
        return f"{self.name}: {tensor_type(self.aval)}"


_type_cache: dict[tuple[tuple[int, ...], np.dtype], str] = {}


class _ShapeDtype(Protocol):
    """What `tensor_type` reads: an aval, or the backend's (shape, dtype) records."""

    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> np.dtype: ...


def tensor_type(aval: _ShapeDtype) -> str:
    """`tensor<3x4xf32>` for an aval."""
    key = (aval.shape, aval.dtype)
    t = _type_cache.get(key)
    if t is None:
        dims = "".join(f"{d}x" for d in aval.shape)
        t = _type_cache[key] = f"tensor<{dims}{dtypes.hlo_name(aval.dtype)}>"
    return t


# --- Attribute formatting -------------------------------------------------------------------


def i64_array(values: Sequence[int]) -> str:
    """A dense i64 array attribute: `array<i64: 1, 2>`."""
    if not values:
        return "array<i64>"
    return f"array<i64: {', '.join(str(int(v)) for v in values)}>"


def bool_array(values: Sequence[bool]) -> str:
    if not values:
        return "array<i1>"
    return f"array<i1: {', '.join('true' if v else 'false' for v in values)}>"


def i64_list(values: Sequence[int]) -> str:
    """A bracketed list used inside structured attributes: `[0, 1]`."""
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _scalar_literal(value: Any, dtype: np.dtype) -> str:
    kind = dtypes.kind(dtype)  # 'f' for bfloat16, whose bits are written as float16's are
    if kind == "b":
        return "true" if bool(value) else "false"
    if kind in "iu":
        return str(int(value))
    if kind == "f":
        bits = np.asarray(value, dtype).reshape(()).view(f"u{dtype.itemsize}")
        return f"0x{int(bits):0{2 * dtype.itemsize}X}"
    if kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        v = complex(value)
        return f"({_scalar_literal(v.real, part)}, {_scalar_literal(v.imag, part)})"
    raise TypeError(f"unsupported constant dtype {dtype}")


def dense_attr(value: np.ndarray, aval: ShapedArray) -> str:
    """A `dense<...>` attribute for a constant; splats and raw hex keep the text small."""
    arr = np.asarray(value, dtype=aval.dtype)
    flat = arr.reshape(-1)
    if flat.size == 0:
        return f"dense<[]> : {tensor_type(aval)}"
    if arr.ndim == 0 or bool((flat == flat[0]).all()):
        return f"dense<{_scalar_literal(flat[0], aval.dtype)}> : {tensor_type(aval)}"
    if aval.dtype.kind == "b":
        body = np.array2string(arr, separator=", ", threshold=arr.size + 1)
        body = body.replace("True", "true").replace("False", "false")
        return f"dense<{body}> : {tensor_type(aval)}"
    raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
    return f'dense<"0x{raw.hex().upper()}"> : {tensor_type(aval)}'


# --- Builders -------------------------------------------------------------------------------


class FunctionBuilder:
    """Accumulates the body of one `func.func` (or of one region block)."""

    def __init__(self, module: ModuleBuilder, indent: str = "    "):
        self.module = module
        self.lines: list[str] = []
        self.indent = indent

    def fresh(self) -> str:
        return self.module.fresh_name()

    def op(
        self,
        name: str,
        operands: Sequence[Value],
        result_avals: ShapedArray | Sequence[ShapedArray],
        attrs: str | None = None,
        regions: Sequence[str] = (),
    ) -> Any:
        """Emit `"name"(operands) ({regions}) {attrs} : (types) -> types`.

        Returns one Value when `result_avals` is a single aval, else a list of Values.
        """
        single = isinstance(result_avals, ShapedArray)
        outs = [result_avals] if isinstance(result_avals, ShapedArray) else list(result_avals)
        in_types = ", ".join(tensor_type(v.aval) for v in operands)
        out_types = ", ".join(tensor_type(a) for a in outs)
        operand_names = ", ".join(v.name for v in operands)
        region_text = f" ({', '.join(regions)})" if regions else ""
        attr_text = f" {{{attrs}}}" if attrs else ""
        sig = f"({in_types}) -> ({out_types})" if len(outs) != 1 else f"({in_types}) -> {out_types}"
        base = self.fresh()
        if len(outs) == 1:
            lhs, values = base, [Value(base, outs[0])]
        else:
            lhs = f"{base}:{len(outs)}"
            values = [Value(f"{base}#{i}", a) for i, a in enumerate(outs)]
        if not outs:
            self.lines.append(
                f'{self.indent}"{name}"({operand_names}){region_text}{attr_text} : {sig}'
            )
            return []
        self.lines.append(
            f'{self.indent}{lhs} = "{name}"({operand_names}){region_text}{attr_text} : {sig}'
        )
        return values[0] if single else values

    def constant(self, value: Any, aval: ShapedArray) -> Value:
        """A constant of the given aval (scalars are splatted)."""
        return self.op("stablehlo.constant", [], aval, f"value = {dense_attr(value, aval)}")

    def region(
        self,
        arg_avals: Sequence[ShapedArray],
        body: Callable[..., Sequence[Value]],
        terminator: str = "stablehlo.return",
    ) -> str:
        """Build a single-block region; `body(builder, *args)` returns the values to yield
        (by `terminator`)."""
        inner = FunctionBuilder(self.module, self.indent + "  ")
        args = [Value(self.fresh(), a) for a in arg_avals]
        results = body(inner, *args)
        types = ", ".join(tensor_type(v.aval) for v in results)
        names = ", ".join(v.name for v in results)
        inner.lines.append(f'{inner.indent}"{terminator}"({names}) : ({types}) -> ()')
        header = ", ".join(f"{v.name}: {tensor_type(v.aval)}" for v in args)
        return (
            "{\n"
            + f"{self.indent}^bb0({header}):\n"
            + "\n".join(inner.lines)
            + f"\n{self.indent}}}"
        )


class ModuleBuilder:
    """A StableHLO module: a public `main` plus any private functions (e.g. inner jit calls)."""

    def __init__(self, name: str = "mjcore"):
        self.name = name
        self.functions: list[str] = []
        self._counter = 0
        # Python functions the module calls back into (`mjcore.pure_callback`, debug
        # callbacks); a custom call names one by its index here, and the list is handed to
        # the compiler with the module text.
        self.host_callbacks: list[Callable[..., Any]] = []
        # Whether sharding ops lower to Shardy's dialect (`sdy.*`; else GSPMD's custom calls),
        # and its meshes (`#sdy.mesh<...>` attribute -> symbol), declared ahead of the
        # functions; the first is `@mesh`, as JAX names it.
        self.shardy = False
        self.meshes: dict[str, str] = {}

    def mesh_symbol(self, mesh_attr: str) -> str:
        """The symbol of the module's `sdy.mesh` with attribute `mesh_attr`, declared on
        first use."""
        name = self.meshes.get(mesh_attr)
        if name is None:
            name = self.meshes[mesh_attr] = f"mesh_{len(self.meshes)}" if self.meshes else "mesh"
        return name

    def add_host_callback(self, fn: Callable[..., Any]) -> int:
        """Register a host callback for this module; returns its index."""
        self.host_callbacks.append(fn)
        return len(self.host_callbacks) - 1

    def fresh_name(self) -> str:
        self._counter += 1
        return f"%{self._counter}"

    def add_function(
        self,
        name: str,
        arg_avals: Sequence[ShapedArray],
        build: Callable[[FunctionBuilder, list[Value]], Sequence[Value]],
        *,
        public: bool = False,
        arg_attrs: Sequence[str | None] | None = None,
        result_attrs: Sequence[str | None] | None = None,
    ) -> list[ShapedArray]:
        """Add `func.func @name`; `build(builder, args)` returns the output values.

        `arg_attrs` gives each argument an optional attribute list, e.g.
        `"tf.aliasing_output = 0 : i32"`.
        """
        fb = FunctionBuilder(self)
        args = [Value(f"%arg{self._counter}_{i}", a) for i, a in enumerate(arg_avals)]
        self._counter += 1
        outs = list(build(fb, args))
        out_types = ", ".join(tensor_type(v.aval) for v in outs)
        names = ", ".join(v.name for v in outs)
        out_header = out_types
        if result_attrs is not None and any(result_attrs):  # e.g. `mhlo.sharding = "..."`
            out_header = ", ".join(
                tensor_type(v.aval) + (f" {{{a}}}" if a else "")
                for v, a in zip(outs, result_attrs, strict=True)
            )
        fb.lines.append(f'{fb.indent}"func.return"({names}) : ({out_types}) -> ()')
        attrs = arg_attrs if arg_attrs is not None else [None] * len(args)
        header = ", ".join(
            f"{v.name}: {tensor_type(v.aval)}" + (f" {{{a}}}" if a else "")
            for v, a in zip(args, attrs, strict=True)
        )
        vis = "public" if public else "private"
        self.functions.append(
            f"  func.func {vis} @{name}({header}) -> ({out_header}) {{\n"
            + "\n".join(fb.lines)
            + "\n  }"
        )
        return [v.aval for v in outs]

    def text(self) -> str:
        meshes = [
            f'  "sdy.mesh"() {{mesh = {attr}, sym_name = "{name}"}} : () -> ()'
            for attr, name in self.meshes.items()
        ]
        return f"module @{self.name} {{\n" + "\n".join(meshes + self.functions) + "\n}\n"
