"""8-device checks of shard_map, pmap and collectives against JAX (x64), run by
`tests/test_collectives.py` in one subprocess with 8 CPU devices (the test process has one).

Each `check_*` function raises on failure; `main` runs them all and prints one JSON line
{name: null | traceback}. Not collected by pytest itself (no `test_` prefix).
"""

from __future__ import annotations

import json
import os
import re
import sys
import traceback

os.environ["MJCORE_NUM_CPU_DEVICES"] = "8"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402  (the oracle, with the same device count)
import numpy as onp  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax._src.sharding import IndivisibleError as JaxIndivisibleError  # noqa: E402
from jax.sharding import Mesh as JMesh  # noqa: E402
from jax.sharding import PartitionSpec as JP  # noqa: E402

import mjcore  # noqa: E402
import mjnp as np  # noqa: E402
from mjcore import lax  # noqa: E402
from mjcore.sharding import Mesh, NamedSharding, P  # noqa: E402


def _meshes(shape, names):
    devs = onp.array(mjcore.devices()).reshape(shape)
    jdevs = onp.array(jax.devices()).reshape(shape)
    return Mesh(devs, names), JMesh(jdevs, names)


def _jspec(spec):
    return JP(*spec)


def _close(a, b, tol=1e-12):
    a, b = onp.asarray(a), onp.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    onp.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _both(make, mesh_shape, names, in_spec, out_spec):
    """(mjcore shard_map, JAX shard_map) of `make(lax_module)` over the same mesh."""
    m, jm = _meshes(mesh_shape, names)
    f = mjcore.shard_map(make(lax), mesh=m, in_specs=in_spec, out_specs=out_spec)
    g = jax.shard_map(
        make(jax.lax),
        mesh=jm,
        in_specs=_jspec(in_spec),
        out_specs=_jspec(out_spec),
        check_vma=False,
    )
    return f, g


# (name, body(L), mesh shape, axis names, in spec, out spec, global input shape)
CASES = [
    ("psum", lambda L: lambda a: L.psum(a, "x"), (8,), ("x",), P("x"), P(), (16, 3)),
    ("pmean", lambda L: lambda a: L.pmean(a, "x"), (8,), ("x",), P("x"), P(), (8, 2)),
    ("pmax", lambda L: lambda a: L.pmax(a, "x"), (8,), ("x",), P("x"), P(), (8, 3)),
    ("pmin", lambda L: lambda a: L.pmin(a, "x"), (8,), ("x",), P("x"), P(), (8, 3)),
    (
        "psum-2d",
        lambda L: lambda a: L.psum(a, ("x", "y")) + L.psum(a, "y"),
        (4, 2),
        ("x", "y"),
        P("x", "y"),
        P("x"),  # psum over y alone varies along x
        (8, 4),
    ),
    (
        "psum-x-of-2d",
        lambda L: lambda a: L.psum(a, "x") * L.axis_index("y"),
        (4, 2),
        ("x", "y"),
        P("x", "y"),
        P(None, "y"),
        (8, 4),
    ),
    (
        "all_gather",
        lambda L: lambda a: L.all_gather(a, "x"),
        (8,),
        ("x",),
        P("x"),
        P(),
        (8, 3),
    ),
    (
        "all_gather-tiled-axis1",
        lambda L: lambda a: L.all_gather(a, "y", axis=1, tiled=True),
        (2, 4),
        ("x", "y"),
        P("x", "y"),
        P("x"),
        (4, 8),
    ),
    (
        "psum_scatter-tiled",
        lambda L: lambda a: L.psum_scatter(a, "x", scatter_dimension=0, tiled=True),
        (8,),
        ("x",),
        P(),
        P("x"),
        (16, 2),
    ),
    (
        "psum_scatter",
        lambda L: lambda a: L.psum_scatter(a[0], "x"),
        (8,),
        ("x",),
        P("x"),
        P("x"),
        (8, 8, 2),
    ),
    (
        "all_to_all",
        lambda L: lambda a: L.all_to_all(a, "x", 0, 1, tiled=True),
        (4, 2),
        ("x", "y"),
        P("x"),
        P("x"),
        (16, 3),
    ),
    (
        "ppermute",
        lambda L: lambda a: L.ppermute(a, "x", [(i, (i + 1) % 8) for i in range(8)]),
        (8,),
        ("x",),
        P("x"),
        P("x"),
        (8, 3),
    ),
    (
        "ppermute-partial-2d",
        lambda L: lambda a: L.ppermute(a, "y", [(0, 1)]) + L.axis_index(("x", "y")),
        (2, 4),
        ("x", "y"),
        P("x", "y"),
        P("x", "y"),
        (4, 8),
    ),
    (
        "axis_index",
        lambda L: lambda a: a * L.axis_index("x") + L.axis_index("y"),
        (2, 4),
        ("x", "y"),
        P("x", "y"),
        P("x", "y"),
        (2, 4),
    ),
]


def _input(shape, seed=0):
    return onp.random.default_rng(seed).standard_normal(shape)


def check_shard_map_values():
    for name, make, mshape, names, ispec, ospec, shape in CASES:
        f, g = _both(make, mshape, names, ispec, ospec)
        x = _input(shape)
        # JAX's value once, as one compiled program (its eager shard_map runs op by op)
        ref = jax.jit(g)(x)
        try:
            _close(f(x), ref)
            _close(mjcore.jit(f)(x), ref)
        except AssertionError as err:
            raise AssertionError(f"{name}: {err}") from err


def check_shard_map_output_sharding():
    for name, make, mshape, names, ispec, ospec, shape in CASES[:6]:
        f, _ = _both(make, mshape, names, ispec, ospec)
        out = f(_input(shape))
        assert isinstance(out.sharding, NamedSharding), name
        assert out.sharding.spec == ospec, (name, out.sharding.spec, ospec)
        assert tuple(out.sharding.mesh.axis_names) == names, name


def check_shard_map_grads():
    w_seed = 3
    for name, make, mshape, names, ispec, ospec, shape in CASES:
        if name in ("pmax", "pmin"):  # JAX has no derivative for them
            continue
        f, g = _both(make, mshape, names, ispec, ospec)
        x = _input(shape, 1)
        w = _input(jax.eval_shape(g, x).shape, w_seed)

        def loss(a, f=f, w=w):
            return np.sum(np.sin(f(np.cos(a))) * w)

        def jloss(a, g=g, w=w):
            return jnp.sum(jnp.sin(g(jnp.cos(a))) * w)

        try:
            try:
                # one compiled program: JAX's eager grad of a shard_map runs op by op
                ref = jax.jit(jax.grad(jloss))(x)
            except JaxIndivisibleError:
                # JAX 0.10's eager grad failed here ("axis_index": its output sharding of
                # the residuals; its jit does not): central differences where JAX fails.
                _check_fd(loss, x)
                continue
            _close(mjcore.grad(loss)(x), ref)
            _close(mjcore.jit(mjcore.grad(loss))(x), ref)
        except AssertionError as err:
            raise AssertionError(f"{name}: {err}") from err


def _check_fd(loss, x):
    d = _input(x.shape, 99)
    eps = 1e-6
    numeric = (float(loss(x + eps * d)) - float(loss(x - eps * d))) / (2 * eps)
    analytic = float(onp.sum(onp.asarray(mjcore.grad(loss)(x)) * d))
    onp.testing.assert_allclose(analytic, numeric, rtol=1e-6)


def check_shard_map_replicated_input_grad():
    """A replicated input's cotangent sums its copies; a replicated output's is shared."""
    m, jm = _meshes((4, 2), ("x", "y"))

    def body(L):
        return lambda w, a: (L.psum(a @ w, "x"), w * 2.0)

    f = mjcore.shard_map(body(lax), mesh=m, in_specs=(P(), P("x")), out_specs=(P(), P()))
    g = jax.shard_map(
        body(jax.lax), mesh=jm, in_specs=(JP(), JP("x")), out_specs=(JP(), JP()), check_vma=False
    )
    w, x = _input((3, 2), 4), _input((8, 3), 5)

    def loss(w, x):
        y, v = f(w, x)
        return np.sum(np.tanh(y)) + np.sum(v**2)

    def jloss(w, x):
        y, v = g(w, x)
        return jnp.sum(jnp.tanh(y)) + jnp.sum(v**2)

    for a, b in zip(
        mjcore.grad(loss, argnums=(0, 1))(w, x),
        jax.jit(jax.grad(jloss, argnums=(0, 1)))(w, x),  # one program, not op by op
        strict=True,
    ):
        _close(a, b)


def check_vmap_and_jvp_of_shard_map():
    f, g = _both(lambda L: lambda a: L.psum(a * a, "x"), (8,), ("x",), P("x"), P())
    xs = _input((5, 8, 3), 6)
    _close(mjcore.vmap(f)(xs), jax.vmap(g)(xs))
    _close(
        mjcore.vmap(f, in_axes=1, out_axes=1)(xs.transpose(1, 0, 2)),
        jax.vmap(g)(xs).transpose(1, 0, 2),
    )
    x, t = _input((8, 3), 7), _input((8, 3), 8)
    for a, b in zip(mjcore.jvp(f, (x,), (t,)), jax.jvp(g, (x,), (t,)), strict=True):
        _close(a, b)


def check_shard_map_pytrees_and_closure():
    m, jm = _meshes((8,), ("x",))
    c = _input((3,), 9)

    def body(L):
        return lambda d: {"s": L.psum(d["a"], "x") + c, "b": d["b"] * 2}

    f = mjcore.shard_map(body(lax), mesh=m, in_specs=({"a": P("x"), "b": P()},), out_specs=P())
    g = jax.shard_map(
        body(jax.lax),
        mesh=jm,
        in_specs=({"a": JP("x"), "b": JP()},),
        out_specs=JP(),
        check_vma=False,
    )
    d = {"a": _input((8, 3), 10), "b": _input((2,), 11)}
    out, ref = f(d), g(d)
    _close(out["s"], ref["s"])
    _close(out["b"], ref["b"])


def check_shard_map_lowered_text():
    m, _ = _meshes((8,), ("x",))
    f = mjcore.shard_map(lambda a: lax.psum(a, "x"), mesh=m, in_specs=P("x"), out_specs=P())
    text = mjcore.jit(f).lower(onp.ones((8, 2))).as_text()
    if mjcore.config.jax_use_shardy_partitioner:
        pieces = ("sdy.manual_computation", 'manual_axes = #sdy<manual_axes{"x"}>', "sdy.return")
    else:
        pieces = ("SPMDFullToShardShape", "SPMDShardToFullShape")
    for piece in (*pieces, "stablehlo.all_reduce"):
        assert piece in text, piece
    assert re.search(r"replica_groups = dense<\[\[0, 1, 2, 3, 4, 5, 6, 7\]\]>", text), text


def check_pmap():
    x = _input((8, 3), 12)
    f = mjcore.pmap(lambda v: v / lax.psum(v * v, "i"), axis_name="i")
    g = jax.pmap(lambda v: v / jax.lax.psum(v * v, "i"), axis_name="i")
    _close(f(x), g(x))
    # in_axes with None and 1, out_axes 1
    y = _input((3, 4), 13)
    c = _input((3,), 14)
    f2 = mjcore.pmap(
        lambda a, b: a * b + lax.axis_index("i"), axis_name="i", in_axes=(1, None), out_axes=1
    )
    g2 = jax.pmap(
        lambda a, b: a * b + jax.lax.axis_index("i"), axis_name="i", in_axes=(1, None), out_axes=1
    )
    _close(f2(y, c), g2(y, c))
    # pytrees and all_gather
    f3 = mjcore.pmap(lambda d: {"g": lax.all_gather(d["a"], "i")}, axis_name="i")
    g3 = jax.pmap(lambda d: {"g": jax.lax.all_gather(d["a"], "i")}, axis_name="i")
    d = {"a": _input((4, 2), 15)}
    _close(f3(d)["g"], g3(d)["g"])
    # out_axes=None: a value replicated over the devices
    f5 = mjcore.pmap(lambda v: (lax.psum(v, "i"), v), axis_name="i", out_axes=(None, 0))
    g5 = jax.pmap(lambda v: (jax.lax.psum(v, "i"), v), axis_name="i", out_axes=(None, 0))
    for a, b in zip(f5(x), g5(x), strict=True):
        _close(a, b)
    # devices=
    f4 = mjcore.pmap(lambda v: lax.psum(v, "i"), axis_name="i", devices=mjcore.devices()[4:])
    _close(f4(x[:4]), jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(x[:4]))


def check_pmap_grad_and_vmap():
    x, w = _input((8, 3), 16), _input((3,), 17)

    def loss(w, x):
        per = mjcore.pmap(lambda xi: lax.pmean(np.sum(np.tanh(xi * w)), "i"), axis_name="i")(x)
        return np.sum(per)

    def jloss(w, x):
        per = jax.pmap(lambda xi: jax.lax.pmean(jnp.sum(jnp.tanh(xi * w)), "i"), axis_name="i")(x)
        return jnp.sum(per)

    _close(mjcore.grad(loss)(w, x), jax.grad(jloss)(w, x))
    # grad inside pmap, gradients averaged across devices (data parallelism)
    step = mjcore.pmap(
        lambda xi: lax.pmean(mjcore.grad(lambda v: np.sum(np.sin(xi * v)))(w), "i"),
        axis_name="i",
    )
    jstep = jax.pmap(
        lambda xi: jax.lax.pmean(jax.grad(lambda v: jnp.sum(jnp.sin(xi * v)))(w), "i"),
        axis_name="i",
    )
    _close(step(x), jstep(x))
    # vmap of pmap, pmap of vmap with a named inner axis
    xs = _input((8, 2, 3), 18)
    _close(
        mjcore.vmap(mjcore.pmap(lambda v: lax.psum(v, "i"), axis_name="i"), in_axes=1)(xs),
        jax.vmap(jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i"), in_axes=1)(xs),
    )
    _close(
        mjcore.pmap(mjcore.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")(
            xs
        ),
        jax.pmap(jax.vmap(lambda v: jax.lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")(xs),
    )


def check_pmap_lays_out_mapped_arguments():
    """A data-parallel step called again on its own outputs: the host batch goes to each
    device as its block alone (not whole to every device), and one program serves every
    call, the first's host parameters and the later calls' replicated outputs alike."""
    from mjcore.backend import client

    w0, x, y = _input((3, 2), 22), _input((8, 5, 3), 23), _input((8, 5, 2), 24)

    def step(w, xi, yi, lax, xp):
        r = xi @ w - yi
        return w - 0.1 * lax.pmean(xi.T @ r, "i"), lax.pmean(xp.sum(r * r), "i")

    f = mjcore.pmap(
        lambda w, xi, yi: step(w, xi, yi, lax, np),
        axis_name="i",
        in_axes=(None, 0, 0),
        out_axes=(None, None),
    )
    g = jax.pmap(
        lambda w, xi, yi: step(w, xi, yi, jax.lax, jnp),
        axis_name="i",
        in_axes=(None, 0, 0),
        out_axes=(None, None),
    )
    texts = []
    client.compile_hooks.append(texts.append)
    try:
        w, jw = w0, w0
        for batch in (x, np.asarray(x), x):  # a host array, then a one-device Array
            (w, loss), (jw, jloss) = f(w, batch, y), g(jw, x, y)
            _close(w, jw)
            _close(loss, jloss)
    finally:
        client.compile_hooks.remove(texts.append)
    (text,) = [t for t in texts if "all_reduce" in t]
    if mjcore.config.jax_use_shardy_partitioner:
        args = re.findall(
            r"%arg\S+: tensor<[^>]*> \{sdy.sharding = #sdy.sharding<@mesh, ([^>]*)>", text
        )
        assert args[:1] == ["[{}, {}]"] and all(a.startswith('[{"i"}') for a in args[1:]), args
    else:
        args = re.findall(r"%arg\S+: tensor<[^>]*> \{mhlo.sharding = \"([^\"]*)\"", text)
        assert args[:1] == ["{replicated}"] and all("devices=[8" in a for a in args[1:]), args
    assert len(args) == 3, text


def check_one_device_mesh():
    x = _input((1, 3), 19)
    f = mjcore.pmap(lambda v: lax.psum(v, "i") * 2, axis_name="i")
    _close(f(x), jax.pmap(lambda v: jax.lax.psum(v, "i") * 2, axis_name="i")(x))


def check_data_parallel_example():
    """examples/data_parallel.py: 8 devices give the losses of one device, and it trains."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "examples" / "data_parallel.py"
    spec = importlib.util.spec_from_file_location("data_parallel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    eight = module.main(8, steps=3, verbose=False)
    one = module.main(1, steps=3, verbose=False)
    onp.testing.assert_allclose(eight, one, rtol=1e-12)
    assert one[2] < one[0]


def _raises(exc, pattern, fn, *args):
    try:
        fn(*args)
    except exc as err:
        assert re.search(pattern, str(err)), f"{pattern!r} not in {err}"
        return str(err)
    raise AssertionError(f"{fn} did not raise {exc.__name__}")


def check_bad_input():
    m, _ = _meshes((4, 2), ("x", "y"))
    f = mjcore.shard_map(lambda a: a, mesh=m, in_specs=P("z"), out_specs=P())
    _raises(ValueError, "axis 'z', which the mesh lacks", f, onp.ones(8))
    f = mjcore.shard_map(lambda a: a, mesh=m, in_specs=P("x"), out_specs=P("x"))
    msg = _raises(
        ValueError, r"dimension 0 of shape \(6, 2\) \(6\) is not divisible", f, onp.ones((6, 2))
    )
    assert "('x',)" in msg and "(4)" in msg
    f = mjcore.shard_map(lambda a: lax.psum(a, "q"), mesh=m, in_specs=P("x"), out_specs=P())
    _raises(NameError, "unbound axis name: 'q'", f, onp.ones(8))
    _raises(
        ValueError,
        "has size 9, but 8 devices",
        mjcore.pmap(lambda v: v, axis_name="i"),
        onp.ones((9, 2)),
    )


def main(names: list[str]) -> None:
    """Run the checks once per partitioner (results `check_x[shardy]`, `check_x[gspmd]`)."""
    results = {}
    checks = {n: f for n, f in globals().items() if n.startswith("check_")}
    for mode, on in (("shardy", True), ("gspmd", False)):
        mjcore.config.update("jax_use_shardy_partitioner", on)
        for name in names or list(checks):
            try:
                checks[name]()
                results[f"{name}[{mode}]"] = None
            except Exception:  # noqa: BLE001  (reported to the test process)
                results[f"{name}[{mode}]"] = traceback.format_exc()
    print("RESULTS " + json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1:])
