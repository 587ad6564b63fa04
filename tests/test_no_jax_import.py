"""mjnp and mjcore never import `jax`: only jaxlib, whose C++ helpers would pull all of `jax`
in (~0.5 s, ~40 MiB) through their Python fallbacks. Checked in a fresh interpreter that runs
a broad sample of the library (the test process itself imports JAX as an oracle)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as onp
    import mjnp as np
    import mjcore

    rng = onp.random.default_rng(0)
    a_host = rng.normal(size=(4, 4))
    x_host = onp.linspace(0.0, 1.0, 7)

    # host -> device -> host, printing, scalars
    x = np.asarray(x_host)
    assert onp.array_equal(onp.asarray(x), x_host)
    assert str(x) == str(x_host) and float(x.sum()) == float(x_host.sum())
    assert x.tolist() == x_host.tolist()
    assert not onp.asarray(x).flags.writeable
    for dtype in ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "complex64",
                  "complex128"]:
        host = (onp.arange(6).reshape(2, 3) % 3).astype(dtype)
        back = onp.asarray(np.asarray(host) + np.zeros((), dtype))
        assert back.dtype == host.dtype and onp.array_equal(back, host), dtype
    # mutating the host array after the transfer does not reach the device copy
    h = onp.ones(3)
    d = np.asarray(h)
    h[0] = 5.0
    assert onp.asarray(d).tolist() == [1.0, 1.0, 1.0]

    # eager ops, LAPACK custom calls, FFT
    a = np.asarray(a_host)
    onp.testing.assert_allclose(onp.asarray(np.sin(x)), onp.sin(x_host))
    onp.testing.assert_allclose(onp.asarray(np.linalg.solve(a, np.ones(4))),
                                onp.linalg.solve(a_host, onp.ones(4)))
    onp.testing.assert_allclose(onp.asarray(np.linalg.svd(a)[1]), onp.linalg.svd(a_host)[1])
    onp.testing.assert_allclose(float(np.linalg.det(a)), onp.linalg.det(a_host))
    onp.testing.assert_allclose(onp.asarray(np.fft.fft(x)), onp.fft.fft(x_host))

    # transformations
    g = mjcore.grad(lambda t: np.sum(np.sin(t) ** 2))(x)
    onp.testing.assert_allclose(onp.asarray(g), 2 * onp.sin(x_host) * onp.cos(x_host))
    assert onp.asarray(mjcore.jit(lambda t: t * 2)(x)).tolist() == (2 * x_host).tolist()
    assert mjcore.vmap(np.dot)(a, a).shape == (4,)
    assert "sin a" in str(mjcore.make_jaxpr(np.sin)(1.0))
    assert mjcore.random.normal(mjcore.random.key(0), (3,)).shape == (3,)

    # host callbacks, compiled (MLIR bindings parse the module)
    s = mjcore.ShapeDtypeStruct((7,), "float64")
    out = mjcore.jit(lambda t: mjcore.pure_callback(onp.cos, s, t))(x)
    onp.testing.assert_allclose(onp.asarray(out), onp.cos(x_host))
    mjcore.jit(lambda t: mjcore.debug.callback(lambda v: None, t))(x)

    # a donated argument's error names its shape
    f = mjcore.jit(lambda t: t + 1, donate_argnums=0)
    y = np.ones(3)
    f(y)
    try:
        onp.asarray(y)
    except RuntimeError as err:
        assert "float64[3]" in str(err), err
    else:
        raise AssertionError("a donated array converted")

    print("jax" in sys.modules, sorted(m for m in sys.modules if m.startswith("jax."))[:3])
    """
)


def test_the_library_runs_without_importing_jax() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "False []"
