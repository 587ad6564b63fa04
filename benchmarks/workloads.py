"""The registry of workloads: what is measured, for which contenders, in what order.

Workloads that need a transformation mjcore does not have yet are registered all the same; their
mjnp contender reports `n/a (needs mjcore.jit)` until `mjcore.jit` exists, and then measures
with no change here. The model code is written once against a NumPy-like namespace `xp`.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import eager_programs, frameworks, namespace_ops, scaling, targets
from benchmarks.harness import Contender, Workload

ROOT = Path(__file__).resolve().parent.parent


def _data(shape: int | tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _with_autograd(names: tuple[str, ...]) -> tuple[str, ...]:
    """autograd is not a dependency: it joins only where it is installed."""
    return names + ("autograd",) if frameworks.is_installed("autograd") else names


# --- Import time ------------------------------------------------------------------------------

_IMPORTS = {
    "mjnp": "import mjnp, mjcore",
    "jax": "import jax, jax.numpy",
    "numpy": "import numpy",
    # The floor under mjcore's import: the XLA extension it runs on.
    "jaxlib._jax": "from jaxlib import _jax",
    "autograd": "import autograd, autograd.numpy",
}

_IMPORT_SCRIPT = (
    "import time\nt = time.perf_counter_ns()\n{statement}\nprint(time.perf_counter_ns() - t)\n"
)


# Children run as a user's interpreter would: with bytecode caching (some sandboxes set
# PYTHONDONTWRITEBYTECODE, which would make every import of our sources a compile).
_CHILD_ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "TF_CPP_MIN_LOG_LEVEL": "2",
}


def _run_child(code: str) -> str:
    """Run `code` in a fresh interpreter at the repository root; return its stdout."""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=_CHILD_ENV,
        check=False,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"subprocess failed: {last}")
    return proc.stdout.strip().splitlines()[-1]


def _import_time(name: str) -> Contender:
    def prepare() -> Callable[[], float]:
        if name == "mjnp":
            frameworks.load("mjnp")  # n/a, with the reason, when mjnp does not import yet
        code = _IMPORT_SCRIPT.format(statement=_IMPORTS[name])
        _run_child(code)  # warm the bytecode cache once, as after an install
        return lambda: int(_run_child(code)) / 1e6

    return Contender(name, prepare)


# What a user waits for before the first number: import, a NumPy array to the device, two ops
# (each compiled on first use) and the value back. Libraries that defer work from import to
# first use (a client, a compiler, modules imported lazily) pay it here.
_FIRST_RESULT = {
    "mjnp": "import mjnp as xp",
    "jax": "import jax.numpy as xp",
    "numpy": "import numpy as xp",
}
_FIRST_RESULT_SCRIPT = (
    "import time\nt = time.perf_counter_ns()\n{statement}\nimport numpy\n"
    "float(xp.sum(xp.sin(xp.asarray(numpy.arange(5.0)))))\n"
    "print(time.perf_counter_ns() - t)\n"
)


def _first_result(name: str) -> Contender:
    def prepare() -> Callable[[], float]:
        if name == "mjnp":
            frameworks.load("mjnp")
        code = _FIRST_RESULT_SCRIPT.format(statement=_FIRST_RESULT[name])
        _run_child(code)  # warm the bytecode cache once, as after an install
        return lambda: int(_run_child(code)) / 1e6

    return Contender(name, prepare)


# --- Eager operations -------------------------------------------------------------------------

# op name -> (what it computes, a factory of the zero-argument call from (xp, x, y))
_EAGER_OPS: dict[str, tuple[str, Callable[[Any, Any, Any], Callable[[], Any]]]] = {
    "add": ("x + y", lambda xp, x, y: lambda: x + y),
    "sin": ("np.sin(x)", lambda xp, x, y: functools.partial(xp.sin, x)),
    "sum": ("np.sum(x)", lambda xp, x, y: functools.partial(xp.sum, x)),
}
_SIZES = {"100": 100, "1e6": 1_000_000}


def _eager(name: str, op: str, n: int) -> Contender:
    def prepare() -> Callable[[], Any]:
        fw = frameworks.load(name)
        call = _EAGER_OPS[op][1](fw.xp, fw.put(_data(n, 0)), fw.put(_data(n, 1)))
        if name in ("numpy", "autograd"):
            return call
        return lambda: call().block_until_ready()

    return Contender(name, prepare)


def _lax_add(n: int) -> Contender:
    """mjcore's own primitive, below mjnp's promotion layer: the floor of mjnp's `x + y`."""

    def prepare() -> Callable[[], Any]:
        import mjcore

        add = mjcore.lax.add
        x, y = mjcore.device_put(_data(n, 0)), mjcore.device_put(_data(n, 1))
        return lambda: add(x, y).block_until_ready()

    return Contender("mjcore.lax", prepare)


def _eager_workload(op: str, size: str) -> Workload:
    n = _SIZES[size]
    names = _with_autograd(("mjnp", "jax", "numpy"))
    contenders = [_eager(name, op, n) for name in names]
    if op == "add":
        contenders.insert(1, _lax_add(n))
    return Workload(
        f"eager_{op}_{size}",
        f"eager `{_EAGER_OPS[op][0]}`, float32[{size}]",
        tuple(contenders),
    )


# --- Floors -----------------------------------------------------------------------------------


def _pjrt_floor(path: str) -> Contender:
    """Execute a tiny compiled add straight through jaxlib, without any library around it."""

    def prepare() -> Callable[[], Any]:
        fw = frameworks.load("jax")
        import jax
        from jaxlib import _jax, xla_client

        x, y = fw.put(_data(100, 0)), fw.put(_data(100, 1))
        text = jax.jit(lambda a, b: a + b).lower(x, y).as_text()
        device = jax.devices("cpu")[0]
        exe = device.client.compile_and_load(
            text, xla_client.DeviceList((device,)), xla_client.CompileOptions()
        )
        args = [x, y]
        if path == "execute":
            # What `LoadedExecutable.execute` costs: execute_sharded, then a Python callback per
            # output to build its sharding.
            return lambda: exe.execute(args)[0].block_until_ready()
        handlers = [_jax.array_result_handler(x.aval, x.sharding, True, _skip_checks=True)]
        return lambda: (
            exe.execute_sharded(args).consume_with_handlers(handlers)[0].block_until_ready()
        )

    return Contender(f"pjrt {path}", prepare)


def _copy_floor(n: int) -> Contender:
    def prepare() -> Callable[[], Any]:
        src, dst = _data(n, 0), np.empty(n, np.float32)
        return functools.partial(np.copyto, dst, src)

    return Contender("numpy", prepare)


# --- Compiled workloads (need mjcore.jit and friends) -----------------------------------------


def _framework_contender(
    name: str, needs: tuple[str, ...], build: Callable[..., Callable[[], Any]]
) -> Contender:
    """The contender `name` measuring `build(framework)`, needing the transformations `needs`."""

    def prepare() -> Callable[[], Any]:
        return build(frameworks.load(name, needs))

    return Contender(name, prepare)


def _jit_dispatch(fw: frameworks.Framework) -> Callable[[], Any]:
    f = fw.jit(lambda x, y: x + y)
    x, y = fw.put(_data(100, 0)), fw.put(_data(100, 1))
    return lambda: f(x, y).block_until_ready()


def _chain(xp: Any, x: Any, y: Any) -> Any:
    return xp.tanh(xp.sin(x) * y + 0.5 * x) * 2.0 - y


def _fused_chain(fw: frameworks.Framework) -> Callable[[], Any]:
    x, y = fw.put(_data(1_000_000, 0)), fw.put(_data(1_000_000, 1))
    if fw.jit is None:
        return functools.partial(_chain, fw.xp, x, y)
    f = fw.jit(functools.partial(_chain, fw.xp))
    return lambda: f(x, y).block_until_ready()


_MATMUL_N = 1024


def _matmul(fw: frameworks.Framework) -> Callable[[], Any]:
    x, y = fw.put(_data((_MATMUL_N, _MATMUL_N), 0)), fw.put(_data((_MATMUL_N, _MATMUL_N), 1))
    if fw.jit is None:
        return lambda: x @ y
    f = fw.jit(lambda a, b: a @ b)
    return lambda: f(x, y).block_until_ready()


_MLP_LAYERS = (784, 512, 512, 10)
_MLP_BATCH = 128


def _mlp_loss(xp: Any, params: list[tuple[Any, Any]], x: Any, onehot: Any) -> Any:
    h = x
    for w, b in params[:-1]:
        h = xp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    logits = logits - xp.max(logits, axis=1, keepdims=True)
    logp = logits - xp.log(xp.sum(xp.exp(logits), axis=1, keepdims=True))
    return -xp.mean(xp.sum(logp * onehot, axis=1))


def _mlp_data(fw: frameworks.Framework) -> tuple[list[tuple[Any, Any]], Any, Any]:
    sizes = _MLP_LAYERS
    params = [
        (fw.put(_data((m, n), i) / np.float32(np.sqrt(m))), fw.put(np.zeros(n, np.float32)))
        for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:], strict=True))
    ]
    x = fw.put(_data((_MLP_BATCH, sizes[0]), 10))
    labels = np.random.default_rng(11).integers(0, sizes[-1], _MLP_BATCH)
    onehot = fw.put(np.eye(sizes[-1], dtype=np.float32)[labels])
    return params, x, onehot


def _mlp_step(fw: frameworks.Framework) -> Callable[..., Any]:
    """One SGD step: (params, x, onehot) -> (new params, loss)."""
    assert fw.value_and_grad is not None
    loss_and_grads = fw.value_and_grad(functools.partial(_mlp_loss, fw.xp))

    def step(params: Any, x: Any, onehot: Any) -> Any:
        loss, grads = loss_and_grads(params, x, onehot)
        return fw.tree_map(lambda p, g: p - 0.01 * g, params, grads), loss

    return fw.jit(step) if fw.jit is not None else step


def _mlp_train_step(fw: frameworks.Framework) -> Callable[[], Any]:
    step = _mlp_step(fw)
    params, x, onehot = _mlp_data(fw)
    return lambda: fw.block(step(params, x, onehot))


def _mlp_compile(fw: frameworks.Framework) -> Callable[[], Any]:
    """Trace + compile + first run of a fresh jitted MLP step (no cache can hit)."""
    params, x, onehot = _mlp_data(fw)
    return lambda: fw.block(_mlp_step(fw)(params, x, onehot))


def _per_example_loss(xp: Any, w: Any, x: Any, y: Any) -> Any:
    return xp.sum((xp.tanh(x @ w) - y) ** 2)


def _vmap_grad(fw: frameworks.Framework) -> Callable[[], Any]:
    assert fw.jit is not None and fw.vmap is not None and fw.grad is not None
    grads = fw.grad(functools.partial(_per_example_loss, fw.xp))
    f = fw.jit(fw.vmap(grads, in_axes=(None, 0, 0)))
    w, x, y = fw.put(_data(100, 0)), fw.put(_data((1024, 100), 1)), fw.put(_data(1024, 2))
    return lambda: f(w, x, y).block_until_ready()


_LOOP_STEPS = 1000


def _loop_body(i: Any, x: Any) -> Any:
    return x * 0.999 + 0.001


def _fori_loop(fw: frameworks.Framework) -> Callable[[], Any]:
    x = fw.put(_data(100, 0))
    if fw.fori_loop is None:

        def python_loop() -> Any:
            y = x
            for i in range(_LOOP_STEPS):
                y = _loop_body(i, y)
            return y

        return python_loop
    assert fw.jit is not None
    fori_loop = fw.fori_loop
    f = fw.jit(lambda x: fori_loop(0, _LOOP_STEPS, _loop_body, x))
    return lambda: f(x).block_until_ready()


def _rnn_cell(xp: Any, w: Any, h: Any, x_t: Any) -> tuple[Any, Any]:
    h = xp.tanh(h @ w + x_t)
    return h, h


def _scan(fw: frameworks.Framework) -> Callable[[], Any]:
    w = fw.put(_data((64, 64), 0) / np.float32(8.0))
    h0, xs = fw.put(np.zeros((8, 64), np.float32)), fw.put(_data((_LOOP_STEPS, 8, 64), 1))
    xp = fw.xp
    if fw.scan is None:

        def python_loop() -> Any:
            h, hs = h0, []
            for x_t in xs:
                h, out = _rnn_cell(xp, w, h, x_t)
                hs.append(out)
            return h, xp.stack(hs)

        return python_loop
    assert fw.jit is not None
    scan = fw.scan
    f = fw.jit(lambda w, h0, xs: scan(functools.partial(_rnn_cell, xp, w), h0, xs))
    return lambda: fw.block(f(w, h0, xs))


def _scan_grad(fw: frameworks.Framework) -> Callable[[], Any]:
    """Gradient of the RNN's final state w.r.t. its weights, through `scan`."""
    w = fw.put(_data((64, 64), 0) / np.float32(8.0))
    h0, xs = fw.put(np.zeros((8, 64), np.float32)), fw.put(_data((_LOOP_STEPS, 8, 64), 1))
    xp, scan = fw.xp, fw.scan
    assert fw.jit is not None and fw.grad is not None and scan is not None

    def loss(w: Any) -> Any:
        h, _ = scan(functools.partial(_rnn_cell, xp, w), h0, xs)
        return xp.sum(h)

    f = fw.jit(fw.grad(loss))
    return lambda: f(w).block_until_ready()


def _eager_grad_loss(xp: Any, w: Any, x: Any) -> Any:
    return xp.sum(xp.tanh(x * w) ** 2)


def _eager_grad(fw: frameworks.Framework) -> Callable[[], Any]:
    assert fw.grad is not None
    g = fw.grad(functools.partial(_eager_grad_loss, fw.xp))
    w, x = fw.put(_data(100, 0)), fw.put(_data(100, 1))
    return lambda: fw.block(g(w, x))


# --- Eager breadth (float64) and eager-grad programs -------------------------------------------

# The breadth rows are float64: their "jax" contender is JAX with x64 on.
_BREADTH_FRAMEWORKS = {"mjnp": "mjnp", "numpy": "numpy", "jax": "jax64"}


def _breadth(name: str, op: str) -> Contender:
    def prepare() -> Callable[[], Any]:
        fw = frameworks.load(_BREADTH_FRAMEWORKS[name])
        x, aux = eager_programs.breadth_data(fw.put)
        fn = eager_programs.BREADTH_OPS[op][1]
        xp, block = fw.xp, fw.block
        if name == "numpy":
            return lambda: fn(xp, x, aux)
        return lambda: block(fn(xp, x, aux))

    return Contender(name, prepare)


def _breadth_workload(op: str) -> Workload:
    shape = "x".join(map(str, eager_programs.BREADTH_SHAPE))
    return Workload(
        f"{targets.BREADTH_PREFIX}{op}",
        f"eager {eager_programs.BREADTH_OPS[op][0]}, float64[{shape}] (JAX with x64 on)",
        tuple(_breadth(n, op) for n in ("mjnp", "jax", "numpy")),
    )


def _namespace(name: str, op: str) -> Contender:
    def prepare() -> Callable[[], Any]:
        fw = frameworks.load(name)
        data = namespace_ops.namespace_data(fw.put)
        fn = namespace_ops.NAMESPACE_OPS[op][1]
        xp = fw.xp
        if name == "numpy":
            return lambda: fn(xp, data)

        def run() -> Any:
            # Arrays (or a tuple/list of them) are waited for; Python results (`tolist`,
            # `float`) are not walked as pytrees, which would cost more than the call.
            out = fn(xp, data)
            leaves = out if type(out) is tuple or type(out) is list else (out,)
            if leaves and hasattr(leaves[0], "block_until_ready"):
                for leaf in leaves:
                    leaf.block_until_ready()
            return out

        return run

    return Contender(name, prepare)


def _namespace_workload(op: str) -> Workload:
    return Workload(
        f"{targets.NAMESPACE_PREFIX}{op}",
        f"`{namespace_ops.NAMESPACE_OPS[op][0]}`",
        tuple(_namespace(n, op) for n in ("mjnp", "numpy")),
    )


def _grad_program(name: str, program: str) -> Contender:
    def prepare() -> Callable[[], Any]:
        fw = frameworks.load(name, ("grad",))
        xp, put, grad, block = fw.xp, fw.put, fw.grad, fw.block
        if program == "rnn":
            params, onehot = eager_programs.rnn_data()
            params, onehot = [put(p) for p in params], put(onehot)
            g = grad(lambda p: eager_programs.rnn_loss(xp, p, onehot))
            return lambda: block(g(params))
        if program == "em":
            params, x = eager_programs.gmm_data()
            params, x = [put(p) for p in params], put(x)
            return lambda: block(eager_programs.gmm_fit(grad, xp, params, x))
        velocity, smoke, target = (put(a) for a in eager_programs.fluid_data())
        g = grad(lambda v: eager_programs.fluid_loss(xp, v, smoke, target))
        return lambda: block(g(velocity))

    return Contender(name, prepare)


_GRAD_PROGRAMS = {
    "rnn": (
        f"`grad` of a character RNN's loss (hidden {eager_programs.RNN_HIDDEN}, "
        f"{len(eager_programs.RNN_TEXT)} one-hot characters, logsumexp), eager, float64"
    ),
    "em": (
        f"{eager_programs.GMM_STEPS} gradient steps on a {eager_programs.GMM_COMPONENTS}-component "
        f"Gaussian mixture's log-likelihood ({eager_programs.GMM_POINTS} points in 2-D), eager, "
        "float64"
    ),
    "fluid": (
        f"`grad` of a {eager_programs.FLUID_GRID}x{eager_programs.FLUID_GRID} grid fluid "
        f"({eager_programs.FLUID_STEPS} steps of floor/mod/fancy-index advection and roll "
        "projection), eager, float64"
    ),
}


# A call takes 10-300 ms here: 20 interleaved repetitions (a multiple of both Williams designs
# for two contenders) keep the three rows to about a minute in the full run.
_GRAD_PROGRAM_REPEATS = 20


def _grad_program_workload(program: str) -> Workload:
    return Workload(
        f"grad_{program}",
        _GRAD_PROGRAMS[program],
        tuple(_grad_program(n, program) for n in _with_autograd(("mjnp",))),
        max_repeats=_GRAD_PROGRAM_REPEATS,
    )


# --- Peak memory ------------------------------------------------------------------------------

_RSS_STEPS = 50
_RSS_NEEDS = ("jit", "value_and_grad")


def _peak_rss_kib() -> int:
    # NB: not getrusage's ru_maxrss, which Linux carries across fork and exec, so a child of
    # this (JAX-laden) process would report the parent's peak.
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM line in /proc/self/status")


def peak_rss_child(name: str) -> None:
    """Entry point of the peak-RSS subprocess: import, train the MLP, print the peak in KiB.

    The NumPy child only builds the data: the floor of any framework's footprint.
    """
    fw = frameworks.load(name, () if name == "numpy" else _RSS_NEEDS)
    params, x, onehot = _mlp_data(fw)
    if name != "numpy":
        step = _mlp_step(fw)
        for _ in range(_RSS_STEPS):
            params, loss = step(params, x, onehot)
        fw.block(loss)
    print(_peak_rss_kib())


def _peak_rss(name: str) -> Contender:
    def prepare() -> Callable[[], float]:
        if name != "numpy":
            frameworks.load(name, _RSS_NEEDS)  # report n/a here rather than fail in the child
        code = f"from benchmarks.workloads import peak_rss_child; peak_rss_child({name!r})"
        return lambda: int(_run_child(code)) / 1024

    return Contender(name, prepare)


# --- The registry -----------------------------------------------------------------------------


def _compiled(
    name: str,
    description: str,
    build: Callable[[frameworks.Framework], Callable[[], Any]],
    needs: tuple[str, ...],
    eager: tuple[str, ...] = (),
    throughput: tuple[float, str] | None = None,
    lead_in: bool = True,
) -> Workload:
    """A workload run compiled by mjnp and JAX (with `needs`), eagerly by `eager` contenders."""
    contenders = [
        _framework_contender("mjnp", needs, build),
        _framework_contender("jax", needs, build),
    ]
    contenders += [_framework_contender(e, (), build) for e in eager]
    return Workload(name, description, tuple(contenders), throughput=throughput, lead_in=lead_in)


def _registry() -> list[Workload]:
    chain_bytes = 3 * 4 * 1_000_000 / 1e9  # two float32 inputs read, one written
    workloads = [
        Workload(
            "import_time",
            "`import` in a fresh interpreter",
            tuple(_import_time(n) for n in _with_autograd(("mjnp", "jax", "numpy", "jaxlib._jax"))),
            unit="ms",
        ),
    ]
    workloads.append(
        Workload(
            "first_result",
            "import, `float(sum(sin(asarray(numpy.arange(5.)))))` in a fresh interpreter",
            tuple(_first_result(n) for n in ("mjnp", "jax", "numpy")),
            unit="ms",
        )
    )
    workloads += [_eager_workload(op, size) for op in _EAGER_OPS for size in _SIZES]
    workloads += [
        Workload(
            "floor_execute",
            "floor: a compiled f32[100] add run through jaxlib directly, vs JAX's jit dispatch",
            (
                _pjrt_floor("execute"),
                _pjrt_floor("execute_sharded"),
                _framework_contender("jax", ("jit",), _jit_dispatch),
            ),
        ),
        _compiled(
            "jit_dispatch", "`jit(lambda x, y: x + y)`, float32[100]", _jit_dispatch, ("jit",)
        ),
        Workload(
            "floor_copy_1e6",
            "floor: `np.copyto`, float32[1e6] (memory bandwidth at this size)",
            (_copy_floor(1_000_000),),
            throughput=(2 * 4 * 1_000_000 / 1e9, "GB/s"),
        ),
        _compiled(
            "fused_chain_1e6",
            "`tanh(sin(x) * y + 0.5 * x) * 2 - y` under jit, float32[1e6]",
            _fused_chain,
            ("jit",),
            eager=("numpy",),
            throughput=(chain_bytes, "GB/s"),
        ),
        _compiled(
            "matmul_1024",
            f"`x @ y` under jit, float32[{_MATMUL_N},{_MATMUL_N}] (NumPy: eager)",
            _matmul,
            ("jit",),
            eager=("numpy",),
            throughput=(2 * _MATMUL_N**3 / 1e9, "GFLOP/s"),
        ),
        _compiled(
            "mlp_compile",
            f"trace + compile + first step of a fresh jitted MLP step "
            f"({'-'.join(map(str, _MLP_LAYERS))}, batch {_MLP_BATCH})",
            _mlp_compile,
            ("jit", "value_and_grad"),
            lead_in=False,  # every call compiles afresh: nothing to warm
        ),
        _compiled(
            "mlp_train_step",
            f"jit(value_and_grad) + SGD, MLP {'-'.join(map(str, _MLP_LAYERS))}, batch {_MLP_BATCH}",
            _mlp_train_step,
            ("jit", "value_and_grad"),
            eager=_with_autograd(()),
        ),
        _compiled(
            "vmap_grad",
            "per-example gradients `jit(vmap(grad(loss), (None, 0, 0)))`, linear model, "
            "batch 1024, 100 features",
            _vmap_grad,
            ("jit", "vmap", "grad"),
        ),
        _compiled(
            "fori_loop_1000",
            f"`fori_loop` of {_LOOP_STEPS} steps of `x * 0.999 + 0.001`, float32[100] "
            "(NumPy: a Python loop)",
            _fori_loop,
            ("jit", "fori_loop"),
            eager=("numpy",),
        ),
        _compiled(
            "scan_1000",
            f"`scan` of a tanh RNN cell, {_LOOP_STEPS} steps, h float32[8,64] "
            "(NumPy: a Python loop)",
            _scan,
            ("jit", "scan"),
            eager=("numpy",),
        ),
        _compiled(
            "scan_grad_1000",
            f"`jit(grad)` through a {_LOOP_STEPS}-step `scan` of a tanh RNN cell, h float32[8,64]",
            _scan_grad,
            ("jit", "grad", "scan"),
        ),
        Workload(
            "eager_grad",
            "`grad(lambda w, x: sum(tanh(x * w) ** 2))` without jit, float32[100]",
            tuple(
                _framework_contender(n, ("grad",), _eager_grad)
                for n in _with_autograd(("mjnp", "jax"))
            ),
        ),
        Workload(
            "peak_rss",
            f"peak RSS of a process training the MLP for {_RSS_STEPS} jitted steps "
            "(NumPy: data only)",
            tuple(_peak_rss(n) for n in ("mjnp", "jax", "numpy")),
            unit="MiB",
        ),
    ]
    workloads += [_grad_program_workload(p) for p in _GRAD_PROGRAMS]
    workloads += scaling.workloads()  # issue 22: the data-parallel MLP on 1-8 devices
    workloads += [_namespace_workload(op) for op in namespace_ops.NAMESPACE_OPS]
    # Last: their JAX contender turns JAX's x64 mode on for the rest of the process.
    workloads += [_breadth_workload(op) for op in eager_programs.BREADTH_OPS]
    return workloads


WORKLOADS: list[Workload] = _registry()
