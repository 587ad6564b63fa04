"""Autodidax Part 1's JVPTrace meets user rules: `custom_jvp` and `custom_vjp`, as JAX's
custom_derivatives — call primitives holding the function and its rule, staged lazily."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from mjcore import core
from mjcore.ad import (
    JVPTracer,
    Zero,
    instantiate,
    is_differentiable,
    is_undefined_primal,
    tangent_aval,
)
from mjcore.backend.lowering import lower_jaxpr_body
from mjcore.batching import NOT_MAPPED, batch_jaxpr_like, moveaxis_to
from mjcore.core import Primitive, ShapedArray, get_aval
from mjcore.errors import UnexpectedTracerError
from mjcore.jaxpr import ClosedJaxpr, eval_jaxpr, hoist_consts
from mjcore.lax.base import add_any, convert_element_type, full, zeros_like
from mjcore.lax.reductions import reduce_sum
from mjcore.partial_eval import JaxprTracer, trace_to_jaxpr
from mjcore.tree_util import (
    PyTreeDef,
    register_pytree_node,
    tree_flatten,
    tree_map,
    tree_structure,
    tree_unflatten,
)

# --- shared helpers -------------------------------------------------------------------------


def _fun_name(fun: Any) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def _resolve_kwargs(
    fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], kind: str
) -> tuple[Any, ...]:
    """Arguments as a positional tuple with defaults filled in, as JAX's `resolve_kwargs`."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        if kwargs:
            raise TypeError(
                f"{kind} function {_fun_name(fun)} has no signature, so keyword arguments "
                "cannot be resolved to positions; pass them positionally"
            ) from None
        return args
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as err:
        raise TypeError(
            f"The input arguments to the {kind}-decorated function {_fun_name(fun)} could "
            f"not be resolved to positional-only arguments. Binding failed with the error:\n{err}"
        ) from err
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(
            f"The {kind}-decorated function {_fun_name(fun)} has keyword-only parameters "
            f"({', '.join(bound.kwargs)}); {kind} functions take positional arguments only"
        )
    return tuple(bound.args)


def _check_argnums(kind: str, name: str, argnums: tuple[int, ...], nargs: int) -> None:
    for i in argnums:
        if not 0 <= i < nargs:
            raise TypeError(
                f"{kind} function {name} has nondiff_argnums={argnums} but was called with "
                f"{nargs} positional arguments"
            )


def _check_array_leaves(
    kind: str, name: str, what: str, leaves: Sequence[Any], hint: str = ""
) -> None:
    for x in leaves:
        if not core.is_array_like(x):
            raise TypeError(
                f"{kind} function {name}: {what} must be arrays or Python scalars (or pytrees "
                f"of them), got {type(x).__name__}: {x!r:.80}{hint}"
            )


_NONDIFF_HINT = "; mark non-array arguments with nondiff_argnums"


def _merge_args(
    nondiff_argnums: tuple[int, ...], nondiff: list[Any], diff: Sequence[Any]
) -> list[Any]:
    nondiff_it, diff_it = iter(nondiff), iter(diff)
    n = len(nondiff) + len(diff)
    return [next(nondiff_it) if i in nondiff_argnums else next(diff_it) for i in range(n)]


class _OutType:
    """The output tree and avals of a custom function, recorded by whichever of the function
    and its rules runs first and checked against the others."""

    __slots__ = ("name", "tree", "avals", "who")

    def __init__(self, name: str) -> None:
        self.name = name
        self.tree: PyTreeDef | None = None
        self.avals: list[ShapedArray] = []
        self.who = ""

    def record(self, tree: PyTreeDef, leaves: Sequence[Any], who: str, kind: str) -> None:
        _check_array_leaves(kind, self.name, f"the outputs of {who}", leaves)
        avals = [get_aval(x) for x in leaves]
        if self.tree is None:
            self.tree, self.avals, self.who = tree, avals, who
            return
        same = tree == self.tree and all(
            a.shape == b.shape and a.dtype == b.dtype
            for a, b in zip(avals, self.avals, strict=True)
        )
        if not same:
            raise TypeError(
                f"{kind} function {self.name}: {who} must produce an output of the same pytree "
                f"structure, shapes and dtypes as {self.who}, but it produced "
                f"{_describe(tree, avals)} where {self.who} produced "
                f"{_describe(self.tree, self.avals)}"
            )


def _describe(tree: PyTreeDef, avals: Sequence[ShapedArray]) -> str:
    return str(tree_unflatten(tree, [a.str_short() for a in avals])).replace("'", "")


def _closure_error(kind: str) -> TypeError:
    rules = "custom_jvp rule" if kind == "custom_jvp" else "custom_vjp fwd and bwd rules"
    return TypeError(
        f"Detected differentiation of a {kind} function with respect to a closed-over value. "
        f"That isn't supported because the {kind} rule only specifies how to differentiate "
        f"the {kind} function with respect to explicit input parameters. Try passing the "
        f"closed-over value into the {kind} function as an argument, and adapting the {rules}."
    )


def _axis_size(vals: Sequence[Any], dims: Sequence[int | None]) -> int:
    return next(get_aval(v).shape[d] for v, d in zip(vals, dims, strict=True) if d is not None)


def _unbatched_aval(aval: ShapedArray, bdim: int | None) -> ShapedArray:
    if bdim is NOT_MAPPED:
        return aval
    return aval.update(shape=aval.shape[:bdim] + aval.shape[bdim + 1 :])


def _batched_to_front(
    fun: Callable[..., list[Any]], dims: Sequence[int | None], axis_size: int
) -> Callable[..., list[Any]]:
    """`fun` vectorised over inputs batched at `dims`, every output batched at axis 0."""

    def batched(*args: Any) -> list[Any]:
        vals, bdims = batch_jaxpr_like(fun, args, dims, axis_size)
        return [moveaxis_to(v, d, 0, axis_size) for v, d in zip(vals, bdims, strict=True)]

    return batched


def _call_jaxpr_lowering(ctx: Any, *args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    # The function body is inlined: the custom rule only matters to differentiation.
    return lower_jaxpr_body(ctx.builder, call_jaxpr.jaxpr, [], args)


def _call_abstract_eval(
    kind: str, avals: Sequence[ShapedArray], params: dict[str, Any]
) -> list[ShapedArray]:
    if "call_jaxpr" in params:
        return params["call_jaxpr"].out_avals
    return trace_to_jaxpr(params["fun"], avals, kind).out_avals


# --- custom_jvp -----------------------------------------------------------------------------


class custom_jvp:
    """A function with a user-defined JVP rule, as JAX's `custom_jvp`.

    Differentiation (`jvp`, `grad`, `linearize`, ...) uses the rule instead of tracing into the
    function; evaluation, `jit` and `vmap` run the function itself (and keep the rule for a
    later differentiation). For example, a numerically stable `log(1 + exp(x))`::

        @custom_jvp
        def log1pexp(x):
            return np.log1p(np.exp(x))

        @log1pexp.defjvp
        def log1pexp_jvp(primals, tangents):
            (x,), (x_dot,) = primals, tangents
            return log1pexp(x), x_dot / (1 + np.exp(-x))

    Args:
      fun: the function; its arguments are arrays or pytrees of arrays.
      nondiff_argnums: positions of arguments that are not differentiated (functions,
        configuration values, or arrays to treat as constants). The rule receives them first:
        `jvp(*nondiff_args, primals, tangents)`.

    The rule gets `primals` and `tangents`, tuples with one entry per differentiable argument,
    and returns `(primal_out, tangent_out)` of matching structures. Zero tangents arrive as
    arrays of zeros unless `defjvp(..., symbolic_zeros=True)`, which passes `mjcore.ad.Zero`
    objects instead. The rule may close over values that are not differentiated, but not over
    values being differentiated (pass those as arguments).
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted({int(i) for i in nondiff_argnums}))
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """Define the JVP rule `jvp(*nondiff_args, primals, tangents) -> (out, out_dot)`.

        Returns `jvp`, so this works as a decorator.
        """
        self.jvp = jvp
        self.symbolic_zeros = bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """Define the JVP as a sum of per-argument rules `jvp_i(x_dot_i, primal_out, *primals)`.

        A None entry marks an argument with no derivative.
        """
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
            if len(jvps) != len(primals):
                raise TypeError(
                    f"custom_jvp function {_fun_name(self.fun)}: defjvps got {len(jvps)} rules "
                    f"for {len(primals)} arguments; give one rule (or None) per argument"
                )
            primal_out = self(*primals)
            terms = [
                rule(t, primal_out, *primals)
                for t, rule in zip(tangents, jvps, strict=True)
                if rule is not None
            ]
            if not terms:
                return primal_out, tree_map(zeros_like, primal_out)
            return primal_out, tree_map(lambda *ts: functools.reduce(add_any, ts), *terms)

        self.defjvp(jvp)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = _fun_name(self.fun)
        rule = self.jvp
        if rule is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_jvp")
        argnums = self.nondiff_argnums
        _check_argnums("custom_jvp", name, argnums, len(args))
        # Tracers inside non-differentiable arguments are passed as extra inputs whose tangents
        # are dropped (stop_gradient); everything else in them is closed over as is.
        nondiff_leaves, nondiff_tree = tree_flatten([args[i] for i in argnums])
        extra_pos = [i for i, x in enumerate(nondiff_leaves) if isinstance(x, core.Tracer)]
        extras = [nondiff_leaves[i] for i in extra_pos]
        n_extra = len(extras)

        def nondiff_args(extra_vals: Sequence[Any]) -> list[Any]:
            leaves = list(nondiff_leaves)
            for i, v in zip(extra_pos, extra_vals, strict=True):
                leaves[i] = v
            return tree_unflatten(nondiff_tree, leaves)

        diff_args = tuple(a for i, a in enumerate(args) if i not in argnums)
        args_flat, in_tree = tree_flatten(diff_args)
        _check_array_leaves("custom_jvp", name, "arguments", args_flat, _NONDIFF_HINT)
        out_type = _OutType(name)
        symbolic_zeros = self.symbolic_zeros
        rule_name = _fun_name(rule)

        def fun_flat(*xs: Any) -> list[Any]:
            py_args = tree_unflatten(in_tree, xs[n_extra:])
            out = self.fun(*_merge_args(argnums, nondiff_args(xs[:n_extra]), py_args))
            out_flat, out_tree = tree_flatten(out)
            out_type.record(out_tree, out_flat, f"the custom_jvp function {name}", "custom_jvp")
            return out_flat

        def jvp_flat(*xs: Any) -> list[Any]:
            n = len(xs) // 2
            primals, tangents = xs[n_extra:n], xs[n + n_extra :]
            if not symbolic_zeros:
                tangents = tuple(instantiate(t) for t in tangents)
            pair = rule(
                *nondiff_args(xs[:n_extra]),
                tree_unflatten(in_tree, primals),
                tree_unflatten(in_tree, tangents),
            )
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise TypeError(
                    f"Custom JVP rule {rule_name} for function {name} must produce a pair (list "
                    f"or tuple of length two) representing primal and tangent outputs, but got "
                    f"{pair!r:.200}."
                )
            primals_out, out_tree = tree_flatten(pair[0])
            tangents_out, out_tree2 = tree_flatten(pair[1])
            if out_tree != out_tree2:
                raise TypeError(
                    f"Custom JVP rule {rule_name} for function {name} must produce primal and "
                    "tangent outputs with equal container (pytree) structures, but got "
                    f"{out_tree} and {out_tree2} respectively."
                )
            out_type.record(
                out_tree, primals_out, f"the primal output of JVP rule {rule_name}", "custom_jvp"
            )
            tangents_out = [
                _check_tangent_out(p, t) for p, t in zip(primals_out, tangents_out, strict=True)
            ]
            return [*primals_out, *tangents_out]

        fun_flat.__name__, jvp_flat.__name__ = name, rule_name
        outs = custom_jvp_call_p.bind(
            *extras,
            *args_flat,
            fun=fun_flat,
            jvp=jvp_flat,
            num_consts=0,
            symbolic_zeros=symbolic_zeros,
        )
        assert out_type.tree is not None
        return tree_unflatten(out_type.tree, outs)


def _check_tangent_out(primal: Any, tangent: Any) -> Any:
    p_aval = get_aval(primal)
    expected = tangent_aval(p_aval)
    if type(tangent) is Zero or not is_differentiable(p_aval):
        return Zero(expected)
    if not core.is_array_like(tangent):
        raise TypeError(
            f"Custom JVP rule must produce array tangent outputs, got {type(tangent).__name__}"
        )
    aval = get_aval(tangent)
    if aval.shape != expected.shape or (aval.dtype != expected.dtype and not aval.weak_type):
        raise TypeError(
            "Custom JVP rule must produce primal and tangent outputs with corresponding shapes "
            f"and dtypes. Expected {expected.str_short()} (tangent type of "
            f"{p_aval.str_short()}) but got {aval.str_short()}."
        )
    if aval.dtype != expected.dtype:
        tangent = convert_element_type(tangent, expected.dtype)
    return tangent


# The `custom_jvp_call` primitive. Before staging its params hold Python callables:
#   fun(*consts, *args) -> outs;  jvp(*primals, *tangents) -> [*outs, *tangents_out]
# (tangents may be `Zero`; the jvp sees no consts). `jit`/`make_jaxpr` stage it as one equation
# holding `call_jaxpr` (the function, consts hoisted to its first `num_consts` inputs) and
# `jvp_jaxpr_fun`, which traces the rule into a jaxpr only when something differentiates it.
custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)


class _JvpJaxprFun:
    """A jvp rule traced to a jaxpr on first use, once per pattern of zero input tangents."""

    __slots__ = ("_jvp", "_in_avals", "_name", "_cache")

    def __init__(self, jvp: Callable[..., list[Any]], in_avals: Sequence[ShapedArray], name: str):
        self._jvp = jvp
        self._in_avals = list(in_avals)
        self._name = name
        self._cache: dict[tuple[bool, ...], tuple[ClosedJaxpr, list[bool]]] = {}

    def jaxpr(self, nonzeros: tuple[bool, ...]) -> tuple[ClosedJaxpr, list[bool]]:
        """A jaxpr from (primals, nonzero tangents) to (outs, nonzero tangents out)."""
        hit = self._cache.get(nonzeros)
        if hit is not None:
            return hit
        in_avals, n = self._in_avals, len(self._in_avals)
        out_nonzeros: list[bool] = []

        def rule(*args: Any) -> list[Any]:
            nz_tangents = iter(args[n:])
            tangents = [
                next(nz_tangents) if nz else Zero(tangent_aval(a))
                for nz, a in zip(nonzeros, in_avals, strict=True)
            ]
            outs = self._jvp(*args[:n], *tangents)
            m = len(outs) // 2
            out_nonzeros[:] = [type(t) is not Zero for t in outs[m:]]
            return [*outs[:m], *(t for t in outs[m:] if type(t) is not Zero)]

        t_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzeros, strict=True) if nz]
        closed = trace_to_jaxpr(rule, [*in_avals, *t_avals], f"custom_jvp rule {self._name}")
        hit = self._cache[nonzeros] = (closed, list(out_nonzeros))
        return hit

    def __call__(self, *args: Any) -> list[Any]:
        n = len(args) // 2
        tangents = args[n:]
        closed, out_nonzeros = self.jaxpr(tuple(type(t) is not Zero for t in tangents))
        nz_in = [t for t in tangents if type(t) is not Zero]
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *args[:n], *nz_in)
        m = len(out_nonzeros)
        nz_out = iter(outs[m:])
        tangents_out = [
            next(nz_out) if nz else Zero(tangent_aval(a))
            for nz, a in zip(out_nonzeros, closed.out_avals[:m], strict=True)
        ]
        return [*outs[:m], *tangents_out]

    def __repr__(self) -> str:
        return self._name


def _jvp_call_fun(params: dict[str, Any]) -> Callable[..., list[Any]]:
    if "fun" in params:
        return params["fun"]
    call_jaxpr = params["call_jaxpr"]
    return functools.partial(eval_jaxpr, call_jaxpr.jaxpr, call_jaxpr.consts)


def _jvp_call_rule(params: dict[str, Any]) -> Callable[..., list[Any]]:
    return params["jvp"] if "jvp" in params else params["jvp_jaxpr_fun"]


@custom_jvp_call_p.def_impl
def _custom_jvp_call_impl(*args: Any, **params: Any) -> list[Any]:
    # Eagerly the function runs as Python, so value-dependent control flow works.
    return _jvp_call_fun(params)(*args)


@custom_jvp_call_p.def_abstract_eval
def _custom_jvp_call_abstract_eval(*avals: ShapedArray, **params: Any) -> list[ShapedArray]:
    return _call_abstract_eval("custom_jvp", avals, params)


def _custom_jvp_call_staging(trace: Any, tracers: list[Any], **params: Any) -> list[Any]:
    if "fun" in params:
        n = params["num_consts"]
        in_avals = [t.aval for t in tracers]
        closed = trace_to_jaxpr(params["fun"], in_avals, "custom_jvp")
        call_jaxpr, consts = hoist_consts(closed)
        tracers = [*(core.full_raise(trace, c) for c in consts), *tracers]
        params = dict(
            call_jaxpr=call_jaxpr,
            jvp_jaxpr_fun=_JvpJaxprFun(params["jvp"], in_avals[n:], _fun_name(params["jvp"])),
            num_consts=n + len(consts),
            symbolic_zeros=params["symbolic_zeros"],
        )
    return trace.stage_equation(custom_jvp_call_p, tracers, params, params["call_jaxpr"].out_avals)


custom_jvp_call_p.staging_rule = _custom_jvp_call_staging


@custom_jvp_call_p.def_jvp(symbolic_zeros=True)
def _custom_jvp_call_jvp(
    primals: list[Any], tangents: list[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    n = params["num_consts"]
    if any(type(t) is not Zero for t in tangents[:n]):
        raise _closure_error("custom_jvp")
    outs = _jvp_call_rule(params)(*primals[n:], *tangents[n:])
    m = len(outs) // 2
    return outs[:m], outs[m:]


@custom_jvp_call_p.def_batching
def _custom_jvp_call_batching(
    vals: list[Any], dims: list[int | None], **params: Any
) -> tuple[list[Any], list[int]]:
    # Batch the function and the rule, keeping the rule for a later differentiation.
    n = params["num_consts"]
    axis_size = _axis_size(vals, dims)
    fun = _batched_to_front(_jvp_call_fun(params), dims, axis_size)
    jvp = _batched_jvp(_jvp_call_rule(params), dims[n:], axis_size)
    outs = custom_jvp_call_p.bind(
        *vals, fun=fun, jvp=jvp, num_consts=n, symbolic_zeros=params["symbolic_zeros"]
    )
    return outs, [0] * len(outs)


def _batched_jvp(
    jvp: Callable[..., list[Any]], dims: Sequence[int | None], axis_size: int
) -> Callable[..., list[Any]]:
    """A batched jvp rule: tangents are batched like their primals; zeros stay unbatched."""

    def rule(*args: Any) -> list[Any]:
        return [instantiate(x) for x in jvp(*args)]

    def batched(*args: Any) -> list[Any]:
        n = len(args) // 2
        tangents = [
            Zero(_unbatched_aval(t.aval, d)) if type(t) is Zero else t
            for t, d in zip(args[n:], dims, strict=True)
        ]
        t_dims = [NOT_MAPPED if type(t) is Zero else d for t, d in zip(tangents, dims, strict=True)]
        return _batched_to_front(rule, [*dims, *t_dims], axis_size)(*args[:n], *tangents)

    batched.__name__ = f"vmap({_fun_name(jvp)})"
    return batched


@custom_jvp_call_p.def_partial_eval
def _custom_jvp_call_partial_eval(trace: Any, tracers: list[Any], **params: Any) -> list[Any]:
    # Partial evaluation with unknown inputs only builds linear functions (linearize), after
    # the rule has been applied, so the rule is not needed any more: inline the function.
    outs = _jvp_call_fun(params)(*tracers)
    return [core.full_raise(trace, x) for x in outs]


custom_jvp_call_p.def_lowering(_call_jaxpr_lowering)


# --- custom_vjp -----------------------------------------------------------------------------


class custom_vjp:
    """A function with a user-defined VJP (reverse-mode) rule, as JAX's `custom_vjp`.

    `grad`, `vjp` and `linearize` + transpose use the rule: `fwd(*args) -> (out, residuals)`
    runs on the forward pass and `bwd(residuals, out_bar) -> args_bar` on the backward pass.
    Evaluation, `jit` and `vmap` run the function itself. Forward-mode differentiation
    (`jvp`, `jacfwd`) of a custom_vjp function raises `TypeError`. For example, gradient
    clipping::

        @custom_vjp
        def clip_gradient(lo, hi, x):
            return x

        def clip_gradient_fwd(lo, hi, x):
            return x, (lo, hi)

        def clip_gradient_bwd(res, g):
            lo, hi = res
            return (None, None, np.clip(g, lo, hi))

        clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)

    Args:
      fun: the function; its arguments are arrays or pytrees of arrays.
      nondiff_argnums: positions of non-differentiable arguments that are not arrays
        (functions, configuration values). `fwd` receives every argument in order; `bwd`
        receives the non-differentiable ones first: `bwd(*nondiff_args, residuals, out_bar)`.

    `bwd` returns a tuple with one entry per differentiable argument, matching its structure;
    None (for an argument or a leaf) means a zero cotangent. Residuals must be arrays or
    pytrees of arrays. The functions must not close over values being differentiated.
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted({int(i) for i in nondiff_argnums}))
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(
        self, fwd: Callable[..., Any], bwd: Callable[..., Any], symbolic_zeros: bool = False
    ) -> None:
        """Define the rule: `fwd(*args) -> (out, res)` and `bwd(*nondiff, res, g) -> args_bar`."""
        if symbolic_zeros:
            raise NotImplementedError(
                "custom_vjp.defvjp: symbolic_zeros=True is not supported; zero cotangents are "
                "passed to bwd as arrays of zeros"
            )
        self.fwd = fwd
        self.bwd = bwd

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = _fun_name(self.fun)
        fwd, bwd = self.fwd, self.bwd
        if fwd is None or bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_vjp")
        argnums = self.nondiff_argnums
        _check_argnums("custom_vjp", name, argnums, len(args))
        nondiff = [args[i] for i in argnums]
        for x in tree_flatten(nondiff)[0]:
            if isinstance(x, core.Tracer):
                raise UnexpectedTracerError(
                    f"custom_vjp function {name} got a traced value in a position marked by "
                    "nondiff_argnums as non-differentiable. Tracers cannot be passed as "
                    "non-differentiable arguments to custom_vjp functions; nondiff_argnums "
                    "should only mark arguments that are not arrays (e.g. functions). Pass "
                    "array-valued arguments as differentiable ones (bwd may return None for "
                    "them)."
                )
        diff_args = tuple(a for i, a in enumerate(args) if i not in argnums)
        args_flat, in_tree = tree_flatten(diff_args)
        _check_array_leaves("custom_vjp", name, "arguments", args_flat, _NONDIFF_HINT)
        in_avals = [get_aval(x) for x in args_flat]
        out_type = _OutType(name)
        res_trees: list[PyTreeDef] = []
        fwd_name = _fun_name(fwd)

        def fun_flat(*xs: Any) -> list[Any]:
            out = self.fun(*_merge_args(argnums, nondiff, tree_unflatten(in_tree, xs)))
            out_flat, out_tree = tree_flatten(out)
            out_type.record(out_tree, out_flat, f"the custom_vjp function {name}", "custom_vjp")
            return out_flat

        def fwd_flat(*xs: Any) -> tuple[list[Any], list[Any]]:
            pair = fwd(*_merge_args(argnums, nondiff, tree_unflatten(in_tree, xs)))
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise TypeError(
                    f"Custom VJP fwd rule {fwd_name} for function {name} must produce a pair "
                    "(list or tuple of length two) where the first element represents the "
                    "primal output and the second element represents residuals, but got "
                    f"{pair!r:.200}."
                )
            out_flat, out_tree = tree_flatten(pair[0])
            out_type.record(
                out_tree, out_flat, f"the primal output of fwd rule {fwd_name}", "custom_vjp"
            )
            res_flat, res_tree = tree_flatten(pair[1])
            _check_array_leaves("custom_vjp", name, f"the residuals of {fwd_name}", res_flat)
            res_trees[:] = [res_tree]
            return res_flat, out_flat

        fun_flat.__name__, fwd_flat.__name__ = name, fwd_name
        bwd_flat = _FlatBwd(bwd, nondiff, in_tree, in_avals, out_type, res_trees, name)
        outs = custom_vjp_call_p.bind(
            *args_flat, fun=fun_flat, fwd=fwd_flat, bwd=bwd_flat, num_consts=0
        )
        assert out_type.tree is not None
        return tree_unflatten(out_type.tree, outs)


class _FlatBwd:
    """The user's bwd on flat residuals and cotangents, returning one cotangent per input leaf
    (zeros where bwd gives None)."""

    __slots__ = ("bwd", "nondiff", "in_tree", "in_avals", "out_type", "res_trees", "name")

    def __init__(
        self,
        bwd: Callable[..., Any],
        nondiff: list[Any],
        in_tree: PyTreeDef,
        in_avals: list[ShapedArray],
        out_type: _OutType,
        res_trees: list[PyTreeDef],
        name: str,
    ) -> None:
        self.bwd = bwd
        self.nondiff = nondiff
        self.in_tree = in_tree
        self.in_avals = in_avals
        self.out_type = out_type
        self.res_trees = res_trees
        self.name = name

    def __call__(self, *args: Any) -> list[Any]:
        (res_tree,), out_tree = self.res_trees, self.out_type.tree
        assert out_tree is not None, "fwd runs before bwd"
        k = res_tree.num_leaves
        res = tree_unflatten(res_tree, args[:k])
        cts_out = tree_unflatten(out_tree, args[k:])
        cts_in = self.bwd(*self.nondiff, res, cts_out)
        arg_trees = self.in_tree.children()
        if isinstance(cts_in, list) and len(cts_in) == len(arg_trees):
            cts_in = tuple(cts_in)
        if not isinstance(cts_in, tuple) or len(cts_in) != len(arg_trees):
            raise TypeError(
                f"Custom VJP bwd rule {_fun_name(self.bwd)} for function {self.name} must "
                "produce a tuple of length equal to the number of (differentiable) arguments "
                f"of the primal function, {len(arg_trees)}, but got {cts_in!r:.200}."
            )
        leaves: list[Any] = []
        for i, (ct, arg_tree) in enumerate(zip(cts_in, arg_trees, strict=True)):
            if ct is None:
                leaves.extend([None] * arg_tree.num_leaves)
                continue
            ct_leaves, ct_tree = tree_flatten(ct, is_leaf=lambda x: x is None)
            if ct_tree != arg_tree:
                raise TypeError(
                    f"Custom VJP bwd rule {_fun_name(self.bwd)} for function {self.name} must "
                    "produce an output with the same container (pytree) structure as the args "
                    f"tuple of the primal function, but at output[{i}] got {ct_tree} for an "
                    f"argument of structure {arg_tree}."
                )
            leaves.extend(ct_leaves)
        out = []
        for i, (ct, aval) in enumerate(zip(leaves, self.in_avals, strict=True)):
            expected = tangent_aval(aval)
            if ct is None or not is_differentiable(aval):
                out.append(full(expected.shape, 0, expected.dtype))
                continue
            ct_aval = get_aval(ct)
            if ct_aval.shape != expected.shape or (
                ct_aval.dtype != expected.dtype and not ct_aval.weak_type
            ):
                raise ValueError(
                    f"Custom VJP bwd rule {_fun_name(self.bwd)} for function {self.name} must "
                    "produce an output with the same shapes/dtypes as the args tuple of the "
                    f"primal function, but at flat output {i} it produced "
                    f"{ct_aval.str_short()} for an input of type {expected.str_short()}."
                )
            if ct_aval.dtype != expected.dtype:
                ct = convert_element_type(ct, expected.dtype)
            out.append(ct)
        return out

    def __repr__(self) -> str:
        return _fun_name(self.bwd)


# The `custom_vjp_call` primitive. Before staging its params hold Python callables:
#   fun(*consts, *args) -> outs;  fwd(*args) -> (residuals, outs);
#   bwd(*residuals, *out_cts) -> one cotangent per arg (fwd and bwd see no consts).
# Staged, `call_jaxpr` replaces `fun` and `fwd_jaxpr_fun` traces `fwd` on first use; `bwd`
# stays Python, called by the transpose of `custom_lin`.
custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)


class _FwdJaxprFun:
    """A custom_vjp fwd rule traced to a jaxpr on first use."""

    __slots__ = ("_fwd", "_in_avals", "_name", "_cache")

    def __init__(self, fwd: Callable[..., Any], in_avals: Sequence[ShapedArray], name: str):
        self._fwd = fwd
        self._in_avals = list(in_avals)
        self._name = name
        self._cache: tuple[ClosedJaxpr, int] | None = None

    def jaxpr(self) -> tuple[ClosedJaxpr, int]:
        """A jaxpr from the arguments to (residuals, outs), and the number of residuals."""
        if self._cache is None:
            num_res: list[int] = []

            def fwd(*args: Any) -> list[Any]:
                res, outs = self._fwd(*args)
                num_res.append(len(res))
                return [*res, *outs]

            closed = trace_to_jaxpr(fwd, self._in_avals, f"custom_vjp fwd {self._name}")
            self._cache = (closed, num_res[0])
        return self._cache

    def __call__(self, *args: Any) -> tuple[list[Any], list[Any]]:
        closed, k = self.jaxpr()
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        return outs[:k], outs[k:]

    def __repr__(self) -> str:
        return self._name


def _vjp_call_fwd(params: dict[str, Any]) -> Callable[..., tuple[list[Any], list[Any]]]:
    return params["fwd"] if "fwd" in params else params["fwd_jaxpr_fun"]


@custom_vjp_call_p.def_impl
def _custom_vjp_call_impl(*args: Any, **params: Any) -> list[Any]:
    return _jvp_call_fun(params)(*args)


@custom_vjp_call_p.def_abstract_eval
def _custom_vjp_call_abstract_eval(*avals: ShapedArray, **params: Any) -> list[ShapedArray]:
    return _call_abstract_eval("custom_vjp", avals, params)


def _custom_vjp_call_staging(trace: Any, tracers: list[Any], **params: Any) -> list[Any]:
    if "fun" in params:
        n = params["num_consts"]
        in_avals = [t.aval for t in tracers]
        closed = trace_to_jaxpr(params["fun"], in_avals, "custom_vjp")
        call_jaxpr, consts = hoist_consts(closed)
        tracers = [*(core.full_raise(trace, c) for c in consts), *tracers]
        params = dict(
            call_jaxpr=call_jaxpr,
            fwd_jaxpr_fun=_FwdJaxprFun(params["fwd"], in_avals[n:], _fun_name(params["fwd"])),
            bwd=params["bwd"],
            num_consts=n + len(consts),
        )
    return trace.stage_equation(custom_vjp_call_p, tracers, params, params["call_jaxpr"].out_avals)


custom_vjp_call_p.staging_rule = _custom_vjp_call_staging


@custom_vjp_call_p.def_jvp(symbolic_zeros=True)
def _custom_vjp_call_jvp(
    primals: list[Any], tangents: list[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    # Run fwd now; the tangent map is `custom_lin`, whose transpose calls bwd. Evaluating
    # custom_lin itself (forward mode) raises.
    n = params["num_consts"]
    if any(type(t) is not Zero for t in tangents[:n]):
        raise _closure_error("custom_vjp")
    primals, tangents = primals[n:], tangents[n:]
    res, primals_out = _vjp_call_fwd(params)(*primals)
    in_nonzeros = tuple(type(t) is not Zero for t in tangents)
    tangents_out = custom_lin_p.bind(
        *res,
        *(t for t in tangents if type(t) is not Zero),
        num_res=len(res),
        bwd=params["bwd"],
        out_avals=tuple(tangent_aval(get_aval(x)) for x in primals_out),
        in_nonzeros=in_nonzeros,
    )
    return primals_out, tangents_out


@custom_vjp_call_p.def_batching
def _custom_vjp_call_batching(
    vals: list[Any], dims: list[int | None], **params: Any
) -> tuple[list[Any], list[int]]:
    n = params["num_consts"]
    axis_size = _axis_size(vals, dims)
    fun = _batched_to_front(_jvp_call_fun(params), dims, axis_size)
    fwd = _batched_fwd(_vjp_call_fwd(params), dims[n:], axis_size)
    bwd = _batched_bwd(params["bwd"], dims[n:], axis_size)
    outs = custom_vjp_call_p.bind(*vals, fun=fun, fwd=fwd, bwd=bwd, num_consts=n)
    return outs, [0] * len(outs)


def _batched_fwd(
    fwd: Callable[..., Any], dims: Sequence[int | None], axis_size: int
) -> Callable[..., tuple[list[Any], list[Any]]]:
    def batched(*args: Any) -> tuple[list[Any], list[Any]]:
        num_res: list[int] = []

        def flat(*xs: Any) -> list[Any]:
            res, outs = fwd(*xs)
            num_res.append(len(res))
            return [*res, *outs]

        outs = _batched_to_front(flat, dims, axis_size)(*args)
        return outs[: num_res[0]], outs[num_res[0] :]

    batched.__name__ = f"vmap({_fun_name(fwd)})"
    return batched


def _batched_bwd(
    bwd: Callable[..., list[Any]], dims: Sequence[int | None], axis_size: int
) -> Callable[..., list[Any]]:
    """bwd on residuals and cotangents batched at axis 0; input cotangents come out batched
    like the inputs, summed over the batch for unbatched inputs."""

    def batched(*args: Any) -> list[Any]:
        cts, bdims = batch_jaxpr_like(bwd, args, [0] * len(args), axis_size)
        out = []
        for ct, bdim, dst in zip(cts, bdims, dims, strict=True):
            if dst is NOT_MAPPED:
                out.append(ct if bdim is NOT_MAPPED else reduce_sum(ct, (bdim,)))
            else:
                out.append(moveaxis_to(ct, bdim, dst, axis_size))
        return out

    batched.__name__ = f"vmap({_fun_name(bwd)})"
    return batched


@custom_vjp_call_p.def_partial_eval
def _custom_vjp_call_partial_eval(trace: Any, tracers: list[Any], **params: Any) -> list[Any]:
    outs = _jvp_call_fun(params)(*tracers)
    return [core.full_raise(trace, x) for x in outs]


custom_vjp_call_p.def_lowering(_call_jaxpr_lowering)


# The linear tangent map of a custom_vjp function: (residuals, nonzero tangents) -> tangents.
# Only its transpose (which calls bwd) can be evaluated.
custom_lin_p = Primitive("custom_lin", multiple_results=True)


def _raise_custom_vjp_error_on_jvp(*_: Any, **__: Any) -> Any:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


custom_lin_p.def_impl(_raise_custom_vjp_error_on_jvp)
custom_lin_p.def_jvp(_raise_custom_vjp_error_on_jvp)
custom_lin_p.def_batching(_raise_custom_vjp_error_on_jvp)
custom_lin_p.def_lowering(_raise_custom_vjp_error_on_jvp)


@custom_lin_p.def_abstract_eval
def _custom_lin_abstract_eval(*avals: ShapedArray, out_avals, **_: Any) -> list[ShapedArray]:
    return list(out_avals)


@custom_lin_p.def_transpose
def _custom_lin_transpose(
    cts: list[Any],
    *args: Any,
    num_res: int,
    bwd: Callable[..., list[Any]],
    out_avals: tuple[ShapedArray, ...],
    in_nonzeros: tuple[bool, ...],
) -> list[Any]:
    assert not any(is_undefined_primal(r) for r in args[:num_res])
    cts_in = bwd(*args[:num_res], *(instantiate(ct) for ct in cts))
    nz_cts = [ct for ct, nz in zip(cts_in, in_nonzeros, strict=True) if nz]
    return [None] * num_res + nz_cts


# --- custom_gradient and closure_convert ----------------------------------------------------


class _GradientRule:
    """custom_gradient's residuals: the user's gradient function traced to a jaxpr. Its
    constants (values it closes over) are the pytree leaves, so they flow as residuals."""

    __slots__ = ("jaxpr", "consts", "in_tree", "out_tree")

    def __init__(self, jaxpr: Any, consts: list[Any], in_tree: PyTreeDef, out_tree: PyTreeDef):
        self.jaxpr = jaxpr
        self.consts = consts
        self.in_tree = in_tree
        self.out_tree = out_tree


def _gradient_rule_flatten(r: _GradientRule) -> tuple[list[Any], tuple[Any, ...]]:
    return r.consts, (r.jaxpr, r.in_tree, r.out_tree)


def _gradient_rule_unflatten(aux: tuple[Any, ...], consts: Any) -> _GradientRule:
    jaxpr, in_tree, out_tree = aux
    return _GradientRule(jaxpr, list(consts), in_tree, out_tree)


register_pytree_node(_GradientRule, _gradient_rule_flatten, _gradient_rule_unflatten)


def custom_gradient(fun: Callable[..., Any]) -> custom_vjp:
    """A function with a custom gradient given by the function itself, as JAX's
    `custom_gradient`; built on `custom_vjp`.

    `fun(*args)` returns `(value, vjp_fn)`, where `vjp_fn(ct)` maps an output cotangent to
    the cotangents of `args` (a tuple, or a single value when there is one argument)::

        @custom_gradient
        def f(x):
            return x ** 2, lambda g: (g * x,)

    `vjp_fn` may close over values computed in `fun`; it is traced to a jaxpr when the
    forward pass runs, and those values become residuals.

    NB: keyword arguments are bound to positions through `fun`'s signature, as for
    `custom_vjp` functions; JAX's `custom_gradient` rejects them.
    """

    def primal(*args: Any) -> Any:
        ans, _ = fun(*args)
        return ans

    functools.update_wrapper(primal, fun)

    def fwd(*args: Any) -> tuple[Any, _GradientRule]:
        ans, rule = fun(*args)
        ans_flat, out_tree = tree_flatten((ans,))
        ct_avals = [tangent_aval(get_aval(x)) for x in ans_flat]
        in_tree_cell: list[PyTreeDef] = []

        def rule_flat(*cts: Any) -> list[Any]:
            cts_in = rule(*tree_unflatten(out_tree, cts))
            leaves, tree = tree_flatten(cts_in)
            in_tree_cell.append(tree)
            return leaves

        closed = trace_to_jaxpr(rule_flat, ct_avals, f"custom_gradient {_fun_name(rule)}")
        return ans, _GradientRule(closed.jaxpr, list(closed.consts), in_tree_cell[0], out_tree)

    def bwd(res: _GradientRule, cts: Any) -> tuple[Any, ...]:
        cts_flat, out_tree = tree_flatten((cts,))
        if out_tree != res.out_tree:
            raise TypeError(
                f"custom_gradient function {_fun_name(fun)}: cotangent structure {out_tree} "
                f"does not match the output structure {res.out_tree}"
            )
        cts_in = tree_unflatten(res.in_tree, eval_jaxpr(res.jaxpr, res.consts, *cts_flat))
        return (cts_in,) if res.in_tree == tree_structure(0) else cts_in

    wrapped = custom_vjp(primal)
    wrapped.defvjp(fwd, bwd)
    return wrapped


def _maybe_perturbed(x: Any) -> bool:
    """Whether `x` might carry a nonzero tangent (JAX's heuristic of the same name)."""
    if not isinstance(x, core.Tracer):
        return False
    if isinstance(x, JVPTracer) and type(x.tangent) is Zero:
        return _maybe_perturbed(x.primal)
    if isinstance(x, JaxprTracer):
        # Staged out: differentiation may come later, except for types with no tangent space.
        return is_differentiable(x.aval)
    return True


def closure_convert(
    fun: Callable[..., Any], *example_args: Any
) -> tuple[Callable[..., Any], list[Any]]:
    """`fun` with the values it closes over that might be differentiated made explicit
    arguments, as JAX's `closure_convert`.

    Returns `(converted, consts)` where `converted(*args, *consts) == fun(*args)` for
    arguments of the structure, shapes and dtypes of `example_args`. `consts` are the traced
    values `fun` closes over (concrete ones stay closed over). This lets a function passed
    to a `custom_vjp` function take its closed-over values as differentiable arguments.
    """
    flat_args, in_tree = tree_flatten(example_args)
    _check_array_leaves("closure_convert", _fun_name(fun), "example arguments", flat_args)
    in_avals = [get_aval(x) for x in flat_args]
    out_tree_cell: list[PyTreeDef] = []

    def flat_fun(*xs: Any) -> list[Any]:
        out_flat, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, xs)))
        out_tree_cell.append(out_tree)
        return out_flat

    closed = trace_to_jaxpr(flat_fun, in_avals, f"closure_convert({_fun_name(fun)})")
    jaxpr, out_tree = closed.jaxpr, out_tree_cell[0]
    hoisted_mask = [_maybe_perturbed(c) for c in closed.consts]
    closure_consts = [c for c, h in zip(closed.consts, hoisted_mask, strict=True) if not h]
    hoisted_consts = [c for c, h in zip(closed.consts, hoisted_mask, strict=True) if h]
    num_hoisted = len(hoisted_consts)

    def converted_fun(*args_hconsts: Any) -> Any:
        num_args = len(args_hconsts) - num_hoisted
        args, hoisted = args_hconsts[:num_args], iter(args_hconsts[num_args:])
        closure = iter(closure_consts)
        consts = [next(hoisted) if h else next(closure) for h in hoisted_mask]
        all_args, in_tree2 = tree_flatten(tuple(args))
        if in_tree != in_tree2:
            raise TypeError(
                "The inputs to the closure produced by closure_convert must have the same "
                "pytree structure as the example arguments passed when closure_convert was "
                f"called. Expected {in_tree}, but got {in_tree2}"
            )
        return tree_unflatten(out_tree, eval_jaxpr(jaxpr, consts, *all_args))

    converted_fun.__name__ = f"closure_convert({_fun_name(fun)})"
    return converted_fun, hoisted_consts
