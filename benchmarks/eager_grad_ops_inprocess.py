"""In process: eager `grad` of a small NumPy-style program using sin, cos, where, maximum, abs,
clip, pad and sqrt (float64[8, 10]), mjnp vs autograd: thread CPU time per call, best of N
batches of 20 calls, the two interleaved. The primitives whose vjps `mjcore.lax.host_vjp` and
the direct rules cover since h_hostvjp (the benchmark programs use none of them).

    PYTHONPATH=. python benchmarks/eager_grad_ops_inprocess.py [N]
"""

import sys
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as onp

import mjcore
import mjnp as np
from benchmarks.eager_grad_inprocess import best_ratio


def program(xp: Any, x: Any, w: Any) -> Any:
    """The loss, written once for mjnp and autograd.numpy."""
    h = xp.sin(x * w) + xp.cos(x)
    h = xp.where(h > 0.1, h, 0.5 * h)
    h = xp.maximum(h, -0.3) + xp.abs(x) ** 2
    h = xp.clip(h, -1.0, 1.0)
    p = xp.pad(h, ((1, 1), (0, 0)), mode="constant")
    return xp.sum(p[1:] * p[:-1]) + xp.sum(xp.sqrt(x * x + 1.0))


def main(n: int = 30, batch: int = 20) -> float:
    """Print and return the ratio mjnp/autograd of the best per-call CPU times."""
    rng = onp.random.default_rng(0)
    x0, w0 = rng.normal(size=(8, 10)), rng.normal(size=(8, 10))
    x, w = np.asarray(x0), np.asarray(w0)
    gm = mjcore.grad(lambda x, w: program(np, x, w))
    ga = autograd.grad(lambda x, w: program(anp, x, w))
    onp.testing.assert_allclose(onp.asarray(gm(x, w)), ga(x0, w0), rtol=1e-12, atol=1e-12)
    return best_ratio(lambda: gm(x, w), lambda: ga(x0, w0), n, batch)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
