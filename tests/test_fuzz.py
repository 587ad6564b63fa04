"""A differential fuzzer: random programs of 2-8 mjnp operations over random shapes and dtypes.

Each program runs on NumPy and on mjnp: eager mjnp must equal NumPy in value, dtype and NaN
positions; `jit` must equal eager; `vmap` must equal a Python loop; for float64 programs of
smooth operations, `grad` must match central differences. CI runs a small derandomized budget
(a few seconds); `make fuzz` runs `MJNP_FUZZ_EXAMPLES` programs (issue 20).

Recorded (2026-11-28, `MJNP_FUZZ_EXAMPLES=5000 MJNP_FUZZ_RANDOM=1`, shared 2-core machine):
`test_fuzz_eager_jit_vmap` 5,000 random programs, no mismatch (30 min), after one found case,
jit's FMA contraction crossing a floor (`test_fuzz_found_fma_then_floor`, 2,914 passing before
it); `test_fuzz_grad_matches_finite_differences` 5,000 programs, no mismatch (81 s). A later
run found the same FMA difference crossing arctan2's branch cut after 461 programs
(`test_fuzz_found_fma_then_arctan2_branch_cut`; arctan2 and where are now checked as
discontinuous steps).

Recorded again (2026-11-28, same settings, `MJNP_FUZZ_LOG` counting; the machine shared, load
4-15). A run found `add -> hypot -> square -> floor` on int32 data 26 under jit/vmap against
25 eagerly: hypot's lowering (`big * sqrt(1 + r**2)`) was 1-2 ulp from C's hypot, which the
eager host path calls (`test_fuzz_found_hypot_then_floor`); hypot now lowers to glibc's
algorithm, bit for bit (`tests/test_hypot_accuracy.py`). Then:
- at a2b7627, eager/jit/vmap: 5,000 programs, no mismatch (21 min).
- grad, three findings, each time the difference wrong and mjcore's gradient right (JAX x64's
  for the first two; for the third, the difference at a step of 1e-6 within 1e-10):
  the second-order difference 3.9 off in 22107 for `sin(x**8)` at the 2,969th program
  (`test_fuzz_found_steep_grad`), the fourth-order one at a step of 1e-6 3.5e-4 off at the
  4,507th of the next run (`test_fuzz_found_steeper_grad`), a step shrunk by the slope alone
  3.6e-3 off at the 306th (`test_fuzz_found_large_polynomial_grad`); the step is now 1e-3 of
  f's length scale where that is shorter than 1e-6. At 8ea8978: 5,000, no mismatch (103 s).
- at 560622c, eager/jit/vmap: float32 sin of ~5e4 amplifying arctan2's last-ulp difference
  (XLA's against NumPy's) to 4e-3 at the 4,603rd program
  (`test_fuzz_found_float32_sin_of_large_argument`); jit-vs-eager and vmap-vs-loop are now
  both step-aware for any step (`_assert_compiled_same`).
- at be87aff: eager/jit/vmap 5,000 programs, no mismatch (8 min 1 s; 822 of them with
  hypot); grad 5,000, no mismatch (32 s).
- at 4f87cb0 (all of the session's branches merged: per-primitive host/XLA choice, eager-grad
  tape replay, reduction warnings), twice: `make fuzz` settings, then again with
  `MJNP_FUZZ_LOG` counting 5,000 eager/jit/vmap and 5,000 grad programs; no mismatch in either
  (4 min 40 s for both tests, quiet machine).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mjcore
import mjnp

_EXAMPLES = int(os.environ.get("MJNP_FUZZ_EXAMPLES", "12"))
# A file to append one line to per program checked: a long run's progress, which hypothesis
# reports only at its end.
_LOG = os.environ.get("MJNP_FUZZ_LOG")
_SETTINGS = settings(
    max_examples=_EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("MJNP_FUZZ_RANDOM") is None,
    suppress_health_check=list(HealthCheck),
    database=None,
)

# Unary steps: (name, f(xp, x)). All keep the shape (reductions keep their axis).
_UNARY = [
    ("negative", lambda xp, x: xp.negative(x)),
    ("sin", lambda xp, x: xp.sin(x)),
    ("cos", lambda xp, x: xp.cos(x)),
    ("tanh", lambda xp, x: xp.tanh(x)),
    ("square", lambda xp, x: xp.square(x)),
    ("abs", lambda xp, x: xp.abs(x)),
    ("sqrt-abs", lambda xp, x: xp.sqrt(xp.abs(x))),
    ("exp-tanh", lambda xp, x: xp.exp(xp.tanh(x))),
    ("log1p-abs", lambda xp, x: xp.log1p(xp.abs(x))),
    ("floor", lambda xp, x: xp.floor(x)),
    ("sign", lambda xp, x: xp.sign(x)),
    ("cumsum", lambda xp, x: xp.cumsum(x, axis=-1)),
    ("sum-keep", lambda xp, x: xp.sum(x, axis=-1, keepdims=True) + x),
    ("max-keep", lambda xp, x: xp.max(x, axis=0, keepdims=True) - x),
    ("mean-keep", lambda xp, x: xp.mean(x, axis=-1, keepdims=True) * x),
    ("flip", lambda xp, x: xp.flip(x, -1)),
    ("sort", lambda xp, x: xp.sort(x, axis=-1)),
    ("clip", lambda xp, x: xp.clip(x, -1, 2)),
    ("where-pos", lambda xp, x: xp.where(x > 0, x, 0.5 * x)),
    ("reciprocal-safe", lambda xp, x: 1.0 / (xp.abs(x) + 1.0)),
    ("nan-of-negative", lambda xp, x: xp.sqrt(x)),
]
# Binary steps: (name, f(xp, x, y)) with y an array of x's shape.
_BINARY = [
    ("add", lambda xp, x, y: xp.add(x, y)),
    ("subtract", lambda xp, x, y: xp.subtract(x, y)),
    ("multiply", lambda xp, x, y: xp.multiply(x, y)),
    ("maximum", lambda xp, x, y: xp.maximum(x, y)),
    ("minimum", lambda xp, x, y: xp.minimum(x, y)),
    ("arctan2", lambda xp, x, y: xp.arctan2(x, y)),
    ("hypot", lambda xp, x, y: xp.hypot(x, y)),
    ("where", lambda xp, x, y: xp.where(x > y, x, y)),
    ("add-scalar", lambda xp, x, y: x + 1.5),
    ("mul-int", lambda xp, x, y: x * 3),
]
# Smooth steps for the gradient check (no kinks near the sampled points).
_SMOOTH = {
    "negative",
    "sin",
    "cos",
    "tanh",
    "square",
    "exp-tanh",
    "cumsum",
    "sum-keep",
    "mean-keep",
    "flip",
    "add",
    "subtract",
    "multiply",
    "add-scalar",
    "mul-int",
    "reciprocal-safe",
    "arctan2",
}

_SHAPES = [(3,), (2, 3), (4, 1), (1, 5), (2, 2, 2)]
_DTYPES = ["float64", "float32", "int32", "int64"]


@st.composite
def _programs(draw, smooth=False):
    shape = draw(st.sampled_from(_SHAPES))
    dtype = "float64" if smooth else draw(st.sampled_from(_DTYPES))
    n = draw(st.integers(2, 8))
    unary = [u for u in _UNARY if not smooth or u[0] in _SMOOTH]
    binary = [b for b in _BINARY if not smooth or b[0] in _SMOOTH]
    steps = []
    for _ in range(n):
        if draw(st.booleans()):
            steps.append(("u", draw(st.sampled_from(range(len(unary))))))
        else:
            steps.append(("b", draw(st.sampled_from(range(len(binary))))))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    size = (n + 1,) + shape
    if dtype.startswith("int"):
        data = rng.integers(-5, 6, size=size).astype(dtype)
    else:
        data = rng.uniform(-2, 2, size=size).astype(dtype)
    return [(unary if k == "u" else binary)[i] for k, i in steps], data


def _run(xp, program, data):
    x = xp.asarray(data[0])
    for j, (_, step) in enumerate(program):
        if step.__code__.co_argcount == 3:
            x = step(xp, x, xp.asarray(data[j + 1]))
        else:
            x = step(xp, x)
    return x


def _describe(program):
    return " -> ".join(name for name, _ in program)


def _assert_same(actual, expected, what, program, ulp_amplified=False):
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    label = f"{what}: {_describe(program)}"
    assert actual.dtype == expected.dtype, (label, actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (label, actual.shape, expected.shape)
    if expected.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=label)
        rtol = 2e-4 if expected.dtype == np.float32 else 1e-9
        if ulp_amplified and expected.dtype == np.float64:
            # NB: under jit XLA contracts `a * b + c` into one FMA (one rounding, as JAX's
            # CPU jit does), a 1-ulp difference from eager that a following sqrt of a
            # cancellation (sqrt(4e-16) = 2e-8) amplifies; found by this fuzzer.
            rtol = 1e-7
        scale = max(
            1.0, float(np.nanmax(np.abs(np.where(np.isinf(expected), 0, expected)), initial=0.0))
        )
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale, err_msg=label)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=label)


# Steps whose result jumps where their input crosses a point (an integer for floor, zero for
# sign and the x > 0 test, x = y for where, x = 0 beside a negative y for arctan2's branch
# cut, pi to -pi), and steps that are ill-conditioned at large arguments (sin of 5e4 in
# float32: one ulp of the argument moves it by 4e-3): a last-ulp input difference there
# changes the result by more than ulps. Any step may be one, so none is singled out.


def _close(actual, expected) -> bool:
    try:
        _assert_same(actual, expected, "", [], ulp_amplified=True)
    except AssertionError:
        return False
    return True


def _eager_step(program, data, k, x):
    """The k-th step (from 1) of `program`, eagerly on `x`."""
    _, step = program[k - 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if step.__code__.co_argcount == 3:
            return step(mjnp, x, mjnp.asarray(data[k]))
        return step(mjnp, x)


def _assert_compiled_same(what, program, data, compiled, expected, compiled_prefix, eager_step):
    """A compiled program (jit, vmap) == its eager run, up to ulps; a larger difference is
    accepted only where it is a last-ulp difference amplified by one step: the first step
    whose compiled and eager results differ beyond ulps (its inputs equal up to ulps) gives,
    run eagerly on the compiled side's input, the compiled side's result. So every step
    before it agrees, and it computes its own function right; what differs is its input's
    last bits, which it steps or amplifies (see above).

    NB: under jit XLA contracts `a * b + c` into one FMA (as JAX's CPU jit does): `max(x) - x`
    after `x = -(3 * s)` is then `fma(3, s, max)`, the rounding error of `3 * s` (-4e-16)
    instead of 0, and a following floor gives -1 where eager gives 0; found by this fuzzer.
    vmap (compiled) against a loop of eager calls (NumPy on the host) differs the same way.
    """
    try:
        _assert_same(compiled, expected, what, program, ulp_amplified=True)
        return
    except AssertionError:
        pass
    previous = None
    for k in range(1, len(program) + 1):
        got, eager = compiled_prefix(k)
        if not _close(got, eager):
            assert previous is not None, (what, "the first step differs", _describe(program[:k]))
            _assert_same(got, eager_step(k, previous), f"{what}, step alone", program[:k])
            return
        previous = got
    _assert_same(compiled, expected, what, program, ulp_amplified=True)


@_SETTINGS
@given(_programs())
def test_fuzz_eager_jit_vmap(case):
    _check_program(*case)
    _log_passed("eager/jit/vmap", case[0])


def _log_passed(test: str, program) -> None:
    if _LOG:
        with open(_LOG, "a") as f:
            f.write(f"{test}: {_describe(program)}\n")


def _check_program(program, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = _run(np, program, data)
        eager = _run(mjnp, program, data)  # mjnp warns where NumPy does
    _assert_same(eager, expected, "eager vs NumPy", program)

    def prefix(k):
        return lambda x: _run(mjnp, program[:k], [x, *data[1:]])

    def eager_prefix(k, x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return prefix(k)(x)

    def jit_prefix(k):
        return mjcore.jit(prefix(k))(data[0]), eager_prefix(k, data[0])

    f = prefix(len(program))
    _assert_compiled_same(
        "jit vs eager",
        program,
        data,
        mjcore.jit(f)(data[0]),
        eager,
        jit_prefix,
        lambda k, x: _eager_step(program, data, k, x),
    )
    # vmap over a batch of two first operands against a Python loop.
    batch = np.stack([data[0], data[0][..., ::-1] if data.ndim > 1 else data[0]])

    def vmap_prefix(k):
        looped = np.stack([np.asarray(eager_prefix(k, b)) for b in batch])
        return mjcore.vmap(prefix(k))(batch), looped

    def looped_step(k, x):
        return np.stack([np.asarray(_eager_step(program, data, k, row)) for row in np.asarray(x)])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        looped = np.stack([np.asarray(f(b)) for b in batch])
        batched = mjcore.vmap(f)(batch)
    _assert_compiled_same("vmap vs loop", program, data, batched, looped, vmap_prefix, looped_step)


def test_fuzz_found_fma_then_floor():
    # Found by `make fuzz` (2,915th program): jit's FMA makes `max(x) - x` -4e-16, not 0,
    # and floor gives -1 (see `_assert_compiled_same`); eager must still equal NumPy exactly.
    steps = dict(_UNARY) | dict(_BINARY)
    names = ["add", "add", "add", "mul-int", "negative", "max-keep", "floor"]
    program = [(name, steps[name]) for name in names]
    data = np.random.default_rng(0).uniform(-2, 2, (8, 3))
    data[0] = [0.54784675, -0.92085314, -1.8361059]
    data[1:4] = [
        [-1.93388946, 1.25308096, 1.65102231],
        [0.4265431, 0.91798624, 0.17449997],
        [1.7402897, 1.26341422, -1.989046],
    ]
    _check_program(program, data)


def test_fuzz_found_fma_then_arctan2_branch_cut():
    # Found by `make fuzz`: `max(m * x) - m * x` is an FMA under jit, -1e-17 where eager has
    # 0, and arctan2 beside a negative y gives -pi for pi.
    steps = dict(_UNARY) | dict(_BINARY)
    program = [(name, steps[name]) for name in ["mean-keep", "max-keep", "arctan2"]]
    data = np.array(
        [
            [0.54784675, -0.92085314, -1.8361059],
            [-1.93388946, 1.25308096, 1.65102231],
            [0.4265431, 0.91798624, 0.17449997],
            [1.7402897, 1.26341422, -1.989046],
        ]
    )
    _check_program(program, data)


def test_fuzz_found_hypot_then_floor():
    # Found by `make fuzz`: hypot's XLA lowering (then `big * sqrt(1 + r**2)`) was 1 ulp from
    # C's hypot, which the eager host path calls, and `floor(hypot(x, y)**2)` was 26 under
    # vmap and jit against 25 eagerly. The lowering is now glibc's algorithm, to the bit.
    steps = dict(_UNARY) | dict(_BINARY)
    program = [(name, steps[name]) for name in ["add", "hypot", "square", "floor"]]
    data = np.array([[4, 2, 0], [-3, -2, -5], [-5, -5, -4], [3, 2, 5], [0, 1, 5]], np.int32)
    _check_program(program, data)
    x = (data[0] + data[1]).astype(np.float64)
    expected = np.floor(np.square(np.hypot(x, data[2])))
    np.testing.assert_array_equal(mjcore.jit(_hypot_square_floor)(x, data[2]), expected)
    np.testing.assert_array_equal(
        mjcore.vmap(_hypot_square_floor)(np.stack([x, x]), np.stack([data[2]] * 2)),
        np.stack([expected, expected]),
    )


def _hypot_square_floor(x, y):
    return mjnp.floor(mjnp.square(mjnp.hypot(x, y)))


def test_fuzz_found_float32_sin_of_large_argument():
    # Found by `make fuzz` (the 4,603rd program): float32 arctan2 in XLA and NumPy differ in
    # the last ulp; through cumsum and squares that becomes an ulp of sin's argument ~5e4,
    # and sin moves by 4e-3 (jit and vmap alike). Each step is right on its own input; see
    # `_assert_compiled_same`.
    steps = dict(_UNARY) | dict(_BINARY)
    names = ["arctan2", "cumsum", "square", "add", "square", "sin"]
    program = [(name, steps[name]) for name in names]
    data = np.array(
        [
            [[0.01835516, -0.5850848, -0.6369425, -0.77605474, -1.3570738]],
            [[0.5862107, -1.7158452, -0.0428975, -0.01823876, -0.5192286]],
            [[-0.36441374, -0.8089237, -1.5738717, -0.89144635, -1.1856462]],
            [[-1.8424689, -1.2481989, 0.27053502, -1.5245662, -0.07702864]],
            [[-1.8340675, -1.0304983, 1.3635772, -1.381569, 1.5869597]],
            [[0.8331385, -0.3717418, -0.41863495, -1.0015182, 1.5489721]],
            [[-1.2750664, -0.7590532, -0.98161584, -0.4761238, 1.2077745]],
        ],
        np.float32,
    )
    _check_program(program, data)


def _directional_difference(f, x, direction, eps):
    """The derivative of f at x along `direction` by the fourth-order central difference.

    NB: the second-order one, (f(x + h) - f(x - h)) / 2h, is off by f^(3) h**2 / 6: 3.9 in
    22107 for `sin(x**8)` at |x| ~ 3.5 (found by this fuzzer: `test_fuzz_found_steep_grad`).
    This one's error is f^(5) h**4 / 30, under 1e-3 there.
    """

    def at(k):
        return float(f(x + k * eps * direction))

    return (-at(2) + 8 * at(1) - 8 * at(-1) + at(-2)) / (12 * eps)


def test_fuzz_found_steep_grad():
    # Found by `make fuzz` (the 2,969th program): mjcore's gradient was right (JAX x64 gives
    # the same), the second-order difference 3.9 off; see `_directional_difference`.
    steps = dict(_UNARY) | dict(_BINARY)
    program = [(name, steps[name]) for name in ["subtract", "square", "square", "square", "sin"]]
    data = np.array(
        [
            [0.54784675, -0.92085314, -1.8361059],
            [-1.93388946, 1.25308096, 1.65102231],
            [0.4265431, 0.91798624, 0.17449997],
            [1.7402897, 1.26341422, -1.989046],
            [1.42961711, -1.8656577, 0.91862179],
            [-1.29737752, 1.45271569, 0.16584488],
        ]
    )
    _check_grad(program, data)


def test_fuzz_found_steeper_grad():
    # Found by `make fuzz` (the 4,507th program of the run after the one above): the
    # gradient -200868.119 (JAX x64 the same), the fourth-order difference with a step of
    # 1e-6 -200797.9; see the step in `_check_grad`.
    steps = dict(_UNARY) | dict(_BINARY)
    names = ["subtract", "add", "add", "add", "square", "square", "square", "sin"]
    program = [(name, steps[name]) for name in names]
    data = np.array(
        [
            [0.54784675, -0.92085314, -1.8361059],
            [-1.93388946, 1.25308096, 1.65102231],
            [0.4265431, 0.91798624, 0.17449997],
            [1.7402897, 1.26341422, -1.989046],
            [1.42961711, -1.8656577, 0.91862179],
            [-1.29737752, 1.45271569, 0.16584488],
            [-0.80115244, -0.30925112, -1.88672132],
            [-1.50286689, 0.68249766, 0.58875805],
            [0.46154045, -0.46528978, 1.98883974],
        ]
    )
    _check_grad(program, data)


def test_fuzz_found_large_polynomial_grad():
    # Found by `make fuzz` (the 306th program of the run after the one above) when the step
    # shrank with the slope alone: ((9 x)**2 + y)**4, of value ~1e10 and slope 1.5e10, needs
    # no smaller step than 1e-6.
    steps = dict(_UNARY) | dict(_BINARY)
    names = ["mul-int", "mul-int", "square", "add", "square", "square"]
    program = [(name, steps[name]) for name in names]
    data = np.array(
        [
            [0.54784675, -0.92085314, -1.8361059],
            [-1.93388946, 1.25308096, 1.65102231],
            [0.4265431, 0.91798624, 0.17449997],
            [1.7402897, 1.26341422, -1.989046],
            [1.42961711, -1.8656577, 0.91862179],
            [-1.29737752, 1.45271569, 0.16584488],
            [-0.80115244, -0.30925112, -1.88672132],
        ]
    )
    _check_grad(program, data)


@_SETTINGS
@given(_programs(smooth=True))
def test_fuzz_grad_matches_finite_differences(case):
    _check_grad(*case)


def _check_grad(program, data):
    def f(x):
        return mjnp.sum(_run(mjnp, program, [x, *data[1:]]))

    x = data[0]
    g = np.asarray(mjcore.grad(f)(x))
    direction = np.random.default_rng(0).standard_normal(x.shape)
    analytic = float(np.sum(g * direction))
    # The step: 1e-6, or 1e-3 of f's length scale |f| / |f'| (|f| at least 1) where that is
    # shorter. `sin(u)` with u' ~ 2e5 varies on a scale of 5e-6, where a step of 1e-6 left
    # the difference 3.5e-4 off (found by this fuzzer: `test_fuzz_found_steeper_grad`); a
    # polynomial of value 1e10 and slope 1.5e10 has a scale of ~1, where a step shrunk by the
    # slope alone left f's rounding error over the step 1e-2 off (`..._large_polynomial_grad`).
    # At 1e-3 of the scale the truncation error is ~1e-12 relative and the rounding error
    # ~1e-13. A wrong analytic value cannot steer the difference to itself: a tiny step only
    # makes the difference noise.
    length = max(1.0, abs(float(f(x)))) / max(abs(analytic), 1e-300)
    eps = min(1e-6, 1e-3 * length)
    numeric = _directional_difference(f, x, direction, eps)
    scale = max(1.0, abs(numeric))
    assert abs(analytic - numeric) <= 1e-4 * scale, (_describe(program), analytic, numeric)
    _log_passed("grad", program)
