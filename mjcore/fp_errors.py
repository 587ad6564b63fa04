"""NumPy's floating-point error model for eager calls (docs/errors.md).

NumPy's error state (`numpy.errstate`, `seterr`, `seterrcall`: one context variable, which
`mjnp.errstate` is) governs eager mjnp: host rules run under it, so a lone NumPy ufunc warns,
raises or calls exactly as NumPy's does. Where one mjnp function runs several host rules (its
traced body) or runs on XLA, this module reports its errors as *one* NumPy ufunc call named
after the function: the rules run with a collecting handler (NumPy's 'call' mode, so a call
without errors costs one context-variable set and reset), and the flags raised are then
handled as the user's state says, with NumPy's texts ("divide by zero encountered in log2").
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from collections.abc import Set as AbstractSet
from types import FrameType
from typing import Any, Literal

import numpy as np

# private: NumPy 2.x is pinned (numpy.errstate costs ~2.5 µs, setting the variable ~0.2 µs)
# (absent from NumPy's stubs, hence the ignores)
from numpy._core._ufunc_config import _extobj_contextvar as fp_state  # type: ignore[attr-defined]
from numpy._core._ufunc_config import _make_extobj  # type: ignore[attr-defined]

from mjcore import core

# NumPy's order of handling (PyUFunc_handlefperr) and texts, with the flag bits 'call' gets.
_KINDS: tuple[tuple[Literal["divide", "over", "under", "invalid"], str, int], ...] = (
    ("divide", "divide by zero", 1),
    ("over", "overflow", 2),
    ("under", "underflow", 4),
    ("invalid", "invalid value", 8),
)
_KIND_OF_TEXT = {text: kind for kind, text, _ in _KINDS}

_local = threading.local()


def _raised() -> list[str]:
    raised = getattr(_local, "raised", None)
    if raised is None:
        raised = _local.raised = []
    return raised


def _collect(errtype: str, flags: int) -> None:
    _raised().append(errtype)


COLLECT = _make_extobj(all="call", call=_collect)
FP_QUIET = _make_extobj(all="ignore")
# every error raises: a host call run under it learns, by FloatingPointError, that it met one
FP_RAISE = _make_extobj(all="raise")


class Collecting:
    """`with Collecting(name, numpy_ufunc, args):` runs host rules with their floating-point
    errors collected, then handles them (under the state outside) as the one NumPy ufunc
    called `name` would: if `numpy_ufunc` is given, by running it on the host values of `args`
    (results discarded), so that NumPy itself decides which errors its algorithm meets (a
    composed body may meet others: `logaddexp(-inf, -inf)` computes `-inf - -inf`); else by
    reporting the flags raised under `name`."""

    __slots__ = ("name", "numpy_ufunc", "args", "token", "start", "raised")

    def __init__(self, name: str, numpy_ufunc: Any = None, args: tuple[Any, ...] = ()):
        self.name = name
        self.numpy_ufunc = numpy_ufunc
        self.args = args

    def __enter__(self) -> Collecting:
        self.raised = _raised()
        self.start = len(self.raised)
        self.token = fp_state.set(COLLECT)
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        fp_state.reset(self.token)
        raised = self.raised
        if len(raised) > self.start:
            if exc_type is None:
                report_collected(raised, self.start, self.name, self.numpy_ufunc, self.args)
            else:
                del raised[self.start :]


def collected() -> list[str]:
    """This thread's list of collected error texts: `Collecting` inlined on hot paths is
    `start = len(collected())`, `token = fp_state.set(COLLECT)`, the rules, then
    `fp_state.reset(token)` and, if the list grew, `report_collected` (or, where a rule
    raised, `del raised[start:]`): ~0.3 µs against the context manager's ~1 µs."""
    return _raised()


def report_collected(
    raised: list[str], start: int, name: str, numpy_ufunc: Any = None, args: tuple[Any, ...] = ()
) -> None:
    """Handle the errors collected since `start` (and drop them), as `Collecting` does."""
    kinds = {_KIND_OF_TEXT[t] for t in raised[start:]}
    del raised[start:]
    if numpy_ufunc is None or not rerun_numpy(numpy_ufunc, args):
        report(name, kinds)


def host_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Arrays' host values; Python scalars as given (NumPy takes them as weak, as mjnp)."""
    return tuple(a._value() if hasattr(a, "_value") else a for a in args)


def rerun_numpy(numpy_ufunc: Any, args: tuple[Any, ...]) -> bool:
    """Run `numpy_ufunc` on `args`' host values for its floating-point errors alone (under the
    user's state; its warnings re-issued at the user's line); False if NumPy cannot run it."""
    values = host_args(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            numpy_ufunc(*values)
        except FloatingPointError:
            raise
        except Exception:  # a dtype or argument NumPy lacks (bfloat16, ...)
            return False
    level = _user_frame_level()
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=level)
    return True


def _user_frame_level() -> int:
    """The stack level of the first frame outside mjnp and mjcore (NumPy's warnings name the
    user's line, and Python's default filter shows each line's warning once)."""
    level = 1
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_OWN_DIRS):
        frame = frame.f_back
        level += 1
    return level


def warn_at_user_line(message: str, category: type[Warning]) -> None:
    """`warnings.warn` at the user's line, as NumPy's Python-level warnings (stacklevel=2 of
    a public function) name their caller ("Mean of empty slice", mjnp/_slice_warnings.py)."""
    warnings.warn(message, category, stacklevel=_user_frame_level())


_OWN_DIRS = tuple(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep + pkg + os.sep
    for pkg in ("mjcore", "mjnp")
)


def report(name: str, kinds: AbstractSet[str]) -> None:
    """Handle floating-point errors `kinds` ('divide', 'over', 'under', 'invalid') of a call
    named `name` as NumPy handles a ufunc's: per NumPy's current error state, in NumPy's order,
    with NumPy's messages (`numpy.errstate`: warn, raise, call, print, log, ignore)."""
    state = np.geterr()
    mask = sum(bit for kind, _, bit in _KINDS if kind in kinds)
    for kind, text, _ in _KINDS:
        if kind not in kinds:
            continue
        mode = state[kind]
        if mode == "ignore":
            continue
        message = f"{text} encountered in {name}"
        if mode == "warn":
            warnings.warn(message, RuntimeWarning, stacklevel=_user_frame_level())
        elif mode == "raise":
            raise FloatingPointError(message)
        elif mode == "call":
            # a callable in 'call' mode, an object with `write` in 'log' mode (NumPy's contract)
            handler: Any = np.geterrcall()
            if handler is None:
                raise ValueError(
                    f"python callback specified for {kind} (in {name}) but no function found."
                )
            handler(text, mask)
        elif mode == "print":
            sys.stderr.write(f"Warning: {message}\n")
        elif mode == "log":
            handler = np.geterrcall()
            if handler is None:
                raise ValueError(
                    f"log specified for {kind} (in {name}) but no object with write method found."
                )
            handler.write(f"Warning: {message}\n")


def all_ignored() -> bool:
    """Whether NumPy's current state ignores every floating-point error."""
    return _modes()[0]


def underflow_ignored() -> bool:
    """Whether NumPy's current state ignores underflow (its default)."""
    return _modes()[1]


# the last state read and its (all ignored, underflow ignored), as one tuple (threads swap
# it whole); `np.geterr()` decodes the state (~3 µs), and a program changes it rarely (each
# `errstate` block makes a new one); holding the state keeps its identity unique
_last_modes: list[tuple[Any, tuple[bool, bool]]] = [(None, (False, True))]


def _modes() -> tuple[bool, bool]:
    state = fp_state.get()
    last = _last_modes[0]
    if state is last[0]:
        return last[1]
    modes = np.geterr()
    flags = (all(m == "ignore" for m in modes.values()), modes["under"] == "ignore")
    _last_modes[0] = (state, flags)
    return flags


def quiet_unless_eager() -> contextlib.AbstractContextManager[Any]:
    """For a NumPy conversion of a constant in library code: the user's error state when the
    call is eager (NumPy's 'overflow encountered in cast'), all ignored while tracing (under
    `jit` nothing warns, as in JAX)."""
    return contextlib.nullcontext() if core._state.eager else np.errstate(all="ignore")
