"""A short GPU benchmark: mjnp against JAX on the same GPU, steady state, as ratios.

python -m benchmarks.gpu [--repeats N]

Workloads: a 4096x4096 matmul (float32 and bfloat16), the MLP train step and the fused
elementwise chain of `benchmarks/workloads.py`. Each contender is warmed up (compiled), then
timed in interleaved rounds; the reported figure is the median time per call, and the ratio is
mjnp / JAX (below 1: mjnp faster). Needs an NVIDIA GPU with jaxlib's CUDA plugin; exits with
status 2 (and says why) elsewhere.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benchmarks.workloads import _chain, _mlp_loss

_N = 4096


def _frameworks() -> dict[str, Any]:
    import jax
    import jax.numpy as jnp

    import mjcore
    import mjnp

    return {
        "mjnp": (mjnp, mjcore.jit, mjcore.value_and_grad, mjcore.device_put, mjcore.tree_util),
        "jax": (jnp, jax.jit, jax.value_and_grad, jax.device_put, jax.tree_util),
    }


def _block(tree: Any, tree_util: Any) -> Any:
    for leaf in tree_util.tree_leaves(tree):
        leaf.block_until_ready()
    return tree


def _matmul(fw: Any, dtype: Any) -> Callable[[], Any]:
    xp, jit, _, put, tu = fw
    rng = np.random.default_rng(0)
    a = put(rng.standard_normal((_N, _N), np.float32).astype(dtype))
    b = put(rng.standard_normal((_N, _N), np.float32).astype(dtype))
    f = jit(lambda a, b: a @ b)
    return lambda: _block(f(a, b), tu)


def _mlp(fw: Any) -> Callable[[], Any]:
    xp, jit, value_and_grad, put, tu = fw
    sizes = (784, 512, 512, 10)
    rng = np.random.default_rng(0)
    params = [
        (
            put((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)),
            put(np.zeros(n, np.float32)),
        )
        for m, n in zip(sizes[:-1], sizes[1:], strict=True)
    ]
    x = put(rng.standard_normal((128, 784)).astype(np.float32))
    onehot = put(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)])
    loss_and_grads = value_and_grad(functools.partial(_mlp_loss, xp))

    @jit
    def step(params: Any, x: Any, onehot: Any) -> Any:
        loss, grads = loss_and_grads(params, x, onehot)
        return tu.tree_map(lambda p, g: p - 0.01 * g, params, grads), loss

    return lambda: _block(step(params, x, onehot), tu)


def _fused_chain(fw: Any) -> Callable[[], Any]:
    xp, jit, _, put, tu = fw
    rng = np.random.default_rng(0)
    x = put(rng.standard_normal(1_000_000).astype(np.float32))
    y = put(rng.standard_normal(1_000_000).astype(np.float32))
    f = jit(functools.partial(_chain, xp))
    return lambda: _block(f(x, y), tu)


WORKLOADS: dict[str, Callable[[Any], Callable[[], Any]]] = {
    "matmul_4096_f32": lambda fw: _matmul(fw, np.float32),
    "matmul_4096_bf16": lambda fw: _matmul(fw, _bfloat16()),
    "mlp_train_step": _mlp,
    "fused_chain_1e6": _fused_chain,
}


def _bfloat16() -> Any:
    import ml_dtypes

    return ml_dtypes.bfloat16


def _time(fn: Callable[[], Any], min_seconds: float = 0.02) -> float:
    """Seconds per call: calls batched to at least `min_seconds`."""
    k = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_seconds:
            return dt / k
        k *= 2


def run(repeats: int) -> list[tuple[str, float | None, float | None, str]]:
    """(workload, mjnp seconds, jax seconds, note) for every workload."""
    fws = _frameworks()
    rows = []
    for name, make in WORKLOADS.items():
        fns: dict[str, Callable[[], Any]] = {}
        note = ""
        for fw_name, fw in fws.items():
            try:
                fn = make(fw)
                fn()  # compile and warm up
                fn()
                fns[fw_name] = fn
            except Exception as err:  # noqa: BLE001  (a contender's failure is reported)
                note += f"{fw_name}: {type(err).__name__}: {str(err).splitlines()[0][:120]} "
        samples: dict[str, list[float]] = {k: [] for k in fns}
        for r in range(repeats):
            order = list(fns) if r % 2 == 0 else list(reversed(fns))
            for k in order:
                samples[k].append(_time(fns[k]))
        med = {k: statistics.median(v) for k, v in samples.items()}
        rows.append((name, med.get("mjnp"), med.get("jax"), note.strip()))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu", description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    import jax

    # JAX first: it loads the CUDA plugin unconditionally, and mjcore then shares the loaded
    # plugin (the other order leaves JAX without its GPU backend).
    jax.devices()
    import mjcore

    if mjcore.default_backend() != "gpu" or jax.default_backend() != "gpu":
        print(
            f"benchmarks.gpu: needs a GPU for both (mjcore: {mjcore.default_backend()}, "
            f"jax: {jax.default_backend()})"
        )
        return 2
    print(f"device: {mjcore.devices()[0].device_kind}; mjnp vs JAX on the same GPU")
    print(f"{'workload':<20} {'mjnp':>12} {'jax':>12} {'mjnp/jax':>9}")
    worst = 0.0
    for name, t_mj, t_jax, note in run(args.repeats):
        if t_mj is None or t_jax is None:
            print(f"{name:<20} {'-':>12} {'-':>12} {'-':>9}  {note}")
            continue
        ratio = t_mj / t_jax
        worst = max(worst, ratio)
        print(f"{name:<20} {t_mj * 1e6:>10.1f}us {t_jax * 1e6:>10.1f}us {ratio:>9.3f}  {note}")
    print(f"worst ratio: {worst:.3f} (target <= 1.05)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
