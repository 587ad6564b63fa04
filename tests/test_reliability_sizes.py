"""Array sizes NumPy cannot describe or allocate raise NumPy's ValueError or MemoryError, with
NumPy's message, eagerly and under jit. Before these checks XLA aborted the interpreter
(SIGABRT), so every case runs in a guarded subprocess."""

import json
import subprocess
import sys
import textwrap

import numpy as onp
import pytest

TOO_BIG = (
    "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size."
)
MAX_DIM = "Maximum allowed dimension exceeded"

# name -> (expression, exception type, start of the message)
CASES = {
    "zeros(2**60)": ("np.zeros(2**60)", "ValueError", TOO_BIG),
    "zeros(2**62)": ("np.zeros(2**62)", "ValueError", TOO_BIG),
    "zeros((2**32,2**32))": ("np.zeros((2**32, 2**32))", "ValueError", TOO_BIG),
    "ones((2**21,)*3)": ("np.ones((2**21,) * 3)", "ValueError", TOO_BIG),
    "empty((2**40,2**30))": ("np.empty((2**40, 2**30))", "ValueError", TOO_BIG),
    "full(2**62)": ("np.full(2**62, 1.0)", "ValueError", TOO_BIG),
    "zeros((2**62,0))": ("np.zeros((2**62, 0))", "ValueError", TOO_BIG),
    "zeros_like-shape": ("np.zeros_like(np.ones(3), shape=(2**62,))", "ValueError", TOO_BIG),
    "broadcast_to(1.0,(2**62,))": ("np.broadcast_to(1.0, (2**62,))", "ValueError", TOO_BIG),
    "arange(2**62)": ("np.arange(2**62)", "ValueError", TOO_BIG),
    "eye(2**31)": ("np.eye(2**31)", "ValueError", TOO_BIG),
    "zeros(2**64)": ("np.zeros(2**64)", "ValueError", MAX_DIM),
    "zeros(2**63)": ("np.zeros(2**63)", "ValueError", MAX_DIM),
    "arange(inf)": ("np.arange(np.inf)", "ValueError", "Maximum allowed size exceeded"),
    "arange(-inf,0)": ("np.arange(-np.inf, 0)", "ValueError", "Maximum allowed size exceeded"),
    "arange(0,2**64)": ("np.arange(0, 2**64)", "ValueError", "Maximum allowed size exceeded"),
    "arange(nan)": ("np.arange(np.nan)", "ValueError", "arange: cannot compute length"),
    "reshape": (
        "np.zeros(4).reshape(2**62, 2**2, 2**2)",
        "ValueError",
        "mjnp.reshape: cannot reshape array of shape (4,)",
    ),
    "zeros(10**13)": (
        "np.zeros(10**13)",
        "MemoryError",
        "Unable to allocate 72.8 TiB for an array with shape (10000000000000,) and data type "
        "float64",
    ),
    "zeros(2**61,int8)": (
        "np.zeros(2**61, np.int8)",
        "MemoryError",
        "Unable to allocate 2.00 EiB for an array with shape (2305843009213693952,) and data "
        "type int8",
    ),
    "jit-zeros(2**60)": ("mjcore.jit(lambda x: np.zeros(2**60) + x)(1.0)", "ValueError", TOO_BIG),
    "jit-broadcast_to": (
        "mjcore.jit(lambda x: np.broadcast_to(x, (2**62,)))(1.0)",
        "ValueError",
        TOO_BIG,
    ),
    "jit-ones((2**21,)*3)": ("mjcore.jit(lambda: np.ones((2**21,) * 3))()", "ValueError", TOO_BIG),
    "jit-zeros(10**13)": (
        "mjcore.jit(lambda x: np.zeros(10**13) + x)(1.0)",
        "MemoryError",
        "Unable to allocate 72.8 TiB",
    ),
    # Past mjnp's checks: XLA's own out-of-memory at run time is a MemoryError too.
    # An eager `lax.full` is a broadcast view of one host value (as `numpy.broadcast_to`):
    # nothing is allocated until a computation needs the whole array.
    "lax.full(10**13)": (
        "mjcore.lax.full((10**13,), 0.0, np.float64) + 1.0",
        "MemoryError",
        "Unable to allocate",
    ),
    "jit-lax.full(10**13)": (
        "mjcore.jit(lambda x: mjcore.lax.broadcast_in_dim(x, (10**13,), ()))(1.0)",
        "MemoryError",
        "Unable to allocate",
    ),
}

_RUNNER = textwrap.dedent(
    """
    import json, sys
    import mjcore, mjnp as np
    for name, expr in json.loads(sys.argv[1]).items():
        print(json.dumps([name, "started"]), flush=True)
        try:
            eval(expr)
            result = ["ok", ""]
        except Exception as err:
            result = [type(err).__name__, str(err)]
        print(json.dumps([name, *result]), flush=True)
    """
)


@pytest.fixture(scope="module")
def outcomes():
    exprs = {name: case[0] for name, case in CASES.items()}
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, json.dumps(exprs)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("[")]
    done = {line[0]: line[1:] for line in lines if line[1] != "started"}
    started = [line[0] for line in lines if line[1] == "started"]
    assert proc.returncode == 0, (
        f"the interpreter died (status {proc.returncode}) in case {started[-1]!r}:\n"
        f"{proc.stderr[-2000:]}"
    )
    return done


@pytest.mark.parametrize("name", list(CASES))
def test_size_error_type_and_message(outcomes, name):
    _, kind, message = CASES[name]
    got_kind, got_message = outcomes[name]
    assert (got_kind, got_message[: len(message)]) == (kind, message)


@pytest.mark.parametrize(
    "expr",
    [
        "onp.zeros(2**60)",
        "onp.zeros((2**32, 2**32))",
        "onp.broadcast_to(1.0, (2**62,))",
        "onp.eye(2**31)",
        "onp.zeros(2**64)",
        "onp.arange(onp.inf)",
        "onp.arange(onp.nan)",
        "onp.zeros((2**62, 0))",
    ],
)
def test_messages_are_numpys(expr):
    """The table's ValueError texts are what NumPy itself raises."""
    with pytest.raises(ValueError) as info:
        eval(expr, {"onp": onp})
    name = next(n for n, c in CASES.items() if c[0] == expr.replace("onp.", "np."))
    assert str(info.value).startswith(CASES[name][2].split(" (")[0])
