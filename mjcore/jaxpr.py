"""Autodidax Part 2: the jaxpr language — data types, typechecker, evaluator and printer
(printing follows "Understanding Jaxprs")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, final

import numpy as np

from mjcore import core, dtypes
from mjcore.core import Primitive, ShapedArray


@final  # (so that `type(x) is Var` narrows an Atom to Literal otherwise)
class Var:
    """A jaxpr variable: identity is the object, the type is its aval."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var({self.aval.str_short()})"


@final
class Literal:
    """A scalar constant written inline in an equation."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.val})"


Atom = Var | Literal


class JaxprEqn(NamedTuple):
    primitive: Primitive
    inputs: list[Atom]
    params: dict[str, Any]
    out_binders: list[Var]


class Jaxpr:
    """`{ lambda constvars ; invars . let eqns in outs }`."""

    __slots__ = ("constvars", "invars", "eqns", "outs", "__weakref__")

    def __init__(
        self,
        constvars: list[Var],
        invars: list[Var],
        eqns: list[JaxprEqn],
        outs: list[Atom],
    ):
        self.constvars = constvars
        self.invars = invars
        self.eqns = eqns
        self.outs = outs

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outs]

    def __repr__(self) -> str:
        return pp_jaxpr(self)

    def __str__(self) -> str:
        return pp_jaxpr(self)


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""

    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]):
        assert len(jaxpr.constvars) == len(consts)
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> list[JaxprEqn]:
        return self.jaxpr.eqns

    def __repr__(self) -> str:
        return pp_jaxpr(self.jaxpr)

    __str__ = __repr__


# --- Typechecking ---------------------------------------------------------------------------


class JaxprTypeError(TypeError):
    """A jaxpr is ill-typed: an internal error of a transformation or a user primitive."""


def typecheck_jaxpr(jaxpr: Jaxpr) -> tuple[list[ShapedArray], list[ShapedArray]]:
    """Check every equation against its primitive's abstract evaluation; return the type."""
    env: set[Var] = set()
    for v in (*jaxpr.constvars, *jaxpr.invars):
        if v in env:
            raise JaxprTypeError(f"variable {v} is bound twice")
        env.add(v)
    for eqn in jaxpr.eqns:
        in_avals = [_typecheck_atom(env, x) for x in eqn.inputs]
        out_avals = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        if len(out_avals) != len(eqn.out_binders):
            raise JaxprTypeError(f"{eqn.primitive}: wrong number of outputs")
        for out_binder, out_aval in zip(eqn.out_binders, out_avals, strict=True):
            if not _types_match(out_aval, out_binder.aval):
                raise JaxprTypeError(
                    f"{eqn.primitive}: binder {out_binder.aval} does not match output {out_aval}"
                )
        for out_binder in eqn.out_binders:
            if out_binder in env:
                raise JaxprTypeError(f"variable {out_binder} is bound twice")
            env.add(out_binder)
    out_types = [_typecheck_atom(env, x) for x in jaxpr.outs]
    return [v.aval for v in jaxpr.invars], out_types


def _types_match(a: ShapedArray, b: ShapedArray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def _typecheck_atom(env: set[Var], x: Atom) -> ShapedArray:
    if isinstance(x, Var):
        if x not in env:
            raise JaxprTypeError(f"unbound variable {x}")
        return x.aval
    if isinstance(x, Literal):
        return x.aval
    raise JaxprTypeError(f"bad atom {x!r}")


# --- Evaluation -----------------------------------------------------------------------------


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Interpret a jaxpr with `bind`, so it evaluates under whatever transformations are active."""
    env: dict[Var, Any] = {}

    def read(x: Atom) -> Any:
        return env[x] if type(x) is Var else x.val

    for v, val in zip(jaxpr.constvars, consts, strict=True):
        env[v] = val
    for v, val in zip(jaxpr.invars, args, strict=True):
        env[v] = val
    for eqn in jaxpr.eqns:
        outs = core.bind(eqn.primitive, [read(x) for x in eqn.inputs], eqn.params)
        for v, val in zip(eqn.out_binders, outs, strict=True):
            env[v] = val
    return [read(x) for x in jaxpr.outs]


def eval_closed_jaxpr(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    """Evaluate a closed jaxpr on arguments (under any active transformation)."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def hoist_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Turn constvars into leading invars, so constants are passed as arguments."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, []
    return ClosedJaxpr(Jaxpr([], [*j.constvars, *j.invars], j.eqns, j.outs), []), closed.consts


# --- Printing -------------------------------------------------------------------------------


class _Names:
    """Variable names `a, b, ..., z, ba, bb, ...` shared by a jaxpr and its sub-jaxprs."""

    def __init__(self) -> None:
        self.names: dict[Var, str] = {}

    def __call__(self, v: Var) -> str:
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = _alphabetic(len(self.names))
        return name


def _alphabetic(n: int) -> str:
    s = chr(ord("a") + n % 26)
    n //= 26
    while n:
        s = chr(ord("a") + n % 26) + s
        n //= 26
    return s


def pp_jaxpr(jaxpr: Jaxpr, names: _Names | None = None, indent: int = 0) -> str:
    """Print in the grammar of "Understanding Jaxprs"."""
    names = names or _Names()
    used = _used_vars(jaxpr)

    def binder(v: Var) -> str:
        label = names(v) if v in used else "_"
        return f"{label}:{v.aval.str_short()}"

    constvars = " ".join(binder(v) for v in jaxpr.constvars)
    invars = " ".join(binder(v) for v in jaxpr.invars)
    header = f"{{ lambda {constvars}; {invars}. let"
    eqn_lines = [_pp_eqn(e, names, used, indent + 4) for e in jaxpr.eqns]
    outs = ", ".join(_pp_atom(x, names) for x in jaxpr.outs)
    outs = f"({outs},)" if len(jaxpr.outs) == 1 else f"({outs})"
    one_line = f"{header} {' '.join(eqn_lines)} in {outs} }}"
    if len(jaxpr.eqns) <= 1 and "\n" not in one_line and len(one_line) + indent <= 80:
        return one_line
    pad = " " * (indent + 4)
    body = "\n".join(pad + line for line in eqn_lines)
    return f"{header}\n{body}\n{' ' * (indent + 2)}in {outs} }}"


def _used_vars(jaxpr: Jaxpr) -> set[Var]:
    used = {x for e in jaxpr.eqns for x in e.inputs if type(x) is Var}
    used.update(x for x in jaxpr.outs if type(x) is Var)
    return used


def _pp_atom(x: Atom, names: _Names) -> str:
    if type(x) is Var:
        return names(x)
    return _pp_literal(x)


def _pp_literal(x: Literal) -> str:
    val = np.asarray(x.val)
    if val.dtype.kind == "b":
        return "True" if val else "False"
    if val.dtype.kind in "iu":
        return str(int(val))
    if dtypes.kind(val.dtype) == "f":
        return repr(float(val))
    return repr(complex(val))


def _pp_eqn(eqn: JaxprEqn, names: _Names, used: set[Var], indent: int) -> str:
    lhs = " ".join(
        f"{names(v) if v in used else '_'}:{v.aval.str_short()}" for v in eqn.out_binders
    )
    params = _pp_params(eqn.params, names, indent)
    rhs = " ".join(_pp_atom(x, names) for x in eqn.inputs)
    return f"{lhs} = {eqn.primitive.name}{params} {rhs}".rstrip()


def _pp_params(params: dict[str, Any], names: _Names, indent: int) -> str:
    if not params:
        return ""
    items = []
    multiline = False
    for key in sorted(params):
        value = params[key]
        text = _pp_param_value(value, names, indent + 2)
        # Sub-jaxprs always go on lines of their own, as in "Understanding Jaxprs".
        multiline |= "\n" in text or _holds_jaxpr(value)
        items.append(f"{key}={text}")
    if multiline:
        pad = " " * (indent + 2)
        return "[\n" + "\n".join(pad + item for item in items) + f"\n{' ' * indent}]"
    return "[" + " ".join(items) + "]"


def _holds_jaxpr(value: Any) -> bool:
    if isinstance(value, tuple):
        return any(_holds_jaxpr(v) for v in value)
    return isinstance(value, Jaxpr | ClosedJaxpr)


def _pp_param_value(value: Any, names: _Names, indent: int) -> str:
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        return pp_jaxpr(value, names, indent)
    if (
        isinstance(value, tuple)
        and value
        and all(isinstance(v, Jaxpr | ClosedJaxpr) for v in value)
    ):
        pad = " " * (indent + 2)
        inner = "\n".join(pad + _pp_param_value(v, names, indent + 2) for v in value)
        return f"(\n{inner}\n{' ' * indent})"
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    return str(value)
