"""Lowering of primitives and jaxprs to StableHLO modules (Autodidax Part 3's `jaxpr_subcomp`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from mjcore.backend.hlo import FunctionBuilder, ModuleBuilder, Value
from mjcore.core import Primitive, ShapedArray
from mjcore.errors import MissingRuleError
from mjcore.jaxpr import Literal
from mjcore.partial_eval import trace_to_jaxpr


class LoweringContext:
    """What a lowering rule sees besides its operands: the builder and the avals in and out."""

    __slots__ = ("builder", "avals_in", "avals_out", "module")

    def __init__(
        self,
        builder: FunctionBuilder,
        avals_in: Sequence[ShapedArray],
        avals_out: Sequence[ShapedArray],
    ):
        self.builder = builder
        self.module = builder.module
        self.avals_in = list(avals_in)
        self.avals_out = list(avals_out)

    @property
    def aval_out(self) -> ShapedArray:
        (aval,) = self.avals_out
        return aval


def lower_equation(
    builder: FunctionBuilder,
    prim: Primitive,
    operands: Sequence[Value],
    avals_out: Sequence[ShapedArray],
    params: dict[str, Any],
) -> list[Value]:
    """Emit the ops of one primitive application and return its output values."""
    rule = prim.lowering_rule
    if rule is None:
        raise MissingRuleError(prim.name, "lowering", "Compilation with XLA")
    ctx = LoweringContext(builder, [v.aval for v in operands], avals_out)
    out = rule(ctx, *operands, **params)
    outs = list(out) if prim.multiple_results else [out]
    # Rules compute in the dtype they were given; fix weak-type-only differences silently.
    return [_retype(v, a) for v, a in zip(outs, avals_out, strict=True)]


def _retype(value: Value, aval: ShapedArray) -> Value:
    if value.aval.shape != aval.shape or value.aval.dtype != aval.dtype:
        raise AssertionError(f"lowering produced {value.aval} where {aval} was expected")
    return value if value.aval == aval else Value(value.name, aval)


class LoweredModule(NamedTuple):
    """A module's StableHLO text and the host callbacks its custom calls name by index.

    Two modules with the same text but different callbacks are different programs, so caches
    of executables key on both.
    """

    text: str
    host_callbacks: tuple[Callable[..., Any], ...]


def _finish(module: ModuleBuilder) -> LoweredModule:
    return LoweredModule(module.text(), tuple(module.host_callbacks))


def lower_primitive(
    prim: Primitive,
    avals_in: Sequence[ShapedArray],
    avals_out: Sequence[ShapedArray],
    params: dict[str, Any],
) -> LoweredModule:
    """A module whose `main` applies one primitive: eager dispatch is jit of one primitive."""
    module = ModuleBuilder(f"eager_{prim.name}")

    def build(fb: FunctionBuilder, args: list[Value]) -> list[Value]:
        return lower_equation(fb, prim, args, avals_out, params)

    module.add_function("main", avals_in, build, public=True)
    return _finish(module)


def lower_jaxpr_body(
    builder: FunctionBuilder, jaxpr: Any, consts: Sequence[Value], args: Sequence[Value]
) -> list[Value]:
    """Emit the equations of `jaxpr` into `builder`; literals become constants."""
    env: dict[Any, Value] = {}

    def read(x: Any) -> Value:
        if type(x) is Literal:
            return builder.constant(x.val, x.aval.strip_weak_type())
        return env[x]

    for v, val in zip(jaxpr.constvars, consts, strict=True):
        env[v] = val
    for v, val in zip(jaxpr.invars, args, strict=True):
        env[v] = val
    for eqn in jaxpr.eqns:
        operands = [read(x) for x in eqn.inputs]
        outs = lower_equation(
            builder, eqn.primitive, operands, [v.aval for v in eqn.out_binders], eqn.params
        )
        for v, val in zip(eqn.out_binders, outs, strict=True):
            env[v] = val
    return [read(x) for x in jaxpr.outs]


def lower_fun(fun: Callable[..., Any], multiple_results: bool | None = None) -> Callable[..., Any]:
    """A lowering rule made from a function of existing primitives (JAX's `mlir.lower_fun`).

    The rule traces `fun(*operands, **params)` to a jaxpr at the operands' avals and emits its
    equations inline, e.g. `multiply_add_p.def_lowering(lower_fun(lambda x, y, z: x * y + z))`.
    A function returning a list or tuple lowers a `multiple_results` primitive; pass
    `multiple_results` to insist on one or the other.
    """
    name = getattr(fun, "__name__", type(fun).__name__)

    def rule(ctx: LoweringContext, *operands: Value, **params: Any) -> Any:
        returns_list: list[bool] = []

        def flat_fun(*args: Any) -> list[Any]:
            out = fun(*args, **params)
            returns_list.append(isinstance(out, list | tuple))
            return list(out) if returns_list[0] else [out]

        closed = trace_to_jaxpr(flat_fun, ctx.avals_in, f"lower_fun({name})")
        consts = [
            ctx.builder.constant(np.asarray(c), v.aval)
            for c, v in zip(closed.consts, closed.jaxpr.constvars, strict=True)
        ]
        outs = lower_jaxpr_body(ctx.builder, closed.jaxpr, consts, operands)
        multiple = returns_list[0] if multiple_results is None else multiple_results
        if not multiple and len(outs) != 1:
            raise TypeError(
                f"lower_fun({name}): expected one result, the function gave {len(outs)}"
            )
        return outs if multiple else outs[0]

    return rule


def lower_jaxpr(
    jaxpr: Any,
    name: str = "jit",
    donated: Sequence[bool] = (),
    sharding_attrs: ShardingAttrs | None = None,
    shardy: bool = False,
) -> LoweredModule:
    """A module whose `main` computes a jaxpr with no constvars (consts are arguments).

    Arguments flagged in `donated` are marked so that XLA may reuse their buffers for outputs
    (see `donation_plan`); PJRT then deletes those input buffers when the module runs.
    For XLA's SPMD partitioner (`mjcore.sharded_jit`), `sharding_attrs(module)` gives each
    argument and result an optional sharding attribute entry (`mhlo.sharding = "{...}"`, or
    Shardy's `sdy.sharding = #sdy.sharding<@mesh, ...>`, whose meshes it declares in the
    module); `shardy`: sharding ops inside the program lower to Shardy's dialect too.
    """
    assert not jaxpr.constvars, "hoist constvars into invars before lowering"
    module = ModuleBuilder(_module_name(name))
    module.shardy = shardy

    def build(fb: FunctionBuilder, args: list[Value]) -> list[Value]:
        return lower_jaxpr_body(fb, jaxpr, [], args)

    in_avals = [v.aval for v in jaxpr.invars]
    arg_attrs = None
    if any(donated):
        out_avals = [x.aval for x in jaxpr.outs]
        arg_attrs = donation_plan(in_avals, out_avals, donated).arg_attrs()
    result_attrs = None
    if sharding_attrs is not None:
        arg_shardings, result_attrs = sharding_attrs(module)
        attrs = arg_attrs or [None] * len(in_avals)
        arg_attrs = [_joined(a, t) for a, t in zip(attrs, arg_shardings, strict=True)]
    module.add_function(
        "main", in_avals, build, public=True, arg_attrs=arg_attrs, result_attrs=result_attrs
    )
    return _finish(module)


# (module) -> (an attribute entry or None per argument, likewise per result)
ShardingAttrs = Callable[[ModuleBuilder], tuple[list[str | None], list[str | None]]]


def _joined(attrs: str | None, more: str | None) -> str | None:
    if more is None:
        return attrs
    return more if attrs is None else f"{attrs}, {more}"


class DonationPlan(NamedTuple):
    """What becomes of each donated argument: `aliases[i]` is the output whose buffer input
    `i` becomes; `donors[i]` leaves a same-size input to XLA's buffer assignment; `unused`
    lists the donated inputs that no output can reuse (they are not donated at all)."""

    aliases: list[int | None]
    donors: list[bool]
    unused: list[int]

    def arg_attrs(self) -> list[str | None]:
        return [
            f"tf.aliasing_output = {a} : i32"
            if a is not None
            else ("jax.buffer_donor = true" if d else None)
            for a, d in zip(self.aliases, self.donors, strict=True)
        ]


def donation_plan(
    in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray], donated: Sequence[bool]
) -> DonationPlan:
    """Match donated inputs to outputs, as JAX does: first to an output of the same shape and
    dtype (an input/output alias), then to one of the same byte size (a buffer donor XLA may
    use); each output is claimed once, in order."""
    aliases: list[int | None] = [None] * len(in_avals)
    donors = [False] * len(in_avals)
    free = list(range(len(out_avals)))
    for i, (aval, d) in enumerate(zip(in_avals, donated, strict=True)):
        if d:
            j = next((j for j in free if _same_type(out_avals[j], aval)), None)
            if j is not None:
                aliases[i] = j
                free.remove(j)
    for i, (aval, d) in enumerate(zip(in_avals, donated, strict=True)):
        if d and aliases[i] is None:
            j = next((j for j in free if _nbytes(out_avals[j]) == _nbytes(aval)), None)
            if j is not None:
                donors[i] = True
                free.remove(j)
    unused = [i for i, d in enumerate(donated) if d and aliases[i] is None and not donors[i]]
    return DonationPlan(aliases, donors, unused)


def _same_type(a: ShapedArray, b: ShapedArray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def _nbytes(aval: ShapedArray) -> int:
    return aval.size * aval.dtype.itemsize


def _module_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return f"jit_{cleaned}" if cleaned else "jit"
