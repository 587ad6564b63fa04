"""In process: the eager_grad row (`grad` of sum(tanh(x * w) ** 2), float64[100]), mjnp vs
autograd: CPU time per call, best of N batches of 200 calls, the two interleaved.

    PYTHONPATH=. python benchmarks/eager_grad_inprocess.py [N]
"""

import sys
import time
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as onp

import mjcore
import mjnp as np


def main(n: int = 15, batch: int = 200) -> float:
    """Print and return the ratio mjnp/autograd of the best per-call CPU times."""
    w0 = onp.random.RandomState(0).randn(100)
    x0 = onp.random.RandomState(1).randn(100)
    w, x = np.asarray(w0), np.asarray(x0)
    gm = mjcore.grad(lambda w, x: np.sum(np.tanh(x * w) ** 2))
    ga = autograd.grad(lambda w, x: anp.sum(anp.tanh(x * w) ** 2))
    assert onp.allclose(onp.asarray(gm(w, x)), ga(w0, x0))
    return best_ratio(lambda: gm(w, x), lambda: ga(w0, x0), n, batch)


def best_ratio(run_mjnp: Any, run_autograd: Any, n: int, batch: int) -> float:
    """Interleave `n` batches of `batch` calls of each; print the best per-call CPU times and
    return their ratio mjnp/autograd."""
    bm = ba = float("inf")
    for _ in range(n):
        t0 = time.process_time()
        for _ in range(batch):
            run_mjnp()
        bm = min(bm, (time.process_time() - t0) / batch)
        t0 = time.process_time()
        for _ in range(batch):
            run_autograd()
        ba = min(ba, (time.process_time() - t0) / batch)
    print(f"mjnp {bm * 1e6:.1f} us  autograd {ba * 1e6:.1f} us  ratio {bm / ba:.3f}")
    return bm / ba


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
