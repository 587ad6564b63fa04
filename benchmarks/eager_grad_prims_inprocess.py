"""In process: eager `grad` of three small autograd-style programs using the primitives whose
direct rules and host transposes came last (issue 18, h7_egrad), mjnp vs autograd: thread CPU
time per call, best of N batches of 10 calls, the two interleaved; plus, per mjnp call, the
primitives bound in the backward pass and the executables compiled on a new shape.

- `ranking`: a soft sort / ranking loss (sort, a sigmoid of pairwise margins, arctan2).
- `periodic`: three steps of particles in a periodic box (mod, floor, round for the minimum
  image, hypot, sinh).
- `likelihood`: a product-of-probabilities likelihood (prod, sign, mod).

    PYTHONPATH=. python benchmarks/eager_grad_prims_inprocess.py [N]
"""

import sys
import time
from typing import Any

import autograd
import autograd.numpy as anp
import numpy as onp

import mjcore
import mjnp as np
from mjcore import core, eager_vjp
from mjcore.backend import compat


def ranking(xp: Any, w: Any, x: Any, target: Any) -> Any:
    """A soft ranking loss of linear scores: sorted scores against sorted targets, pairwise
    logistic margins, an angle penalty."""
    s = xp.dot(x, w)
    sorted_loss = xp.sum((xp.sort(s) - xp.sort(target)) ** 2)
    margins = (s[:, None] - s[None, :]) * xp.sign(target[:, None] - target[None, :])
    pairwise = xp.sum(xp.log(1.0 + xp.exp(-margins)))
    angle = xp.sum(xp.arctan2(s, 1.0 + target * target))
    return sorted_loss + 0.1 * pairwise + angle


def periodic(xp: Any, v: Any, x0: Any) -> Any:
    """Three steps of particles in a box of side 4 with periodic boundaries: positions wrap by
    mod, cells by floor, pair distances by the minimum image (round) and hypot."""
    box = 4.0
    x = x0
    energy = 0.0
    for _ in range(3):
        x = xp.mod(x + 0.1 * v, box)
        cell = xp.floor(x / 1.0)
        dx = x[:, None, 0] - x[None, :, 0]
        dy = x[:, None, 1] - x[None, :, 1]
        dx = dx - box * xp.round(dx / box)
        dy = dy - box * xp.round(dy / box)
        r = xp.hypot(dx + 0.1, dy) + 1.0  # (shifted: no 0/0 in the self-pairs)
        energy = energy + xp.sum(1.0 / r) + 0.01 * xp.sum(cell * x)
        v = v - 0.05 * xp.sinh(0.3 * v)
    return energy + xp.sum(v * v)


def likelihood(xp: Any, w: Any, x: Any) -> Any:
    """A product-of-probabilities likelihood: per-row products of Bernoulli probabilities and a
    survival curve (running products of one minus a hazard)."""
    p = 1.0 / (1.0 + xp.exp(-xp.dot(x, w)))
    column = xp.reshape(p, (-1, 1))  # (autograd's sum of p[:, None]'s cotangents fails)
    m = (xp.sign(x[:, :4]) + 1.0) * 0.5  # (autograd's where does not unbroadcast)
    q = m * column + (1.0 - m) * (1.0 - column)
    rows = xp.prod(q, axis=1)
    hazard = 0.2 / (1.0 + xp.exp(-xp.mod(xp.dot(x, w), 3.0)))
    # the survival curve, cumprod(1 - hazard), as products over a triangle: autograd has no
    # cumprod vjp
    n = hazard.shape[0]
    survival = xp.prod(1.0 - onp.tri(n) * xp.reshape(hazard, (1, n)), axis=1)
    return -xp.sum(xp.log(rows)) - xp.sum(xp.log(survival))


def _data() -> dict[str, tuple[Any, tuple[Any, ...], tuple[int, ...]]]:
    """name: (program, arguments, which arguments have a row per sample)."""
    rng = onp.random.default_rng(0)
    return {
        "ranking": (
            ranking,
            (rng.normal(size=5), rng.normal(size=(24, 5)), rng.normal(size=24)),
            (1, 2),
        ),
        "periodic": (
            periodic,
            (rng.normal(size=(12, 2)), rng.uniform(0, 4, size=(12, 2))),
            (0, 1),
        ),
        "likelihood": (likelihood, (rng.normal(size=6) * 0.3, rng.normal(size=(30, 6))), (1,)),
    }


def counts(fun: Any, args: tuple[Any, ...], rows: tuple[int, ...]) -> tuple[int, int, int]:
    """(primitives bound in the backward pass of one mjnp grad call, executables compiled by
    a call on a new shape in the forward pass, in the backward pass)."""
    binds, compiles = [], {"f": 0, "b": 0}
    inside: list[bool] = []
    bind, backward, compile_and_load = core.bind, eager_vjp.backward, compat.compile_and_load

    def counting_bind(prim: Any, a: Any, params: Any) -> Any:
        if inside and not any(isinstance(v, core.Tracer) for v in a):
            binds.append(prim.name)
        return bind(prim, a, params)

    def counted_backward(*a: Any, **k: Any) -> Any:
        inside.append(True)
        try:
            return backward(*a, **k)
        finally:
            inside.pop()

    def counted_compile(*a: Any, **k: Any) -> Any:
        compiles["b" if inside else "f"] += 1
        return compile_and_load(*a, **k)

    core.bind, eager_vjp.backward = counting_bind, counted_backward
    compat.compile_and_load = counted_compile
    try:
        grad = mjcore.grad(lambda *a: fun(np, *a))
        new_shape = [
            np.asarray(onp.concatenate([a, a[:1]]) if i in rows else a) for i, a in enumerate(args)
        ]
        grad(*new_shape)  # a new shape: what compiles
        n_compiles = (compiles["f"], compiles["b"])
        grad(*new_shape)  # (a fused rule body's trace binds its constants once)
        binds.clear()
        grad(*[np.asarray(a) for a in args])
        grad(*[np.asarray(a) for a in args])
        binds.clear()
        grad(*[np.asarray(a) for a in args])
    finally:
        core.bind, eager_vjp.backward = bind, backward
        compat.compile_and_load = compile_and_load
    return len(binds), *n_compiles


def best_times(run_mjnp: Any, run_autograd: Any, n: int, batch: int) -> tuple[float, float]:
    """Best per-call thread CPU times of `n` interleaved batches of `batch` calls each."""
    bm = ba = float("inf")
    for _ in range(n):
        t0 = time.thread_time()
        for _ in range(batch):
            run_mjnp()
        bm = min(bm, (time.thread_time() - t0) / batch)
        t0 = time.thread_time()
        for _ in range(batch):
            run_autograd()
        ba = min(ba, (time.thread_time() - t0) / batch)
    return bm, ba


def main(n: int = 20, batch: int = 10) -> dict[str, float]:
    """Print and return each program's ratio mjnp/autograd of the best per-call CPU times."""
    ratios = {}
    for name, (fun, args, rows) in _data().items():
        gm = mjcore.grad(lambda *a, f=fun: f(np, *a))
        ga = autograd.grad(lambda *a, f=fun: f(anp, *a))
        margs = [np.asarray(a) for a in args]
        onp.testing.assert_allclose(onp.asarray(gm(*margs)), ga(*args), rtol=1e-10, atol=1e-12)
        bwd_binds, cf, cb = counts(fun, args, rows)
        bm, ba = best_times(lambda g=gm, a=margs: g(*a), lambda g=ga, a=args: g(*a), n, batch)
        ratios[name] = bm / ba
        print(
            f"{name:10s} mjnp {bm * 1e6:7.1f} us  autograd {ba * 1e6:7.1f} us  "
            f"ratio {bm / ba:.3f}  backward binds {bwd_binds}  compiles on a new shape "
            f"forward {cf} backward {cb}"
        )
    return ratios


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
