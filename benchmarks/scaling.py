"""Weak scaling of the data-parallel MLP step over 1, 2, 4 and 8 CPU devices (issue 22).

Each device gets the benchmark MLP's batch (128 rows); parameters are replicated and the
gradients averaged with `pmean` inside `pmap`, in mjnp (mjcore.pmap) and JAX (jax.pmap).
A device count is fixed when a backend starts, so every (framework, devices) pair runs in a
fresh subprocess, which times the step (median of its steps after warm-up) and prints it in
ms. Efficiency is t(1 device) / t(n devices): 1.0 is perfect weak scaling. The CPU devices
share this machine's cores, so both frameworks fall short of 1.0 alike; the ratio to JAX is
the figure to read.

    python -m benchmarks.scaling            # the table, both frameworks in one run
"""

from __future__ import annotations

import functools
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks import frameworks
from benchmarks.harness import Contender, Workload

DEVICE_COUNTS = (1, 2, 4, 8)
_WARMUP = 3
_STEPS = 30
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scaling_child(name: str, n: int) -> None:
    """Entry point of the subprocess: time the pmapped MLP step on `n` devices; print ms."""
    from benchmarks.workloads import _MLP_BATCH, _MLP_LAYERS, _data, _mlp_loss

    fw = frameworks.load(name, ("jit", "value_and_grad"))
    if name == "mjnp":
        import mjcore

        pmap, pmean = mjcore.pmap, mjcore.lax.pmean
    else:
        import jax

        pmap, pmean = jax.pmap, jax.lax.pmean
    loss_and_grads = fw.value_and_grad(functools.partial(_mlp_loss, fw.xp))

    def step(params: Any, x: Any, onehot: Any) -> Any:
        loss, grads = loss_and_grads(params, x, onehot)
        grads = pmean(grads, "batch")
        new = fw.tree_map(lambda p, g: p - 0.01 * g, params, grads)
        return new, pmean(loss, "batch")

    pstep = pmap(step, axis_name="batch", in_axes=(None, 0, 0), out_axes=(None, None))
    sizes = _MLP_LAYERS
    params = [
        (_data((m, k), i) / np.float32(np.sqrt(m)), np.zeros(k, np.float32))
        for i, (m, k) in enumerate(zip(sizes[:-1], sizes[1:], strict=True))
    ]
    x = _data((n, _MLP_BATCH, sizes[0]), 10)
    labels = np.random.default_rng(11).integers(0, sizes[-1], (n, _MLP_BATCH))
    onehot = np.eye(sizes[-1], dtype=np.float32)[labels]
    samples = []
    for i in range(_WARMUP + _STEPS):
        t = time.perf_counter_ns()
        params, loss = fw.block(pstep(params, x, onehot))
        if i >= _WARMUP:
            samples.append((time.perf_counter_ns() - t) / 1e6)
    print(statistics.median(samples))


def _run(name: str, n: int) -> float:
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "MJCORE_NUM_CPU_DEVICES": str(n),
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={n}",
    }
    code = f"from benchmarks.scaling import scaling_child; scaling_child({name!r}, {n})"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=_ROOT, capture_output=True, text=True, env=env
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"subprocess failed: {last}")
    return float(proc.stdout.strip().splitlines()[-1])


def _contender(name: str, n: int) -> Contender:
    def prepare() -> Callable[[], float]:
        frameworks.load(name, ("jit", "value_and_grad"))  # n/a here rather than in the child
        return lambda: _run(name, n)

    return Contender(name, prepare)


def workloads() -> list[Workload]:
    """One row per device count: the median step time of each framework's subprocess."""
    return [
        Workload(
            f"mlp_dp_{n}dev",
            f"data-parallel MLP step (pmap + pmean of grads) on {n} CPU device(s), "
            "128 rows per device (weak scaling)",
            (_contender("mjnp", n), _contender("jax", n)),
            unit="ms",
            max_repeats=5,
        )
        for n in DEVICE_COUNTS
    ]


def main() -> None:
    times: dict[tuple[str, int], float] = {}
    for n in DEVICE_COUNTS:
        for name in ("mjnp", "jax"):  # interleaved, so drift hits both alike
            times[(name, n)] = _run(name, n)
    print("| devices | mjnp ms | jax ms | mjnp ÷ jax | mjnp efficiency | jax efficiency |")
    print("|---|---|---|---|---|---|")
    for n in DEVICE_COUNTS:
        m, j = times[("mjnp", n)], times[("jax", n)]
        em, ej = times[("mjnp", 1)] / m, times[("jax", 1)] / j
        print(f"| {n} | {m:.2f} | {j:.2f} | {m / j:.2f} | {em:.2f} | {ej:.2f} |")


if __name__ == "__main__":
    main()
