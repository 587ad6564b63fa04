"""Tracing errors (Autodidax Part 1's interpreter stack, made user-friendly).

Each class subclasses the builtin a NumPy user would catch, so `except TypeError` still works.
"""

from __future__ import annotations


class ConcretizationTypeError(TypeError):
    """A traced value was used where a concrete Python value is needed.

    Causes: Python control flow (`if x > 0`), `int(x)`, `float(x)`, `bool(x)` or a shape computed
    from a traced array inside `jit`, `vmap` or another transformation that abstracts values.

    Fix: mark the argument static (`jit(f, static_argnums=...)`), or express the control flow
    with `mjcore.cond` / `mjcore.where`-style selects so it is traced rather than executed.
    """


class TracerArrayConversionError(TypeError):
    """A traced value was converted to a NumPy array (`numpy.asarray(tracer)`).

    Fix: use `mjnp` functions instead of `numpy` ones on traced values, or move the conversion
    outside the transformed function.
    """


class TracerIntegerConversionError(TypeError):
    """A traced value was used as a Python integer (`range(x)`, `lst[x]`, `__index__`).

    Fix: make the argument static, or use `mjcore.lax.dynamic_slice`-style ops on traced indices.
    """


class InPlaceUpdateError(TypeError):
    """`x[idx] = v` where `x` is a concrete array and `v` is traced by a transformation (a
    constant `zeros(n)` filled inside `vmap` or `jvp`): the handle cannot become a tracer.

    Fix: write `x = x.at[idx].set(v)`, or create `x` from the traced inputs. (`grad` and `jit`
    handle such loops themselves by tracing the whole function.)
    """


class UnexpectedTracerError(Exception):
    """A tracer escaped the transformation that created it (stored in a global or a closure).

    Fix: return values out of transformed functions instead of storing them on the side.
    """


class MissingRuleError(NotImplementedError):
    """A transformation needs a rule that the primitive does not define."""

    def __init__(
        self, primitive_name: str, rule: str, transformation: str, alternative: str | None = None
    ):
        rules = [rule] if alternative is None else [rule, alternative]
        needs = " or ".join(f"{_article(r)} {r} rule" for r in rules)
        defs = " or ".join(f"`{primitive_name}_p.def_{r}(...)`" for r in rules)
        super().__init__(
            f"{transformation} of '{primitive_name}' needs {needs}; define it with {defs} "
            "(see docs/extending.md)."
        )
        self.primitive_name = primitive_name
        self.rule = rule
        self.transformation = transformation


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


class NonConcreteBooleanIndexError(IndexError):
    """A boolean mask with a traced value was used as an index (`x[mask]`, `nonzero(mask)`).

    The result's shape depends on how many entries are True, which is unknown while tracing
    under `jit` or `vmap` (it works eagerly and under `grad` of eager code).

    Fix: keep the shape fixed with `mjnp.where(mask, x, 0)` (or `x * mask`), or compute the mask
    outside the transformed function.
    """
