"""bfloat16 on the device against JAX on the same device: buffers in and out, a few functions
(bits equal to JAX's? eager equal to jit?), random bits, a jit grad, and a 4096 bf16 matmul
timing ratio. Printed, not asserted (tests/test_bfloat16.py asserts on the CPU). About a
minute; on the GPU machine:

    XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH=. python3 scripts/gpu_bf16_check.py

(N=256 for a quick run on a CPU.)
"""

import os
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import mjcore  # noqa: E402
import mjnp  # noqa: E402

bf = ml_dtypes.bfloat16
# JAX's backend first: the CUDA plugin registers with the first client that asks for it, and
# JAX (unlike mjcore) does not take an already registered one.
jax_backend = jax.default_backend()
print("backends", mjcore.default_backend(), jax_backend, jax.__version__)
rng = np.random.default_rng(0)
x = rng.uniform(-2, 2, (1000,)).astype(bf)
mx, jx = mjnp.asarray(x), jnp.asarray(x)
back = np.asarray(mx)
print("round trip", back.dtype, bool((back.view(np.uint16) == x.view(np.uint16)).all()))
print("repr", repr(mx[:3]), "float", float(mx[1]), "tolist", mx[:2].tolist())
checks = {
    "sum": lambda L, v: L.sum(v),
    "mean": lambda L, v: L.mean(v),
    "var": lambda L, v: L.var(v),
    "exp": lambda L, v: L.exp(v),
    "tanh": lambda L, v: L.tanh(v),
    "div": lambda L, v: v / (v + 3),
    "mod": lambda L, v: v % 0.7,
    "hypot": lambda L, v: L.hypot(v, 1.5),
    "cumsum": lambda L, v: L.cumsum(v),
    "inf": lambda L, v: v / 0,
    "matmul": lambda L, v: L.reshape(v[:900], (30, 30)) @ L.reshape(v[100:], (30, 30)),
}
for name, f in checks.items():
    with np.errstate(all="ignore"):
        a = np.asarray(f(mjnp, mx))
        j = np.asarray(mjcore.jit(lambda v, f=f: f(mjnp, v))(mx))
    b = np.asarray(f(jnp, jx))
    same = a.dtype == b.dtype and np.array_equal(a.view(np.uint16), b.view(np.uint16))
    jit_same = np.array_equal(a.view(np.uint16), j.view(np.uint16))
    err = float(np.nanmax(np.abs(a.astype(np.float32) - b.astype(np.float32))))
    print(f"{name:8s} dtype {a.dtype} bits==jax {same} eager==jit {jit_same} maxdiff {err:.3g}")

k = mjcore.random.PRNGKey(3)
u = np.asarray(mjcore.random.uniform(k, (64,), bf)).view(np.uint16)
ju = np.asarray(jax.random.uniform(jax.random.PRNGKey(3), (64,), jnp.bfloat16)).view(np.uint16)
print("random.uniform bits==jax", bool((u == ju).all()))


def loss(L, w, v):
    return L.mean(L.tanh(v @ w).astype(L.float32) ** 2)


w = rng.normal(size=(64, 64)).astype(bf)
v = rng.normal(size=(32, 64)).astype(bf)
gm = np.asarray(mjcore.jit(mjcore.grad(lambda w: loss(mjnp, w, v)))(mjnp.asarray(w)))
gj = np.asarray(jax.jit(jax.grad(lambda w: loss(jnp, w, v)))(jnp.asarray(w)))
print("grad dtype", gm.dtype, "max rel diff", float(np.max(np.abs(gm - gj) / (np.abs(gj) + 1e-3))))

n = int(os.environ.get("N", "4096"))
a = rng.standard_normal((n, n)).astype(bf)
ma, ja = mjnp.asarray(a), jnp.asarray(a)
mf = mjcore.jit(lambda p: p @ p)
jf = jax.jit(lambda p: p @ p)


def timed(f, arg, block):
    block(f(arg))
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(10):
            out = f(arg)
        block(out)
        best = min(best, (time.perf_counter() - t) / 10)
    return best


tm = timed(mf, ma, lambda o: o.block_until_ready())
tj = timed(jf, ja, lambda o: o.block_until_ready())
print(f"matmul 4096 bf16: mjnp {tm * 1e3:.3f} ms, jax {tj * 1e3:.3f} ms, ratio {tm / tj:.2f}x")
print(f"  ({2 * n**3 / tm / 1e12:.0f} TFLOP/s mjnp)")
